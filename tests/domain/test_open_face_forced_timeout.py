"""The operator's forced timeout at an open-face table (``ForceSeatTimeout``; docs/api.md,
"Operator commands"): the domain hands the seat's move to the service now, whether or not a
deadline runs -- the seat on turn placed for by the rule set's timeout policy, a Fantasyland hand
not set timed out, a committed one not opened timed out dead -- and refuses a seat that owes no
move; the audit re-decides it."""

from __future__ import annotations

import pytest
from open_face_deals import DrivenTable, export_lines, fantasyland_table, open_face_table

from sapsam.audit import verify_export
from sapsam.audit.report import Status
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.open_face.commands import PlaceForSeat
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.events import CardsPlaced, FantasylandRevealed, FantasylandTimedOut


def _refused(table: DrivenTable, command: object, reason: Reason) -> None:
    before = list(table.events)
    with pytest.raises(DomainError) as raised:
        table.run(command)
    assert raised.value.reason is reason, raised.value
    assert table.events == before


def _forced(seat: int, dealt: tuple[object, ...] = ()) -> PlaceForSeat:
    return PlaceForSeat(dealt, 1_000, True, forced_seat=seat)  # type: ignore[arg-type]


def test_the_seat_on_turn_is_placed_for_now_with_no_deadline_running() -> None:
    table = open_face_table("ofc_classic", 3)
    table.start_deal()
    table.run_street(now_ms=0)
    play = table.state.play
    assert play is not None and play.deadline_ms is None
    turn = play.turn
    assert turn is not None
    other = (turn + 1) % 3
    _refused(table, _forced(other), Reason.NOTHING_TIMED_OUT)
    _refused(table, _forced(7), Reason.UNKNOWN_SEAT)
    [placed] = table.run(_forced(turn, table.cards[0][turn]))
    assert isinstance(placed, CardsPlaced) and placed.seat == turn
    assert placed.automatic == "timeout"
    play = table.state.play
    assert play is not None and play.declared_dead[turn]  # 001: dead for the set
    table.play_deal()
    report = verify_export(export_lines(table.events))
    assert not [c for c in report.checks if c.status is Status.FAILED], report


def test_under_003_the_rest_of_the_hand_made_for_the_seat_verifies_with_no_deadline() -> None:
    # 003's policy: after the operator's timeout the rest of the hand is placed for the seat
    # (automatic "timeout", timed out by nobody); with no deadline running, the audit must
    # re-decide those moves as the rest of the hand, not as further operator timeouts.
    table = open_face_table("ofc_russian", 3)
    table.start_deal()
    table.run_street(now_ms=0)
    play = table.state.play
    assert play is not None and play.deadline_ms is None and play.turn is not None
    turn = play.turn
    table.run(_forced(turn, table.cards[0][turn]))
    table.play_deal()
    rest = [
        e
        for e in table.events
        if isinstance(e, CardsPlaced) and e.seat == turn and e.timed_out_by is None
    ]
    assert rest and all(e.automatic == "timeout" for e in rest)
    report = verify_export(export_lines(table.events))
    assert not [c for c in report.checks if c.status is Status.FAILED], report


def test_a_fantasyland_hand_is_timed_out_before_it_is_set_or_once_it_is_due() -> None:
    table = fantasyland_table("ofc_classic", 2)  # no move time: no deadline ever runs
    table.start_deal()
    table.run_street(now_ms=0)
    [timed_out] = table.run(_forced(0))
    assert timed_out == FantasylandTimedOut(deal_number=2, seat=0, timed_out_by="operator")
    _refused(table, _forced(0), Reason.NOTHING_TIMED_OUT)
    table.play_deal()
    report = verify_export(export_lines(table.events))
    assert not [c for c in report.checks if c.status is Status.FAILED], report


def test_a_committed_hand_is_timed_out_dead_only_once_the_reveals_are_due() -> None:
    table = fantasyland_table("ofc_classic", 2)
    table.start_deal()
    table.run_street(now_ms=0)
    table.commit(0)
    _refused(table, _forced(0), Reason.NOTHING_TIMED_OUT)  # the other seat still places
    while (play := table.state.play) is not None and play.phase is not OpenFacePhase.FANTASYLAND:
        if play.phase is OpenFacePhase.DEALING:
            table.run_street(now_ms=0)
        else:
            assert play.turn is not None
            street = play.streets_dealt - 1
            dealt = table.cards[street][play.turn]
            # Once timed out, the rest of its hand is placed for it (the service's own move).
            automatic = play.automatic[play.turn]
            table.run(PlaceForSeat(dealt, 0) if automatic else _forced(play.turn, dealt))
    [timed_out] = table.run(_forced(0))
    assert timed_out == FantasylandTimedOut(deal_number=2, seat=0, timed_out_by="operator")
    table.play_deal()
    [opened] = [e for e in table.events if isinstance(e, FantasylandRevealed)]
    assert isinstance(opened, FantasylandRevealed) and opened.dead and opened.nonce == ""
    report = verify_export(export_lines(table.events))
    assert not [c for c in report.checks if c.status is Status.FAILED], report

"""A committed Fantasyland hand cannot hold the table (docs/rules.md §8.7): once every hand is
placed and set, the committed hands are due to be opened within ``move_seconds``
(``FantasylandRevealsOpened``); one not opened by then is timed out and dead -- it cannot be
opened without its nonce -- as the closed game fouls a hand not revealed in time. The sweep
drives it, an outage extends it, and the audit re-decides it."""

from __future__ import annotations

import pytest
from open_face_deals import DrivenTable, export_lines, fantasyland_table

from sapsam.audit import read_export, verify_export
from sapsam.audit.replay import replay
from sapsam.audit.report import Status
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DeadlinesExtended, DealScored, Event
from sapsam.domain.open_face.commands import PlaceCards, PlaceForSeat, RevealFantasyland
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.events import (
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandRevealsOpened,
    FantasylandTimedOut,
)
from sapsam.domain.table_deadlines import SERVER_RESTART, UnservedWindow
from sapsam.rules.open_face.fantasyland_setting import biggest_row_first
from sapsam.rules.open_face.solver import solve_placement


def _player(table: DrivenTable, seat: int) -> str:
    player = table.state.seats[seat]
    assert player is not None
    return player


def _place_the_normal_hand(table: DrivenTable, now_ms: int) -> list[Event]:
    """Deal and place every street of the normal seat at ``now_ms``; the last move's events."""
    last: list[Event] = []
    while True:
        play = table.state.play
        assert play is not None
        if play.phase is OpenFacePhase.DEALING:
            table.run_street(now_ms)
        elif play.phase is OpenFacePhase.PLACING:
            seat = play.turn
            assert seat is not None
            street = play.streets_dealt - 1
            dealt = table.cards[street][seat]
            placement = solve_placement(
                play.rules, play.boards[seat], dealt, seed=street, rollouts=2
            ).placement
            last = table.run(
                PlaceCards(_player(table, seat), street, placement, dealt, now_ms=now_ms)
            )
        else:
            return last


def _committed_deal(preset: str = "ofc_classic") -> DrivenTable:
    """Deal 2, heads-up, 30 s a move: seat 0's Fantasyland hand committed at once, seat 1's
    hand placed at t = 5 s, so the reveals are due by 35 s."""
    table = fantasyland_table(preset, 2, move_seconds=30)
    table.start_deal()
    table.run_street(now_ms=1_000)
    table.commit(0)
    last = _place_the_normal_hand(table, 5_000)
    assert last[-1] == FantasylandRevealsOpened(deal_number=2, seats=(0,), deadline_ms=35_000)
    return table


def _refused(table: DrivenTable, command: object, reason: Reason) -> None:
    before = list(table.events)
    with pytest.raises(DomainError) as raised:
        table.run(command)
    assert raised.value.reason is reason, raised.value
    assert table.events == before


def test_the_last_placement_opens_the_reveals_and_an_opened_hand_scores() -> None:
    table = _committed_deal()
    play = table.state.play
    assert play is not None and play.reveal_deadline_ms == 35_000 == play.deadline_ms
    arrangement, _ = biggest_row_first(table.cards[0][0])
    table.run(RevealFantasyland(_player(table, 0), arrangement, table.nonces[0], table.cards[0][0]))
    _refused(table, PlaceForSeat((), 99_000, True), Reason.WRONG_PHASE)  # nothing left to time


def test_the_last_commitment_opens_the_reveals_when_the_other_hand_is_done() -> None:
    # Heads-up (001) the normal seat may finish first: the commitment then opens the reveals.
    table = fantasyland_table("ofc_classic", 2, move_seconds=30)
    table.start_deal()
    table.run_street(now_ms=1_000)
    assert not any(
        isinstance(e, FantasylandRevealsOpened) for e in _place_the_normal_hand(table, 2_000)
    )
    before = len(table.events)
    table.commit(0)
    committed, opened = table.events[before:]
    assert isinstance(committed, FantasylandCommitted)
    assert isinstance(opened, FantasylandRevealsOpened) and opened.seats == (0,)


@pytest.mark.parametrize(
    ("preset", "dead_for_set"), [("ofc_classic", True), ("ofc_russian", False)]
)
def test_a_committed_hand_never_opened_is_timed_out_and_dead(
    preset: str, dead_for_set: bool
) -> None:
    table = _committed_deal(preset)
    _refused(table, PlaceForSeat((), 34_999, True), Reason.NOTHING_TIMED_OUT)
    [timed_out] = table.run(PlaceForSeat((), 35_000, True))
    assert timed_out == FantasylandTimedOut(deal_number=2, seat=0, timed_out_by="service")
    arrangement, _ = biggest_row_first(table.cards[0][0])
    late = RevealFantasyland(_player(table, 0), arrangement, table.nonces[0], table.cards[0][0])
    _refused(table, late, Reason.WRONG_PHASE)  # the deal awaits only the seed now
    table.play_deal()  # the seed's reveal and the score
    [revealed] = [
        e for e in table.events if isinstance(e, FantasylandRevealed) and e.deal_number == 2
    ]
    assert isinstance(revealed, FantasylandRevealed) and revealed.nonce == "" and revealed.dead
    [scored] = [e for e in table.events if isinstance(e, DealScored) and e.deal_number == 2]
    assert isinstance(scored, DealScored) and scored.fouls[0]
    # Dead, it pays the other seat (6 and its royalties) unless that hand is dead too.
    assert scored.totals[0] < 0 or scored.fouls[1]
    assert table.state.dead_for_set[0] is dead_for_set
    assert table.state.next_fantasyland[0] is None  # a dead hand earns none
    report = verify_export(export_lines(table.events))
    assert not [c for c in report.checks if c.status is Status.FAILED], report


def test_an_outage_extends_the_reveal_deadline() -> None:
    table = _committed_deal()
    outage = UnservedWindow(20_000, 50_000, SERVER_RESTART)
    [extended] = table.run(PlaceForSeat((), 51_000, True, (outage,), 30_000))
    assert isinstance(extended, DeadlinesExtended)
    assert (extended.stage, extended.seats, extended.deadline_ms) == ("revealing", (0,), 80_000)
    _refused(table, PlaceForSeat((), 79_999, True, (outage,), 30_000), Reason.NOTHING_TIMED_OUT)
    [timed_out] = table.run(PlaceForSeat((), 80_000, True, (outage,), 30_000))
    assert isinstance(timed_out, FantasylandTimedOut)
    table.play_deal()
    report = verify_export(export_lines(table.events))
    assert not [c for c in report.checks if c.status is Status.FAILED], report


def test_the_audit_refuses_a_reveal_timeout_before_the_reveals_are_due() -> None:
    table = _committed_deal()
    table.run(PlaceForSeat((), 35_000, True))
    table.play_deal()
    committed = next(
        index
        for index, event in enumerate(table.events)
        if isinstance(event, FantasylandCommitted) and event.deal_number == 2
    )
    # The hand "timed out" right after it was committed, while the other seat still places.
    forged = list(table.events)
    forged.insert(committed + 1, FantasylandTimedOut(deal_number=2, seat=0))
    failed = [
        c.name for c in verify_export(export_lines(forged)).checks if c.status is Status.FAILED
    ]
    assert failed == ["fantasyland"]


def test_the_replay_tells_the_reveal_deadline_and_the_dead_hand() -> None:
    table = _committed_deal()
    table.run(PlaceForSeat((), 35_000, True))
    table.play_deal()
    frames = replay(read_export(export_lines(table.events)))
    [opened] = [f.happened for f in frames if f.event_type == "FantasylandRevealsOpened"]
    assert "seat 0 to open the Fantasyland hand by 1970-01-01T00:00:35Z" in opened
    [timed_out] = [f.happened for f in frames if f.event_type == "FantasylandTimedOut"]
    assert "did not open its Fantasyland hand by the reveal deadline: the hand is dead" in timed_out

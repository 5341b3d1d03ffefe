"""Who timed a seat out (issue #18): a timeout's events name it (``CardsPlaced.timed_out_by``,
schema 3; ``FantasylandTimedOut.timed_out_by``, schema 2): ``service`` for the deadline sweep,
``operator`` for ``ForceSeatTimeout``. The audit re-decides each as what it names: the sweep's
only past a deadline that ran (so a forced timeout passed off as the sweep's, at a table without
a deadline, fails), the operator's at any time; an unknown name fails. Records of before (no
name: CardsPlaced 2, FantasylandTimedOut 1) still verify, checked as they were."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from open_face_deals import DrivenTable, export_lines, fantasyland_table, open_face_table

from sapsam.audit import verify_export
from sapsam.audit.report import Status
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import Event
from sapsam.domain.open_face.commands import PlaceForSeat, TimeOutDiscards
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.events import CardsPlaced, DiscardsRevealed, FantasylandTimedOut

TimedOut = CardsPlaced | FantasylandTimedOut | DiscardsRevealed


def _failed(events: list[Event], **encoding: Any) -> list[str]:
    report = verify_export(export_lines(events, **encoding))
    return [check.name for check in report.checks if check.status is Status.FAILED]


def _timeouts(events: list[Event]) -> list[int]:
    return [
        index
        for index, event in enumerate(events)
        if isinstance(event, TimedOut) and event.timed_out_by is not None
    ]


def _relabelled(events: list[Event], by: str | None) -> list[Event]:
    return [
        dataclasses.replace(event, timed_out_by=by)  # type: ignore[arg-type]
        if isinstance(event, TimedOut) and event.timed_out_by is not None
        else event
        for event in events
    ]


def _as_before(event: Event) -> tuple[str, int, dict[str, Any]]:
    """The event as recorded before timeouts named who made them."""
    type_name, schema, data = DEFAULT_CODEC.encode(event)
    if isinstance(event, TimedOut):
        data = {key: value for key, value in data.items() if key != "timed_out_by"}
        schema -= 1
    return type_name, schema, data


def _swept() -> DrivenTable:
    """A 2-seat classic deal with 30 s a move in which seat 1 lets its first move time out."""
    table = open_face_table("ofc_classic", 2, move_seconds=30)
    table.start_deal()
    table.play_deal(late={1})
    return table


def _forced() -> DrivenTable:
    """A deal at a table without a move limit in which the operator times the seat on turn out."""
    table = open_face_table("ofc_classic", 2)
    table.start_deal()
    table.run_street(now_ms=0)
    play = table.state.play
    assert play is not None and play.turn is not None and play.deadline_ms is None
    table.run(PlaceForSeat(table.cards[0][play.turn], 5_000, True, forced_seat=play.turn))
    table.play_deal()
    return table


def test_the_sweeps_timeout_names_the_service_and_verifies() -> None:
    events = _swept().events
    [index] = _timeouts(events)
    placed = events[index]
    assert isinstance(placed, CardsPlaced) and placed.automatic == "timeout"
    assert placed.timed_out_by == "service"
    # The later moves made for the timed-out hand are the service's own, not a timeout.
    later = [e for e in events[index + 1 :] if isinstance(e, CardsPlaced) and e.seat == 1]
    assert later and all(e.automatic and e.timed_out_by is None for e in later)
    assert _failed(events) == []


def test_the_operators_timeout_names_the_operator_and_cannot_pass_for_the_sweeps() -> None:
    events = _forced().events
    [index] = _timeouts(events)
    placed = events[index]
    assert isinstance(placed, CardsPlaced) and placed.timed_out_by == "operator"
    assert _failed(events) == []
    # No deadline ran: the sweep could not have timed the seat out.
    assert _failed(_relabelled(events, "service")) == ["placements"]


def test_a_timeout_by_nobody_known_fails() -> None:
    for events, check in ((_swept().events, "placements"), (_forced().events, "placements")):
        assert _failed(_relabelled(events, "mallory")) == [check]


def test_a_fantasyland_timeout_names_its_maker() -> None:
    # The sweep's, past the first street's deadline (30 s a move).
    swept = fantasyland_table("ofc_classic", 2, move_seconds=30)
    swept.start_deal()
    swept.play_deal(late={0})
    [timed_out] = [e for e in swept.events if isinstance(e, FantasylandTimedOut)]
    assert timed_out.timed_out_by == "service"
    assert _failed(swept.events) == []
    # The operator's, at a table where no deadline runs; passed off as the sweep's, it fails.
    forced = fantasyland_table("ofc_classic", 2)
    forced.start_deal()
    forced.run_street(now_ms=0)
    forced.run(PlaceForSeat((), 1_000, True, forced_seat=0))
    forced.play_deal()
    [timed_out] = [e for e in forced.events if isinstance(e, FantasylandTimedOut)]
    assert timed_out.timed_out_by == "operator"
    assert _failed(forced.events) == []
    assert _failed(_relabelled(forced.events, "service")) == ["fantasyland"]
    assert _failed(_relabelled(forced.events, "mallory")) == ["fantasyland"]


def test_pineapple_discards_opened_by_the_service_name_who_had_them_opened() -> None:
    # The sweep's, past the discards' deadline (30 s a move).
    swept = open_face_table("pineapple", 2, move_seconds=30)
    swept.unopened = {1}
    swept.start_deal()
    swept.play_deal()
    [opened] = [e for e in swept.events if isinstance(e, DiscardsRevealed) and e.seat == 1]
    assert opened.timed_out_by == "service" and set(opened.nonces) == {""}
    own = [e for e in swept.events if isinstance(e, DiscardsRevealed) and e.seat == 0]
    assert own and all(e.timed_out_by is None for e in own)
    assert _failed(swept.events) == []
    assert _failed(_relabelled(swept.events, "mallory")) == ["discards"]
    # The operator's, at a table where no deadline runs; passed off as the sweep's, it fails.
    forced = open_face_table("pineapple", 2)
    forced.start_deal()
    while (play := forced.state.play) is not None and play.phase is not OpenFacePhase.DISCARDS:
        if play.phase is OpenFacePhase.DEALING:
            forced.run_street(now_ms=0)
        else:
            assert play.turn is not None
            street = play.streets_dealt - 1
            player = forced.state.seats[play.turn]
            assert player is not None
            dealt = forced.cards[street][play.turn]
            forced.run(forced.discards.place(play, player, street, dealt, now_ms=0))
    dealt_to_1 = tuple(street[1] for street in forced.cards)
    [opened] = forced.run(TimeOutDiscards(1, dealt_to_1, 5, forced=True))
    assert isinstance(opened, DiscardsRevealed) and opened.timed_out_by == "operator"
    forced.play_deal()
    assert _failed(forced.events) == []
    assert _failed(_relabelled(forced.events, "service")) == ["discards"]
    assert _failed(forced.events, encode=_as_before) == []


def test_records_from_before_the_name_still_verify() -> None:
    """CardsPlaced of schema 2 and FantasylandTimedOut of schema 1 (no ``timed_out_by``) read
    back with it None and verify as they did, the sweep's and the operator's alike."""
    fantasyland = fantasyland_table("ofc_classic", 2)
    fantasyland.start_deal()
    fantasyland.run_street(now_ms=0)
    fantasyland.run(PlaceForSeat((), 1_000, True, forced_seat=0))
    fantasyland.play_deal()
    for table in (_swept(), _forced(), fantasyland):
        records = [json.loads(line) for line in export_lines(table.events, encode=_as_before)]
        placed = [r for r in records if r.get("type") == "CardsPlaced"]
        assert placed and all(
            r["schema_version"] == 2 and "timed_out_by" not in r["data"] for r in placed
        )
        assert _failed(table.events, encode=_as_before) == []

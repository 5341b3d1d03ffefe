"""An outage is never held against an open-face seat (docs/events.md, "Deadlines across
outages"): a placement's or a Fantasyland hand's deadline that fell while no server served, or
within the grace after, is extended (``DeadlinesExtended``) instead of timed out; the audit
re-decides the extension and accepts the timeout only at the extended deadline."""

from __future__ import annotations

import dataclasses

import pytest
from open_face_deals import export_lines, fantasyland_table, new_deal

from sapsam.audit import verify_export
from sapsam.audit.report import Status
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DeadlinesExtended
from sapsam.domain.open_face.commands import PlaceForSeat, TimeOutFantasyland
from sapsam.domain.open_face.events import CardsPlaced, FantasylandTimedOut
from sapsam.domain.table_deadlines import DATABASE_OUTAGE, SERVER_RESTART, UnservedWindow
from sapsam.rules.open_face.presets import open_face_preset

CLASSIC = open_face_preset("ofc_classic")
GRACE = 30_000


def test_a_placement_deadline_that_fell_in_an_outage_is_extended_not_timed_out() -> None:
    played = new_deal(CLASSIC, 2, move_seconds=30)
    played.deal_street(now_ms=1_000)  # seat 1 places by 31 s
    assert played.deal.deadline_set_ms == 1_000
    dealt = played.street_cards(0, 1)
    outage = UnservedWindow(20_000, 40_000, SERVER_RESTART)
    [extended] = played.run(PlaceForSeat(dealt, 41_000, True, (outage,), GRACE))
    assert extended == DeadlinesExtended(
        deal_number=1,
        stage="placing",
        seats=(1,),
        previous_deadline_ms=31_000,
        deadline_ms=70_000,
        reason=SERVER_RESTART,
        unserved_from_ms=20_000,
        unserved_until_ms=40_000,
    )
    assert played.deal.deadline_ms == 70_000 and played.deal.deadline_set_ms == 40_000
    # The seat may still place itself in the grace; a sweep before the new deadline times
    # nobody out, and one at it enforces it (the extended deadline lies outside the window).
    with pytest.raises(DomainError) as early:
        played.run(PlaceForSeat(dealt, 69_999, True, (outage,), GRACE))
    assert early.value.reason is Reason.NOTHING_TIMED_OUT
    [placed] = played.run(PlaceForSeat(dealt, 70_000, True, (outage,), GRACE))
    assert isinstance(placed, CardsPlaced) and placed.automatic == "timeout"


def test_a_deadline_set_after_the_outage_or_swept_after_the_grace_is_enforced() -> None:
    played = new_deal(CLASSIC, 2, move_seconds=30)
    played.deal_street(now_ms=50_000)  # set after the outage ended
    dealt = played.street_cards(0, 1)
    outage = UnservedWindow(20_000, 40_000, DATABASE_OUTAGE)
    [placed] = played.run(PlaceForSeat(dealt, 80_000, True, (outage,), GRACE))
    assert isinstance(placed, CardsPlaced) and placed.automatic == "timeout"
    late = new_deal(CLASSIC, 2, move_seconds=30)
    late.deal_street(now_ms=1_000)
    # A sweep that comes after the grace found the seat with its time served.
    [placed] = late.run(PlaceForSeat(late.street_cards(0, 1), 70_000, True, (outage,), GRACE))
    assert isinstance(placed, CardsPlaced) and placed.automatic == "timeout"


def test_a_fantasyland_hands_deadline_that_fell_in_an_outage_is_extended() -> None:
    played = new_deal(CLASSIC, 2, dealer=1, fantasyland=(13, None), move_seconds=30)
    played.deal_street(now_ms=1_000)  # seat 0's Fantasyland hand and seat 1's placement: 31 s
    outage = UnservedWindow(10_000, 45_000, SERVER_RESTART)
    dealt = played.street_cards(0, 1)
    extended = played.run(PlaceForSeat(dealt, 46_000, True, (outage,), GRACE))
    assert [(event.stage, event.seats) for event in extended] == [  # type: ignore[attr-defined]
        ("fantasyland", (0,)),
        ("placing", (1,)),
    ]
    assert played.deal.fantasyland_deadline_ms == 75_000 == played.deal.deadline_ms
    # Neither the sweep nor the operator's TimeOutFantasyland times the hand out before it.
    for early in (
        PlaceForSeat(dealt, 74_999, True, (outage,), GRACE),
        TimeOutFantasyland(0, 74_999),
    ):
        with pytest.raises(DomainError) as refused:
            played.run(early)
        assert refused.value.reason is Reason.NOTHING_TIMED_OUT
    [timed_out] = played.run(PlaceForSeat(dealt, 75_000, True, (outage,), GRACE))
    assert timed_out == FantasylandTimedOut(deal_number=1, seat=0, timed_out_by="service")


def test_the_audit_re_decides_the_extension_and_the_timeout_after_it() -> None:
    table = fantasyland_table("ofc_classic", 2, move_seconds=30)
    table.start_deal()
    table.run_street(now_ms=1_000)
    play = table.state.play
    assert play is not None and play.turn == 1
    outage = UnservedWindow(10_000, 45_000, SERVER_RESTART)
    dealt = table.cards[0][1]
    table.run(PlaceForSeat(dealt, 46_000, True, (outage,), GRACE))
    assert isinstance(table.events[-1], DeadlinesExtended)
    table.run(PlaceForSeat(dealt, 75_000, True))  # the Fantasyland hand, then the seat
    table.run(PlaceForSeat(dealt, 75_000, True))
    table.play_deal()
    report = verify_export(export_lines(table.events))
    assert not [c for c in report.checks if c.status is Status.FAILED], report
    # A forged extension (a seat not due, a deadline it never had, or a reason that is not an
    # outage's) fails the placements.
    for forgery in (
        {"seats": (0, 1)},
        {"previous_deadline_ms": 30_000},
        {"reason": "operator_request"},
    ):
        forged = [
            dataclasses.replace(event, **forgery)  # type: ignore[arg-type]
            if isinstance(event, DeadlinesExtended) and event.stage == "placing"
            else event
            for event in table.events
        ]
        failed = [
            c.name for c in verify_export(export_lines(forged)).checks if c.status is Status.FAILED
        ]
        assert failed == ["placements"], forgery

"""A deadline that expired while no server served is extended, as an event, not enforced."""

from __future__ import annotations

import dataclasses

from test_table import NONCE, ready_table

from sapsam.domain.commands import ConfirmArrangement, RevealArrangement, TimeOutSeats
from sapsam.domain.errors import Reason
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import DeadlinesExtended, SeatTimedOut
from sapsam.domain.table import INITIAL_STATE, TablePhase, fold
from sapsam.domain.table_deadlines import DATABASE_OUTAGE, SERVER_RESTART, UnservedWindow
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.solver import solve

RULES = dataclasses.replace(DEFAULT_RULE_SET, arrange_seconds=60, reveal_seconds=30)
GRACE = 30_000


def arranging_table():  # type: ignore[no-untyped-def]
    """Two seats dealt at t=1 s (arranging deadline 61 s); ann confirmed, bob did not."""
    table = ready_table(2, RULES)
    table.start_deal()
    table.cut(9, 1_000)
    hands = table.hands()
    table.commit(0, solve(hands[0]))
    table.run(ConfirmArrangement(player_id="ann", now_ms=2_000))
    return table


def test_a_deadline_inside_an_outage_is_extended_to_the_grace_after_it() -> None:
    table = arranging_table()
    outage = UnservedWindow(start_ms=50_000, end_ms=80_000, reason=SERVER_RESTART)
    (extended,) = table.run(TimeOutSeats(now_ms=80_500, unserved=(outage,), grace_ms=GRACE))
    assert extended == DeadlinesExtended(
        deal_number=1,
        stage="arranging",
        seats=(1,),
        previous_deadline_ms=61_000,
        deadline_ms=110_000,
        reason=SERVER_RESTART,
        unserved_from_ms=50_000,
        unserved_until_ms=80_000,
    )
    deal = table.state.deal
    assert deal is not None and deal.arrange_deadline_ms == 110_000
    assert table.state.phase is TablePhase.ARRANGING
    # Nothing more until the new deadline; then the seat times out as usual, even though the
    # same window is still passed along.
    table.refused(
        TimeOutSeats(now_ms=109_999, unserved=(outage,), grace_ms=GRACE), Reason.NOTHING_TIMED_OUT
    )
    events = table.run(TimeOutSeats(now_ms=110_000, unserved=(outage,), grace_ms=GRACE))
    assert [(e.seat, e.stage) for e in events if isinstance(e, SeatTimedOut)] == [(1, "arranging")]
    # The extension replays: the codec and evolve agree with decide's state.
    decoded = [DEFAULT_CODEC.decode(*DEFAULT_CODEC.encode(event)) for event in table.events]
    assert fold(decoded, INITIAL_STATE) == table.state


def test_a_deadline_within_the_grace_after_serving_resumed_is_extended() -> None:
    table = arranging_table()
    outage = UnservedWindow(start_ms=20_000, end_ms=45_000, reason=DATABASE_OUTAGE)
    (extended,) = table.run(TimeOutSeats(now_ms=61_000, unserved=(outage,), grace_ms=GRACE))
    assert isinstance(extended, DeadlinesExtended)
    assert (extended.deadline_ms, extended.reason) == (75_000, DATABASE_OUTAGE)


def test_deadlines_outside_any_window_are_enforced() -> None:
    # Before the outage began, after its grace, or set after serving resumed: timed out.
    for window, now in (
        (UnservedWindow(62_000, 90_000), 95_000),  # expired while still served
        (UnservedWindow(10_000, 20_000), 61_000),  # the grace ended at 50 s
        (UnservedWindow(50_000, 70_000), 100_001),  # the sweep came after the grace: served it
        (UnservedWindow(0, 500), 61_000),  # dealt (at 1 s) after serving resumed
    ):
        table = arranging_table()
        events = table.run(TimeOutSeats(now_ms=now, unserved=(window,), grace_ms=GRACE))
        assert any(isinstance(event, SeatTimedOut) for event in events), window


def test_a_reveal_deadline_is_extended_for_the_seats_still_to_reveal() -> None:
    table = ready_table(3, RULES)
    table.start_deal()
    table.cut(9, 0)
    hands = table.hands()
    chosen = [solve(hand) for hand in hands]
    for seat, player in enumerate(("ann", "bob", "cid")):
        table.commit(seat, chosen[seat])
        table.run(ConfirmArrangement(player_id=player, now_ms=10_000))
    table.run(
        RevealArrangement(player_id="ann", arrangement=chosen[0], nonce=NONCE, dealt=hands[0])
    )
    outage = UnservedWindow(30_000, 46_000)
    (extended,) = table.run(TimeOutSeats(now_ms=46_100, unserved=(outage,), grace_ms=GRACE))
    assert isinstance(extended, DeadlinesExtended)
    assert (extended.stage, extended.seats, extended.previous_deadline_ms) == (
        "revealing",
        (1, 2),
        40_000,
    )
    deal = table.state.deal
    assert deal is not None and deal.reveal_deadline_ms == 76_000


def test_a_pause_gives_back_the_time_a_deadline_ran_through_it_and_an_outage_does_not() -> None:
    from sapsam.domain.table_deadlines import TOURNAMENT_PAUSED, extended_deadline

    pause = UnservedWindow(10_000, 40_000, TOURNAMENT_PAUSED)
    outage = UnservedWindow(10_000, 40_000, SERVER_RESTART)
    # Set before the pause, due after the resume's grace: 30 s of pause given back.
    assert extended_deadline(90_000, 0, pause, GRACE) == 120_000
    # Due in the pause: the 50 s it had left when the pause began, after the resume.
    assert extended_deadline(60_000, 0, pause, GRACE) == 90_000
    # Set in the pause (a new stage begun while paused): its whole span after the resume.
    assert extended_deadline(50_000, 20_000, pause, GRACE) == 70_000
    # Never sooner than the grace after the resume.
    assert extended_deadline(11_000, 0, pause, GRACE) == 70_000
    # An outage moves a deadline to its end plus the grace, as before.
    assert extended_deadline(60_000, 0, outage, GRACE) == 70_000

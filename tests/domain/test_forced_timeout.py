"""The operator's forced timeout: one seat now, with the events its deadline would record."""

from __future__ import annotations

import dataclasses

from test_table import NONCE, ready_table

from sapsam.domain.commands import ConfirmArrangement, RevealArrangement, RevealSeed, TimeOutSeats
from sapsam.domain.errors import Reason
from sapsam.domain.events import DealScored, RevealsOpened, SeatTimedOut
from sapsam.domain.table import TablePhase
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.ruleset import TimeoutPolicy
from sapsam.rules.solver import solve


def forced(seat: int, now_ms: int = 5_000) -> TimeOutSeats:
    return TimeOutSeats(now_ms=now_ms, forced_seat=seat)


def test_a_forced_arranging_timeout_leaves_the_others_arranging() -> None:
    table = ready_table(3)
    table.start_deal()
    table.cut(9, 0)
    # Long before the 90 s deadline: the seat times out, the others still arrange.
    (timed_out,) = table.run(forced(1))
    assert timed_out == SeatTimedOut(
        deal_number=1, seat=1, stage="arranging", consequence=TimeoutPolicy.FOUL.value
    )
    assert table.state.phase is TablePhase.ARRANGING
    table.refused(forced(1), Reason.NOTHING_TIMED_OUT)
    hands = table.hands()
    arrangements = [solve(hand) for hand in hands]
    table.commit(0, arrangements[0])
    table.run(ConfirmArrangement(player_id="ann", now_ms=6_000))
    table.refused(forced(0), Reason.NOTHING_TIMED_OUT)  # confirmed: not awaited
    # The last seat arranging, forced out: the reveals open, as after the deadline.
    events = table.run(forced(2, now_ms=7_000))
    assert [type(event) for event in events] == [SeatTimedOut, RevealsOpened]
    opened = events[1]
    assert isinstance(opened, RevealsOpened) and opened.reveal_deadline_ms == 37_000
    assert table.state.phase is TablePhase.REVEALING
    table.run(
        RevealArrangement(player_id="ann", arrangement=arrangements[0], nonce=NONCE, dealt=hands[0])
    )
    scored = next(e for e in table.run(RevealSeed(seed=table.seed)) if isinstance(e, DealScored))
    assert scored.fouls == (False, True, True)


def test_a_forced_reveal_timeout_is_a_foul() -> None:
    table = ready_table(2)
    table.start_deal()
    table.cut(9, 0)
    hands = table.hands()
    arrangements = [solve(hand) for hand in hands]
    for seat, player in enumerate(("ann", "bob")):
        table.commit(seat, arrangements[seat])
        table.run(ConfirmArrangement(player_id=player, now_ms=1_000))
    table.run(
        RevealArrangement(player_id="ann", arrangement=arrangements[0], nonce=NONCE, dealt=hands[0])
    )
    table.refused(forced(0), Reason.NOTHING_TIMED_OUT)  # already revealed
    (timed_out,) = table.run(forced(1))
    assert (timed_out.seat, timed_out.stage, timed_out.consequence) == (1, "revealing", "foul")
    assert table.state.phase is TablePhase.AWAITING_SEED


def test_refusals_change_nothing() -> None:
    table = ready_table(2)
    table.refused(forced(0), Reason.WRONG_PHASE)  # between deals
    table.start_deal()
    table.refused(forced(0), Reason.WRONG_PHASE)  # awaiting the cut
    table.cut(9, 0)
    table.refused(forced(2), Reason.UNKNOWN_SEAT)
    table.refused(forced(-1), Reason.UNKNOWN_SEAT)


def test_a_table_without_deadlines_can_still_be_forced_on() -> None:
    no_deadlines = dataclasses.replace(DEFAULT_RULE_SET, arrange_seconds=None, reveal_seconds=None)
    table = ready_table(2, no_deadlines)
    table.start_deal()
    table.cut(9, 0)
    table.refused(TimeOutSeats(now_ms=10**15), Reason.NOTHING_TIMED_OUT)
    table.run(forced(0))
    events = table.run(forced(1))
    assert isinstance(events[-1], RevealsOpened) and events[-1].reveal_deadline_ms is None
    assert table.state.phase is TablePhase.AWAITING_SEED

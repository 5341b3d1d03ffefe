"""Voiding a deal in progress: unscored, its seed published in the voiding event, the next deal
may start, and a voided deal does not count towards the series."""

from __future__ import annotations

import dataclasses

from test_table import ready_table

from sapsam import fairness
from sapsam.domain.commands import ConfirmArrangement, VoidDeal
from sapsam.domain.errors import Reason
from sapsam.domain.events import DealScored, DealVoided, SeriesCompleted
from sapsam.domain.table import TablePhase
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.solver import solve


def test_a_voided_deal_publishes_its_seed_and_scores_nothing() -> None:
    table = ready_table(2)
    table.start_deal()
    table.cut(9, 0)
    hands = table.hands()
    table.commit(0, solve(hands[0]))
    table.run(ConfirmArrangement(player_id="ann", now_ms=1))
    totals = table.state.series_totals
    (voided,) = table.run(VoidDeal(reason="a player's client crashed", seed=table.seed))
    assert voided == DealVoided(
        deal_number=1, reason="a player's client crashed", seed=table.seed.hex()
    )
    assert table.state.phase is TablePhase.BETWEEN_DEALS
    assert table.state.series_totals == totals and table.state.deals_scored == 0
    # The next deal takes the next number and the next dealer, as after any deal.
    dealer = table.state.deal.dealer if table.state.deal else None
    table.start_deal()
    deal = table.state.deal
    assert deal is not None and deal.number == 2
    assert deal.dealer == fairness.left_of(dealer or 0, 2)


def test_refusals_change_nothing() -> None:
    table = ready_table(2)
    table.refused(VoidDeal(reason="why", seed=b"\0" * 32), Reason.WRONG_PHASE)
    table.start_deal()
    table.refused(VoidDeal(reason="", seed=table.seed), Reason.INVALID_ARGUMENT)
    table.refused(VoidDeal(reason="x" * 201, seed=table.seed), Reason.INVALID_ARGUMENT)
    table.refused(VoidDeal(reason="a\nb", seed=table.seed), Reason.INVALID_ARGUMENT)
    table.refused(VoidDeal(reason="why", seed=b"\7" * 32), Reason.SEED_MISMATCH)
    table.refused(VoidDeal(reason="why", seed=table.seed, deal_number=2), Reason.WRONG_DEAL)
    # Voided before the cut: allowed, the seed still matches its commitment.
    table.run(VoidDeal(reason="why", seed=table.seed, deal_number=1))
    table.refused(VoidDeal(reason="again", seed=table.seed), Reason.WRONG_PHASE)


def test_a_voided_deal_does_not_count_towards_the_series() -> None:
    rules = dataclasses.replace(DEFAULT_RULE_SET, series_length=2)
    table = ready_table(2, rules)
    table.play_deal()
    table.start_deal()
    table.run(VoidDeal(reason="dispute", seed=table.seed))
    assert table.state.phase is TablePhase.BETWEEN_DEALS
    # Deal 3 is the series' second deal that counts: the series completes after it.
    events = table.play_deal()
    scored = next(event for event in events if isinstance(event, DealScored))
    assert scored.deal_number == 3
    completed = next(event for event in events if isinstance(event, SeriesCompleted))
    assert completed.deals_played == 2
    assert table.state.phase is TablePhase.SERIES_COMPLETE

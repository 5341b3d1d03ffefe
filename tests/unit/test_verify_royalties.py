"""The offline verifier rescores a deal under its recorded rule set's royalties (rules version 4):
scores recorded without the royalty the rules pay, or with another amount, fail the scores check
and nothing else."""

from __future__ import annotations

import dataclasses

import pytest

from sapsam.fairness.example_deals import example_published_deal
from sapsam.fairness.vectors import DEAL_INPUTS
from sapsam.fairness.verify import verify_deal
from sapsam.rules.presets import PRESETS
from sapsam.rules.royalties import RoyaltyPayment
from sapsam.rules.ruleset import FIELD_SINCE_VERSION, RuleSet

ROYALTIES = PRESETS["four_player_royalties"]
# Seat 0 sets four fives in the back (a royalty of 4 under 004's table) and wins it from everyone.
INPUTS = next(i for i in DEAL_INPUTS if i["name"].startswith("four seats, seats 0 and 3"))


@pytest.mark.parametrize(
    "recorded_under",
    [
        ROYALTIES.with_changes(royalties=RoyaltyPayment.NONE),
        ROYALTIES.with_changes(royalty_back_four_of_a_kind=1),
        PRESETS["four_player"],  # rules version 4 without royalties
        RuleSet.from_dict(
            {
                **{
                    key: value
                    for key, value in PRESETS["four_player"].to_dict().items()
                    if FIELD_SINCE_VERSION.get(key, 1) <= 3
                },
                "rules_version": 3,
            }
        ),
    ],
    ids=["no royalties", "another amount", "four_player", "version 3"],
)
def test_scores_recorded_under_other_royalties_fail(recorded_under: RuleSet) -> None:
    honest = example_published_deal(INPUTS, ROYALTIES)
    assert verify_deal(honest).ok
    assert honest.recorded_scores.totals[0] > 0
    # The deal as an honest server of the other rule set recorded it, claiming the royalties'.
    other = example_published_deal(INPUTS, recorded_under)
    assert other.recorded_scores != honest.recorded_scores
    report = verify_deal(dataclasses.replace(honest, recorded_scores=other.recorded_scores))
    assert [check.name for check in report.checks if not check.passed] == ["scores"]
    # And the other rule set's own record still verifies under it.
    assert verify_deal(other).ok

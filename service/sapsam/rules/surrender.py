"""Surrender (source 002; docs/rules.md §2.8): what a surrendered hand pays. Pure. The order of
the announcements, a matter of seats, is ``sapsam.domain.table_surrender.announcing_order``; that
module plays the announcements, and the audit (``sapsam.audit.surrender_checks``) checks them with
these same functions.

Source 002, line 3: "După ce toți jucătorii și-au pus mâinile, fiecare jucător va anunța la rândul
său (în sensul acelor de ceasornic, pornind de la stânga dealerului), indiferent dacă își joacă sau
nu mâna" -- after every player has set their hand, each player in turn (clockwise, starting from
the dealer's left) announces whether they play their hand. The source says no more: the price,
whom it is paid to and what a silent player does are sapsam's choices, each a parameter or a
documented default (docs/rules.md §2.8):

- a pair of seats where neither surrendered settles as the rule set scores any pair;
- a seat that surrendered pays ``surrender_price`` units (times the pair's unit value,
  ``RuleSet.unit_between``) to each seat that plays, instead of comparing rows with it: no rows,
  majority, scoop or royalty change hands in that pair. Under ``pay_legal_hands`` a seat playing
  a fouled hand collects nothing from it;
- two seats that both surrendered settle nothing between them (had each paid the other, the
  payments would cancel);
- so when all but one seat surrender, that seat collects the price from each of the others and
  compares rows with nobody; when all surrender, nothing changes hands.

Every pair's payment is antisymmetric, so a deal stays zero-sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sapsam.rules.arrangement import ArrangementCheck
from sapsam.rules.naturals import NaturalHand, natural_settlement
from sapsam.rules.ruleset import RuleSet, SurrenderRule
from sapsam.rules.scoring import INT64_MAX, DealScore, PairResult, ScoreOverflowError, score_deal

NO_ROWS: Final = (0, 0, 0)
"""A pair settled by a surrender compares no rows: its rows are recorded as three ties."""

TIMEOUT_DEFAULT_SURRENDERS: Final = False
"""What a seat that lets its announcing deadline pass does: it plays. Source 002 names no default;
playing keeps the hand it confirmed, as if the announcement had never been asked for."""


def surrender_pair_units(
    rule_set: RuleSet,
    surrendered_a: bool,
    surrendered_b: bool,
    foul_a: bool,
    foul_b: bool,
) -> int:
    """What the first seat gains, in units, in a pair where at least one seat surrendered."""
    if surrendered_a == surrendered_b:
        return 0  # both surrendered: nothing changes hands
    payer_is_a = surrendered_a
    player_fouled = foul_b if payer_is_a else foul_a
    if rule_set.surrender is SurrenderRule.PAY_LEGAL_HANDS and player_fouled:
        return 0
    price = rule_set.surrender_price
    return -price if payer_is_a else price


def score_with_surrender(
    rule_set: RuleSet,
    checks: Sequence[ArrangementCheck],
    surrendered: Sequence[bool],
    naturals: Sequence[NaturalHand | None] | None = None,
) -> DealScore:
    """Score a deal where seat ``i`` played ``checks[i]`` (or holds the declared natural
    ``naturals[i]``) and ``surrendered[i]`` says whether it surrendered. A pair with a
    surrendered seat settles by :func:`surrender_pair_units` (rows :data:`NO_ROWS`), unless a
    natural settles it: 002 pays a natural "înainte de a se preda oricine", before anyone
    surrenders (docs/rules.md §2.8). Every other pair as :func:`sapsam.rules.scoring.score_deal`
    scores it. With nobody surrendered this is exactly ``score_deal``."""
    if len(surrendered) != len(checks):
        raise ValueError(f"{len(checks)} seats but {len(surrendered)} announcements")
    played = score_deal(rule_set, checks, naturals)
    if not any(surrendered):
        return played
    if rule_set.surrender is SurrenderRule.OFF:
        raise ValueError("a seat surrendered under a rule set without surrender")
    totals = [0] * len(checks)
    pairs: list[PairResult] = []
    for pair in played.pairs:
        a, b = pair.seat_a, pair.seat_b
        by_natural = naturals is not None and (
            natural_settlement(rule_set, naturals[a], naturals[b]) is not None
        )
        if (surrendered[a] or surrendered[b]) and not by_natural:
            units = surrender_pair_units(
                rule_set, surrendered[a], surrendered[b], checks[a].foul, checks[b].foul
            )
            pair = PairResult(a, b, NO_ROWS, _checked(units * rule_set.unit_between(a, b)))
        pairs.append(pair)
        totals[a] += pair.delta
        totals[b] -= pair.delta
    return DealScore(pairs=tuple(pairs), totals=tuple(map(_checked, totals)))


def _checked(amount: int) -> int:
    # As every amount the scoring computes: within the 64-bit range the stores hold.
    if not -INT64_MAX <= amount <= INT64_MAX:
        raise ScoreOverflowError("an amount left the 64-bit range")
    return amount

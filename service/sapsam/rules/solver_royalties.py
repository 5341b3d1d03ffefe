"""The solver's royalty-aware row scores (objective ``played_units``, rules version 6 on).

``played_rows`` scores a row of strength ``s`` as ``P(win) + P(tie) / 2`` against the rows the
``random_rows`` solver plays (``solver_tables.played_row_scores``, over ``den = 2 x deals``): under
per-row scoring that is ``(expected row units + 1) / 2``, so adding ``den x R / 2`` to it adds ``R``
expected units. ``played_units`` adds each row's expected royalty units ``R(s)`` under the rule
set, against the same played rows:

* ``won_row``: ``R(s) = (royalty(s) x beaten(s) - sum of royalty(t) over the played rows t that
  beat s) / deals``: the row's own royalty when it wins, less the opponent's when it loses;
* ``held_row``: ``R(s) = royalty(s)`` (the opponent's royalties do not depend on this row);
* ``none``: nothing, so ``played_units`` searches exactly as ``played_rows``.

``royalty_limit`` ``largest_only`` and broken hands' claims (``royalty_broken_hands``) are not
additive over rows; the objective counts every row's royalty as ``every_row`` does and values no
claim (a claim is paid whatever the arrangement). The scoring method's majority and scoop are
left to ``played_rows``' row chances (ranking by the method's expected score, ``played_score``,
measured no gain). Everything is an integer, so the search is exact
and deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Final

from sapsam.rules.hands import FIVE_CARD_VALUES, THREE_CARD_VALUES, HandValue
from sapsam.rules.royalties import RoyaltyPayment, amount_table
from sapsam.rules.royalty_tables import royalty_amount
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.solver_tables import RowScores, played_row_chances, played_row_scores

_CACHE_SIZE: Final = 32
"""Royalty tables whose row scores are kept (a server serves a handful of rule sets)."""


def royalty_inputs(rule_set: RuleSet) -> tuple[object, ...]:
    """What the royalty scores read of a rule set: the payment and every non-zero amount."""
    if rule_set.royalties is RoyaltyPayment.NONE:
        return ()
    amounts = tuple(sorted((key, units) for key, units in amount_table(rule_set).items() if units))
    return (rule_set.royalties is RoyaltyPayment.WON_ROW, amounts)


def royalty_row_scores(rule_set: RuleSet) -> RowScores:
    """``played_rows``' row scores plus each row's expected royalty units (module docstring), on
    ``played_rows``' scale."""
    inputs = royalty_inputs(rule_set)
    if not inputs:
        return played_row_scores()
    won_row, amounts = inputs
    return _scores(amounts, bool(won_row))


@lru_cache(maxsize=_CACHE_SIZE)
def _scores(table: tuple[tuple[str, int], ...], won_row: bool) -> RowScores:
    amounts = dict(table)
    front, middle, back, denominator = played_row_scores()
    front_chances, middle_chances, back_chances, deals = played_row_chances()
    rows = []
    for row, (base, values, chances) in enumerate(
        (
            (front, THREE_CARD_VALUES, front_chances),
            (middle, FIVE_CARD_VALUES, middle_chances),
            (back, FIVE_CARD_VALUES, back_chances),
        )
    ):
        extra = _extra(amounts, row, values, chances, deals, won_row)
        rows.append({strength: score + extra[strength] for strength, score in base.items()})
    return rows[0], rows[1], rows[2], denominator


def _extra(
    amounts: Mapping[str, int],
    row: int,
    values: Iterable[HandValue],
    beaten_and_tied: Mapping[int, tuple[int, int]],
    deals: int,
    won_row: bool,
) -> dict[int, int]:
    """Per strength: ``den x R(s) / 2`` = ``deals x R(s)``, an integer."""
    ordered = sorted(values, key=lambda value: value.strength)
    royalty = {value.strength: royalty_amount(amounts, row, value) for value in ordered}
    if not won_row:
        return {strength: deals * units for strength, units in royalty.items()}
    # The opponent's royalties above each strength: a running sum from the top.
    above: dict[int, int] = {}
    running = 0
    for value in reversed(ordered):
        above[value.strength] = running
        running += royalty[value.strength] * beaten_and_tied[value.strength][1]
    return {
        strength: royalty[strength] * beaten_and_tied[strength][0] - above[strength]
        for strength in royalty
    }

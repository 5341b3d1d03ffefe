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
additive over rows; ``played_units`` counts every row's royalty as ``every_row`` does and values no
claim (a claim is paid whatever the arrangement). ``played_royalties`` (the default objective
from this release; not a rules version's, so no replay changes) reads both:

* a claim: a middle or back row that *is* four of a kind or a straight flush keeps that hand, so
  it gives up the claim breaking it would earn (the back's amount for it, paid whatever the rows):
  :func:`claimed_row_scores` subtracts that amount from such rows, which is exact for four of a
  kind (one claim per rank) and, for straight flushes, counts the row's own one;
* ``largest_only``: the search keeps the best few arrangements and :func:`royalty_value` ranks
  them by their expected units against the played rows, rows taken as independent: each row's
  chance units, plus the largest royalty the seat collects (its won rows' under ``won_row``, all
  its rows' under ``held_row``, and every claim, paid whatever the rows), less what the opponent's
  won rows are expected to collect (counted row by row, as under ``every_row``: an opponent's
  largest is not known from the seat's rows alone).

The scoring method's majority and scoop are left to ``played_rows``' row chances (ranking by the
method's expected score, ``played_score``, measured no gain). Everything is an integer or an exact
fraction, so the search is exact and deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Final

from sapsam.rules.hands import FIVE_CARD_VALUES, THREE_CARD_VALUES, Category, HandValue
from sapsam.rules.royalties import BrokenHands, RoyaltyLimit, RoyaltyPayment, amount_table
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


_KEPT_HANDS: Final = (Category.FOUR_OF_A_KIND, Category.STRAIGHT_FLUSH)


def claims_broken_hands(rule_set: RuleSet) -> bool:
    """Whether the rule set pays broken hands' claims (royalties on and ``claimed``)."""
    return (
        rule_set.royalties is not RoyaltyPayment.NONE
        and rule_set.royalty_broken_hands is BrokenHands.CLAIMED
    )


def claimed_row_scores(rule_set: RuleSet) -> RowScores:
    """:func:`royalty_row_scores`, less, under ``royalty_broken_hands`` ``claimed``, the claim a
    middle or back row gives up by being four of a kind or a straight flush (module
    documentation), on the same scale."""
    inputs = royalty_inputs(rule_set)
    if not inputs or not claims_broken_hands(rule_set):
        return royalty_row_scores(rule_set)
    won_row, amounts = inputs
    return _claimed_scores(amounts, bool(won_row))


@lru_cache(maxsize=_CACHE_SIZE)
def _claimed_scores(table: tuple[tuple[str, int], ...], won_row: bool) -> RowScores:
    amounts = dict(table)
    front, middle, back, denominator = _scores(table, won_row)
    deals = played_row_chances()[3]
    given_up = {
        value.strength: deals * royalty_amount(amounts, 2, value)
        for value in FIVE_CARD_VALUES
        if value.category in _KEPT_HANDS
    }
    middle = {strength: score - given_up.get(strength, 0) for strength, score in middle.items()}
    back = {strength: score - given_up.get(strength, 0) for strength, score in back.items()}
    return front, middle, back, denominator


def royalty_value(
    rule_set: RuleSet, values: Sequence[HandValue], claims: Sequence[int] = ()
) -> Fraction:
    """The expected units of a legal arrangement whose rows have ``values`` (front, middle,
    back) and which claims ``claims`` (``sapsam.rules.royalties.broken_royalties``) against the
    played rows, rows taken as independent (module documentation): what ``played_royalties``
    ranks its kept arrangements by under ``largest_only`` or broken hands' claims."""
    front_chances, middle_chances, back_chances, deals = played_row_chances()
    table = amount_table(rule_set)
    won_row = rule_set.royalties is RoyaltyPayment.WON_ROW
    paid = rule_set.royalties is not RoyaltyPayment.NONE
    total = Fraction(0)
    owned: list[tuple[int, Fraction]] = [(claim, Fraction(1)) for claim in claims if claim]
    for row, (value, chances) in enumerate(
        zip(values, (front_chances, middle_chances, back_chances), strict=True)
    ):
        beaten, tied = chances[value.strength]
        total += Fraction(2 * beaten + tied - deals, deals)  # the row's expected units
        amount = royalty_amount(table, row, value) if paid else 0
        if amount:
            owned.append((amount, Fraction(beaten, deals) if won_row else Fraction(1)))
        if won_row:
            total -= Fraction(_opponents_above(_inputs_key(rule_set), row)[value.strength], deals)
    if rule_set.royalty_limit is RoyaltyLimit.LARGEST_ONLY:
        # The largest present: each in turn, when every larger one is absent.
        none_larger = Fraction(1)
        for amount, chance in sorted(owned, key=lambda item: item[0], reverse=True):
            total += amount * chance * none_larger
            none_larger *= 1 - chance
    else:
        total += sum((amount * chance for amount, chance in owned), Fraction(0))
    return total


def _inputs_key(rule_set: RuleSet) -> tuple[tuple[str, int], ...]:
    inputs = royalty_inputs(rule_set)
    return inputs[1] if inputs else ()  # type: ignore[return-value]


@lru_cache(maxsize=3 * _CACHE_SIZE)
def _opponents_above(table: tuple[tuple[str, int], ...], row: int) -> dict[int, int]:
    """Per strength of row ``row``: the sum of the royalties of the played rows that beat it,
    each times how many of them were played (the opponent's expected royalty, times deals)."""
    amounts = dict(table)
    values = THREE_CARD_VALUES if row == 0 else FIVE_CARD_VALUES
    front, middle, back, _ = played_row_chances()
    chances = (front, middle, back)[row]
    ordered = sorted(values, key=lambda value: value.strength)
    above: dict[int, int] = {}
    running = 0
    for value in reversed(ordered):
        above[value.strength] = running
        running += royalty_amount(amounts, row, value) * chances[value.strength][1]
    return above

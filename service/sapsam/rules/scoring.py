"""Scoring a deal: every pair of players compares row by row, then settles under the rule set.

Each pair of seats settles separately (docs/rules.md §1.6): front against front, middle against
middle, back against back, each row won (+1), lost (-1) or tied (0) from the first seat's side. A
legal arrangement wins all three rows against a fouled one, whatever the cards; two fouled seats
tie all three rows. The rows then turn into a payment under the rule set's scoring method; every
payment is antisymmetric, so every deal is zero-sum.

Ties under the majority-based methods (``two_four``'s majority unit and ``one_six``'s points): a
tied row counts for neither player, and the rule set's ``majority`` says who holds the majority.
Under ``two_rows_won`` (the sources' text, the default from rules version 2) it is the player who
won at least two rows, so one row won and two tied earns only the row (``two_four`` +1, ``one_six``
0). Under ``more_rows_won`` (every version-1 rule set) it is the player who won more rows than the
other, so one row won and two tied earns it (``two_four`` +2, ``one_six`` the 2-of-3 points). Under
both, one won, one lost and one tied earns nothing beyond the rows, and a scoop means winning all
three rows (two won and one tied is not a scoop).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sapsam.frozen import from_fields
from sapsam.rules.arrangement import ArrangementCheck
from sapsam.rules.naturals import (
    NATURAL_FIELDS,
    NaturalHand,
    NaturalsTable,
    natural_bound,
    natural_settlement,
)
from sapsam.rules.royalties import (
    ROYALTY_FIELDS,
    BrokenHands,
    RoyaltyPayment,
    broken_royalties,
    row_royalties,
    royalty_bound,
    royalty_units,
)
from sapsam.rules.ruleset import (
    MAX_BONUS_UNITS,
    MAX_ROW_UNIT,
    MAX_SEATS,
    MAX_SERIES_LENGTH,
    MajorityRule,
    RuleSet,
    ScoringMethod,
)

# Read per scored pair: a module constant, since reading a member off its enum class goes through
# EnumType's __getattr__ hook in Python 3.11 (about 900 instructions a read).
_TWO_ROWS_WON: Final = MajorityRule.TWO_ROWS_WON
_PER_ROW: Final = ScoringMethod.PER_ROW
_TWO_FOUR: Final = ScoringMethod.TWO_FOUR
_ONE_SIX: Final = ScoringMethod.ONE_SIX
_PER_ROW_SCOOP_BONUS: Final = ScoringMethod.PER_ROW_SCOOP_BONUS
_NO_ROYALTIES: Final = RoyaltyPayment.NONE

INT64_MAX: Final = 2**63 - 1
"""The largest amount any store or client holds (PostgreSQL bigint, a 64-bit integer)."""


class ScoreOverflowError(ArithmeticError, ValueError):
    """An amount left the int64 range. The rule-set maxima make this impossible for a new table;
    it is raised rather than let an unstorable number through (a rule set recorded before the
    maxima, an export made up by hand). A ValueError too, so a verifier reports it as a malformed
    record."""


@dataclass(frozen=True)
class PairResult:
    """How seat ``seat_a`` fared against seat ``seat_b`` (``seat_a < seat_b``).

    ``rows`` are front, middle, back from ``seat_a``'s side: +1 won, -1 lost, 0 tied. ``delta`` is
    what ``seat_a`` gains (and ``seat_b`` loses) under the rule set's scoring method, royalties
    included (``sapsam.rules.royalties``).
    """

    seat_a: int
    seat_b: int
    rows: tuple[int, int, int]
    delta: int


@dataclass(frozen=True)
class DealScore:
    """Every pair's result, and each seat's total for the deal (index = seat); sums to zero."""

    pairs: tuple[PairResult, ...]
    totals: tuple[int, ...]


@dataclass(frozen=True)
class Standing:
    """A seat's place: totals sorted high to low, equal totals sharing a place (1, 1, 3)."""

    seat: int
    total: int
    place: int


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)


def compare_rows(first: ArrangementCheck, second: ArrangementCheck) -> tuple[int, int, int]:
    """Front, middle and back results from ``first``'s side: +1 won, -1 lost, 0 tied.

    A legal arrangement wins every row against a fouled one; two fouls tie every row.
    """
    if first.foul or second.foul:
        outcome = 0 if first.foul and second.foul else (-1 if first.foul else 1)
        return (outcome, outcome, outcome)
    first_values, second_values = first.values, second.values
    if first_values is None or second_values is None:
        raise ValueError("a legal arrangement check must carry its row values")
    if len(first_values) == 3 == len(second_values):  # always, from check_arrangement
        my_front, my_middle, my_back = first_values
        their_front, their_middle, their_back = second_values
        # _sign of each difference, written out: every pair of every deal is compared.
        front, middle, back = my_front.strength, my_middle.strength, my_back.strength
        other_front, other_middle, other_back = (
            their_front.strength,
            their_middle.strength,
            their_back.strength,
        )
        return (
            (front > other_front) - (front < other_front),
            (middle > other_middle) - (middle < other_middle),
            (back > other_back) - (back < other_back),
        )
    front, middle, back = (
        _sign(mine.strength - theirs.strength)
        for mine, theirs in zip(first_values, second_values, strict=True)
    )
    return (front, middle, back)


@dataclass(frozen=True)
class Settlement:
    """How one pair's rows turn into a payment under a rule set, part by part, in units from the
    first seat's side (``settle`` is their sum times ``row_unit``; the audit explains a score
    with the same parts, so the words and the amount cannot disagree).

    ``rows``: the rows themselves, won minus lost (paid by every method but 1-6); ``majority``:
    2-4's unit for holding the majority (the rule set's ``majority``); ``two_of_three``: 1-6's
    payment for a majority short of a scoop; ``scoop``: 1-6's payment or the scoop bonus for all
    three rows. Royalties are not a part: ``sapsam.rules.royalties`` adds them.
    """

    rows: int
    majority: int
    two_of_three: int
    scoop: int
    row_unit: int

    @property
    def units(self) -> int:
        """Every part together."""
        return self.rows + self.majority + self.two_of_three + self.scoop

    @property
    def amount(self) -> int:
        """What the first seat gains: the units times the row unit."""
        return _int64(self.units * self.row_unit)


def _row_counts(rows: tuple[int, int, int]) -> tuple[int, int, int, int]:
    """Rows won minus lost, the majority under ``more_rows_won`` and under ``two_rows_won``,
    and the scoop (+1 all won, -1 all lost, else 0)."""
    won = rows.count(1)
    lost = rows.count(-1)
    two_rows = 1 if won >= 2 else -1 if lost >= 2 else 0
    scoop = 1 if won == 3 else -1 if lost == 3 else 0
    return won - lost, _sign(won - lost), two_rows, scoop


# _row_counts of every row outcome a pair can have (each row +1, 0 or -1): every pair of every
# deal is settled, so its counts are looked up rather than counted.
_ROW_COUNTS: Final = {
    (front, middle, back): _row_counts((front, middle, back))
    for front in (1, 0, -1)
    for middle in (1, 0, -1)
    for back in (1, 0, -1)
}


def _parts(rule_set: RuleSet, rows: tuple[int, int, int]) -> tuple[int, int, int, int]:
    """:class:`Settlement`'s parts in units: rows, majority, two of three, scoop."""
    try:
        by_rows, more_rows, two_rows, scoop = _ROW_COUNTS[rows]
    except (KeyError, TypeError):  # not three results of +1, 0, -1 as a tuple: counted
        by_rows, more_rows, two_rows, scoop = _row_counts(rows)
    majority = two_rows if rule_set.majority is _TWO_ROWS_WON else more_rows
    method = rule_set.scoring
    if method is _PER_ROW:
        return by_rows, 0, 0, 0
    if method is _TWO_FOUR:
        return by_rows, majority, 0, 0
    if method is _ONE_SIX:
        if scoop:
            return 0, 0, 0, scoop * rule_set.one_six_scoop
        return 0, 0, majority * rule_set.one_six_two_of_three, 0
    if method is _PER_ROW_SCOOP_BONUS:
        return by_rows, 0, 0, scoop * rule_set.scoop_bonus
    raise ValueError(f"unknown scoring method {method!r}")  # pragma: no cover - all handled


def settlement(
    rule_set: RuleSet, rows: tuple[int, int, int], unit: int | None = None
) -> Settlement:
    """The parts of what the first player gains from row results ``rows`` under ``rule_set``'s
    method, a unit worth ``unit`` (by default ``row_unit``; a pair's own stake,
    ``RuleSet.unit_between``). See the module docstring for how ties count towards a majority."""
    by_rows, majority, two_of_three, scoop = _parts(rule_set, rows)
    unit = rule_set.row_unit if unit is None else unit
    return Settlement(by_rows, majority, two_of_three, scoop, unit)


def settle(rule_set: RuleSet, rows: tuple[int, int, int], unit: int | None = None) -> int:
    """What the first player gains from row results ``rows`` under ``rule_set``'s method.

    Amounts are counted in units and multiplied by ``unit`` (by default ``row_unit``):
    :func:`settlement`'s parts, summed without making the :class:`Settlement` (scoring settles
    every pair of every deal).
    """
    by_rows, majority, two_of_three, scoop = _parts(rule_set, rows)
    unit = rule_set.row_unit if unit is None else unit
    return _int64((by_rows + majority + two_of_three + scoop) * unit)


def _int64(amount: int) -> int:
    # Python's integers never wrap; the stores and clients downstream hold 64 bits.
    if not -INT64_MAX <= amount <= INT64_MAX:
        raise ScoreOverflowError("an amount left the 64-bit range")
    return amount


# Every row outcome of a pair up to the seats' sides (a seat's loss is the other's win).
_WINNING_OUTCOMES: Final = ((1, 1, 1), (1, 1, 0), (1, 1, -1), (1, 0, 0))


def worst_pair_units(rule_set: RuleSet) -> int:
    """The most units one pair can settle for in one deal under ``rule_set``: the outcome its
    method pays most for (a scoop, or under ``one_six`` the 2-of-3 points when they are set
    above the scoop's), and every royalty the winner can collect."""
    per_unit = rule_set.with_changes(row_unit=1)
    paid = max(abs(settle(per_unit, rows)) for rows in _WINNING_OUTCOMES)
    # A pair with a natural settles the natural instead of its rows and royalties.
    return max(paid + royalty_bound(rule_set), natural_bound(rule_set))


def worst_series_total(
    row_unit: int = MAX_ROW_UNIT,
    bonus_units: int = MAX_BONUS_UNITS,
    seats: int = MAX_SEATS,
    series_length: int = MAX_SERIES_LENGTH,
) -> int:
    """The largest amount a seat can win or lose over one series with the given numbers (by
    default every rule-set maximum): every deal a scoop of every opponent under the scoring
    method that pays most, with every royalty (three rows and three broken hands). The amounts
    of a deal, a series and a read model stay below it."""
    royalty_amounts: dict[str, Any] = dict.fromkeys(ROYALTY_FIELDS, bonus_units)
    natural_amounts: dict[str, Any] = dict.fromkeys(NATURAL_FIELDS.values(), bonus_units)
    worst_units = max(
        worst_pair_units(
            RuleSet(
                scoring=method,
                scoop_bonus=bonus_units,
                one_six_two_of_three=bonus_units,
                one_six_scoop=bonus_units,
                royalties=RoyaltyPayment.WON_ROW,
                naturals=NaturalsTable.EXTENDED,
                royalty_broken_hands=BrokenHands.CLAIMED,
                **royalty_amounts,
                **natural_amounts,
            )
        )
        for method in ScoringMethod
    )
    return worst_units * row_unit * (seats - 1) * series_length


def score_deal(
    rule_set: RuleSet,
    checks: Sequence[ArrangementCheck],
    naturals: Sequence[NaturalHand | None] | None = None,
) -> DealScore:
    """Score one deal; seat ``i`` played the arrangement judged by ``checks[i]``, or, when
    ``naturals[i]`` is given, holds that real declared natural (``sapsam.rules.naturals``).

    Pairs come in seat order (0-1, 0-2, …, 1-2, …). A pair where either seat holds a natural
    settles the natural's units (``natural_units``) and nothing else; its rows are recorded as
    the natural's winner winning all three (the natural "wins automatically"), or all tied.
    Raises ``ValueError`` when the number of seats is outside the rule set's
    ``min_seats .. max_seats``.
    """
    seat_count = len(checks)
    if not rule_set.min_seats <= seat_count <= rule_set.max_seats:
        raise ValueError(
            f"a deal has {rule_set.min_seats} to {rule_set.max_seats} seats, not {seat_count}"
        )
    totals = [0] * seat_count
    pairs: list[PairResult] = []
    # Without royalties (royalty_units 0 for every pair) no seat's royalties are read.
    pays_royalties = rule_set.royalties is not _NO_ROYALTIES
    if pays_royalties:
        royalties = [row_royalties(rule_set, check) for check in checks]
        broken = [broken_royalties(rule_set, check) for check in checks]
    # No seat holding a natural (the usual deal) is no naturals: natural_settlement would give
    # None for every pair.
    if (
        naturals is not None
        and len(naturals) == seat_count
        and not any(natural is not None for natural in naturals)
    ):
        naturals = None
    for seat_a in range(seat_count):
        for seat_b in range(seat_a + 1, seat_count):
            unit = rule_set.unit_between(seat_a, seat_b)
            by_naturals = (
                None
                if naturals is None
                else natural_settlement(rule_set, naturals[seat_a], naturals[seat_b])
            )
            if by_naturals is not None:
                outcome = by_naturals.outcome
                rows = (outcome, outcome, outcome)
                delta = _int64(by_naturals.units * unit)
                pairs.append(PairResult(seat_a, seat_b, rows, delta))
                totals[seat_a] += delta
                totals[seat_b] -= delta
                continue
            rows = compare_rows(checks[seat_a], checks[seat_b])
            if pays_royalties:
                extra = royalty_units(
                    rule_set,
                    rows,
                    royalties[seat_a],
                    royalties[seat_b],
                    broken[seat_a],
                    broken[seat_b],
                )
                delta = settle(rule_set, rows, unit) + _int64(extra * unit)
            else:
                delta = settle(rule_set, rows, unit)
            # Made without the frozen __init__'s setattr per field (no __post_init__).
            pairs.append(
                from_fields(
                    PairResult, {"seat_a": seat_a, "seat_b": seat_b, "rows": rows, "delta": delta}
                )
            )
            totals[seat_a] += delta
            totals[seat_b] -= delta
    return from_fields(DealScore, {"pairs": tuple(pairs), "totals": tuple(map(_int64, totals))})


def pair_units(rule_set: RuleSet, pair: PairResult) -> int:
    """A pair's result in units: its ``delta`` (in stakes) over the pair's unit value
    (``RuleSet.unit_between``; ``row_unit`` unless ``pair_units`` says otherwise)."""
    unit = rule_set.unit_between(pair.seat_a, pair.seat_b)
    units, rest = divmod(pair.delta, unit)
    if rest:
        raise ValueError(
            f"pair {pair.seat_a}-{pair.seat_b}: {pair.delta} is not a whole number of units"
        )
    return units


def unit_totals(rule_set: RuleSet, score: DealScore) -> tuple[int, ...]:
    """Each seat's deal result in units (the sum of its pairs' :func:`pair_units`); equal to
    ``score.totals`` over ``row_unit`` when every pair plays for ``row_unit``."""
    totals = [0] * len(score.totals)
    for pair in score.pairs:
        units = pair_units(rule_set, pair)
        totals[pair.seat_a] += units
        totals[pair.seat_b] -= units
    return tuple(totals)


def series_totals(deals: Iterable[DealScore], seat_count: int) -> tuple[int, ...]:
    """Running totals over a series, starting at 0 for every seat."""
    totals = [0] * seat_count
    for number, deal in enumerate(deals, start=1):
        if len(deal.totals) != seat_count:
            raise ValueError(
                f"deal {number} has {len(deal.totals)} seats, the series has {seat_count}"
            )
        for seat, total in enumerate(deal.totals):
            totals[seat] += total
    return tuple(map(_int64, totals))


def add_totals(before: Sequence[int], gained: Sequence[int]) -> tuple[int, ...]:
    """Running totals after one more deal (seat by seat), checked against the 64-bit range."""
    return tuple(_int64(old + new) for old, new in zip(before, gained, strict=True))


def standings(totals: Sequence[int]) -> tuple[Standing, ...]:
    """Seats by total, highest first (then by seat); equal totals share a place: 1, 1, 3."""
    order = sorted(range(len(totals)), key=lambda seat: (-totals[seat], seat))
    result: list[Standing] = []
    for position, seat in enumerate(order):
        tied_with_previous = position > 0 and totals[seat] == result[-1].total
        place = result[-1].place if tied_with_previous else position + 1
        result.append(Standing(seat=seat, total=totals[seat], place=place))
    return tuple(result)

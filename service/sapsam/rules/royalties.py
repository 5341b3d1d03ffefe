"""Royalties: extra units for strong rows (docs/rules.md §2.7; rules version 4 on).

A row earns a royalty by its row and value: the amounts are rule-set fields, named
``royalty_<row>_<category>`` (``ROYALTY_FIELDS``), with source 004's table as their defaults, and
from rules version 6 ``royalty_amounts`` for every other key of ``sapsam.rules.royalty_tables``
(back straights and flushes, royal flushes, the front graded by rank), which is how a rule set
holds the open-face tables (:func:`table_fields`). How they change hands between two seats is
``royalties``:

* ``none``: no royalties (the default; every rule set of rules versions 1 to 3).
* ``won_row``: a seat collects the royalty of each row it **won** from that opponent (004: «Za
  wygraną przednią rękę z 3 takimi samymi gracz otrzymuje 3 jednostki», "for a won front hand
  with three of a kind the player receives 3 units"; 002: normally only the winner of the row).
* ``held_row``: each seat's royalties count whether its rows won or lost, and between two seats
  the difference changes hands (the open-face way of 001 and 003).

``royalty_limit`` ``largest_only`` counts only the largest of the royalties a seat collects from
one opponent (002: «jucătorii au voie să revendice doar o redevență pe mână», "players may claim
only one royalty per hand"); ``every_row`` counts them all. A fouled seat earns no royalty (003:
a dead hand's royalties do not count), and its legal opponents win every row, so under both
methods they collect their royalties from it.

``royalty_broken_hands`` ``claimed`` (rules version 6) pays for four of a kind and straight flushes
*dealt* but split across rows (002: «jucătorii au voie să se despartă de flash -uri drepte sau
patru de un fel și mai primesc redevențe», "players may break up straight flushes or four of a
kind and still receive royalties"): each such hand earns the back's amount for it, as a royalty of
the hand rather than of a row, so it is paid whatever the rows (:func:`broken_royalties`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from sapsam.rules.cards import Card
from sapsam.rules.hands import Category, HandValue, evaluate5
from sapsam.rules.royalty_tables import ROYALTY_TABLES, check_amounts, royalty_amount

if TYPE_CHECKING:
    from sapsam.rules.arrangement import ArrangementCheck
    from sapsam.rules.ruleset import RuleSet


class RoyaltyPayment(StrEnum):
    """How royalties change hands between two seats (see the module documentation)."""

    NONE = "none"
    WON_ROW = "won_row"
    HELD_ROW = "held_row"


class BrokenHands(StrEnum):
    """Whether four of a kind or a straight flush dealt but split across rows earns a royalty."""

    NOT_CLAIMED = "not_claimed"
    CLAIMED = "claimed"


class RoyaltyLimit(StrEnum):
    """Whether a seat collects every royalty from an opponent or only the largest."""

    EVERY_ROW = "every_row"
    LARGEST_ONLY = "largest_only"


# Read per scored pair: a module constant, since reading a member off its enum class goes through
# EnumType's __getattr__ hook in Python 3.11 (about 900 instructions a read).
_NO_ROYALTIES: Final = RoyaltyPayment.NONE

ROYALTY_FIELDS: Final[Mapping[str, tuple[int, Category]]] = MappingProxyType(
    {
        "royalty_front_three_of_a_kind": (0, Category.THREE_OF_A_KIND),
        "royalty_middle_three_of_a_kind": (1, Category.THREE_OF_A_KIND),
        "royalty_middle_full_house": (1, Category.FULL_HOUSE),
        "royalty_middle_four_of_a_kind": (1, Category.FOUR_OF_A_KIND),
        "royalty_middle_straight_flush": (1, Category.STRAIGHT_FLUSH),
        "royalty_back_four_of_a_kind": (2, Category.FOUR_OF_A_KIND),
        "royalty_back_straight_flush": (2, Category.STRAIGHT_FLUSH),
    }
)
"""Each amount field: the row it pays for (0 front, 1 middle, 2 back) and the category."""


_FIELD_KEYS: Final[Mapping[str, str]] = MappingProxyType(
    {field: field.removeprefix("royalty_") for field in ROYALTY_FIELDS}
)
"""Each amount field's key in ``sapsam.rules.royalty_tables`` (the field is ``royalty_<key>``)."""


def check_royalty_amounts(amounts: object, maximum: int | None) -> dict[str, int]:
    """A rule set's ``royalty_amounts``, checked (``royalty_tables.check_amounts``); a key that
    has its own field (``royalty_front_three_of_a_kind`` …) is refused: one way to set each."""
    if isinstance(amounts, Mapping):
        own = sorted(key for key in amounts if key in _FIELD_KEYS.values())
        if own:
            raise ValueError(
                f"rule set key 'royalty_amounts': {own[0]!r} is set by its own field "
                f"'royalty_{own[0]}'"
            )
    try:
        return check_amounts(amounts, maximum)  # type: ignore[arg-type]
    except ValueError as error:
        raise ValueError(f"rule set key 'royalty_amounts': {error}") from None


def amount_table(rule_set: RuleSet) -> dict[str, int]:
    """Every royalty amount of a rule set as one table (key: units): the seven fields and
    ``royalty_amounts``."""
    table = {key: getattr(rule_set, field) for field, key in _FIELD_KEYS.items()}
    table.update(rule_set.royalty_amounts)
    return table


def table_fields(name: str, overrides: Mapping[str, int] | None = None) -> dict[str, object]:
    """The rule-set fields that set every amount to the named table's (``ROYALTY_TABLES``), with
    ``overrides`` (key: units) applied: the seven fields, and ``royalty_amounts`` for the rest."""
    amounts = ROYALTY_TABLES[name].with_amounts(overrides or {})
    fields: dict[str, object] = {field: amounts.pop(key, 0) for field, key in _FIELD_KEYS.items()}
    fields["royalty_amounts"] = amounts
    return fields


def row_royalties(rule_set: RuleSet, check: ArrangementCheck) -> tuple[int, int, int]:
    """The royalty each row of a judged arrangement earns (0 for a foul, or under ``none``)."""
    if rule_set.royalties is _NO_ROYALTIES or check.foul or check.values is None:
        return (0, 0, 0)
    if not rule_set.royalty_amounts:  # the seven fields only (every version-4 rule set)
        amounts = [0, 0, 0]
        for field, (row, category) in ROYALTY_FIELDS.items():
            if check.values[row].category is category:
                amounts[row] = getattr(rule_set, field)
        return (amounts[0], amounts[1], amounts[2])
    table = amount_table(rule_set)
    front, middle, back = (royalty_amount(table, row, check.values[row]) for row in range(3))
    return (front, middle, back)


def broken_royalties(rule_set: RuleSet, check: ArrangementCheck) -> tuple[int, ...]:
    """The royalties a legal arrangement claims for hands dealt but split across rows, under
    ``royalty_broken_hands`` ``claimed`` (empty otherwise, and for a foul).

    Four of a kind: each rank the seat holds all four of, unless a row is that four of a kind.
    Straight flushes: as many as the most disjoint straight flushes among the 13 cards, less
    the rows that are straight flushes. Each earns the back's amount for that hand (the highest
    straight flushes first)."""
    if (
        rule_set.royalties is _NO_ROYALTIES
        or rule_set.royalty_broken_hands is BrokenHands.NOT_CLAIMED
        or check.foul
        or check.values is None
    ):
        return ()
    table = amount_table(rule_set)
    cards = [Card(index) for index in check.cards]
    kept_quads = {
        value.ranks[0] for value in check.values if value.category is Category.FOUR_OF_A_KIND
    }
    by_rank: dict[int, int] = {}
    for card in cards:
        by_rank[card.rank] = by_rank.get(card.rank, 0) + 1
    claims = [
        royalty_amount(table, 2, _quads_value(rank))
        for rank, count in sorted(by_rank.items())
        if count == 4 and rank not in kept_quads
    ]
    kept_flushes = sum(value.category is Category.STRAIGHT_FLUSH for value in check.values)
    flushes = _disjoint_straight_flushes(cards)
    claims.extend(royalty_amount(table, 2, value) for value in flushes[kept_flushes:])
    return tuple(claim for claim in claims if claim)


def _quads_value(rank: int) -> HandValue:
    # Four cards of the rank and a kicker of another: only the category and rank are read.
    kicker = 0 if rank else 1
    return evaluate5(rank * 4, rank * 4 + 1, rank * 4 + 2, rank * 4 + 3, kicker * 4)


def _disjoint_straight_flushes(cards: Iterable[int]) -> list[HandValue]:
    """The most straight flushes no two of which share a card, highest first (among choices of
    as many, the one with the highest straight flushes)."""
    held = set(cards)
    found: list[tuple[int, ...]] = []
    for suit in range(4):
        for top in range(3, 13):  # the five (the wheel, whose ace plays low) .. the ace
            ranks = [top - offset for offset in range(5)] if top > 3 else [3, 2, 1, 0, 12]
            straight = tuple(rank * 4 + suit for rank in ranks)
            if held.issuperset(straight):
                found.append(straight)
    values = {straight: evaluate5(*straight) for straight in found}
    choices: list[list[tuple[int, ...]]] = [[straight] for straight in found]
    choices += [
        [first, second]
        for index, first in enumerate(found)
        for second in found[index + 1 :]
        if not set(first) & set(second)
    ]  # 13 cards hold at most two disjoint five-card hands
    if not choices:
        return []
    best = max(
        choices,
        key=lambda choice: (
            len(choice),
            sorted((values[straight].strength for straight in choice), reverse=True),
        ),
    )
    return sorted((values[straight] for straight in best), key=lambda value: -value.strength)


def royalty_units(
    rule_set: RuleSet,
    rows: tuple[int, int, int],
    first: tuple[int, int, int],
    second: tuple[int, int, int],
    first_broken: tuple[int, ...] = (),
    second_broken: tuple[int, ...] = (),
) -> int:
    """The royalty units the first seat gains from the second (negative: pays), given the row
    results from its side, each seat's :func:`row_royalties` and :func:`broken_royalties` (a
    broken hand's royalty is paid whatever the rows)."""
    if rule_set.royalties is _NO_ROYALTIES:
        return 0
    if rule_set.royalties is RoyaltyPayment.WON_ROW:
        mine = [amount for amount, result in zip(first, rows, strict=True) if result == 1]
        theirs = [amount for amount, result in zip(second, rows, strict=True) if result == -1]
    else:
        mine, theirs = list(first), list(second)
    mine.extend(first_broken)
    theirs.extend(second_broken)
    combine: Callable[[Iterable[int]], int] = (
        _largest if rule_set.royalty_limit is RoyaltyLimit.LARGEST_ONLY else sum
    )
    return combine(mine) - combine(theirs)


def _largest(amounts: Iterable[int]) -> int:
    return max(amounts, default=0)


def royalty_bound(rule_set: RuleSet) -> int:
    """The most royalty units one seat can collect from one opponent in one deal (a bound: every
    row its largest amount, and under ``claimed`` three broken hands of the largest amount)."""
    if rule_set.royalties is _NO_ROYALTIES:
        return 0
    best = [0, 0, 0]
    for key, amount in amount_table(rule_set).items():
        row = ("front", "middle", "back").index(key.split("_", 1)[0])
        best[row] = max(best[row], amount)
    broken = 3 if rule_set.royalty_broken_hands is BrokenHands.CLAIMED else 0
    largest = max(best)
    if rule_set.royalty_limit is RoyaltyLimit.LARGEST_ONLY:
        return largest
    return sum(best) + broken * largest

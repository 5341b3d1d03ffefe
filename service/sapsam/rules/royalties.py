"""Royalties: extra units for strong rows (docs/rules.md §2.7; rules version 4 on).

A row earns a royalty by its row and category alone: the amounts are rule-set fields, named
``royalty_<row>_<category>`` (``ROYALTY_FIELDS``), with source 004's table as their defaults.
How they change hands between two seats is ``royalties``:

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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from sapsam.rules.hands import Category

if TYPE_CHECKING:
    from sapsam.rules.arrangement import ArrangementCheck
    from sapsam.rules.ruleset import RuleSet


class RoyaltyPayment(StrEnum):
    """How royalties change hands between two seats (see the module documentation)."""

    NONE = "none"
    WON_ROW = "won_row"
    HELD_ROW = "held_row"


class RoyaltyLimit(StrEnum):
    """Whether a seat collects every royalty from an opponent or only the largest."""

    EVERY_ROW = "every_row"
    LARGEST_ONLY = "largest_only"


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


def row_royalties(rule_set: RuleSet, check: ArrangementCheck) -> tuple[int, int, int]:
    """The royalty each row of a judged arrangement earns (0 for a foul, or under ``none``)."""
    if rule_set.royalties is RoyaltyPayment.NONE or check.foul or check.values is None:
        return (0, 0, 0)
    amounts = [0, 0, 0]
    for field, (row, category) in ROYALTY_FIELDS.items():
        if check.values[row].category is category:
            amounts[row] = getattr(rule_set, field)
    return (amounts[0], amounts[1], amounts[2])


def royalty_units(
    rule_set: RuleSet,
    rows: tuple[int, int, int],
    first: tuple[int, int, int],
    second: tuple[int, int, int],
) -> int:
    """The royalty units the first seat gains from the second (negative: pays), given the row
    results from its side and each seat's :func:`row_royalties`."""
    if rule_set.royalties is RoyaltyPayment.NONE:
        return 0
    if rule_set.royalties is RoyaltyPayment.WON_ROW:
        mine = [amount for amount, result in zip(first, rows, strict=True) if result == 1]
        theirs = [amount for amount, result in zip(second, rows, strict=True) if result == -1]
    else:
        mine, theirs = list(first), list(second)
    combine: Callable[[Iterable[int]], int] = (
        _largest if rule_set.royalty_limit is RoyaltyLimit.LARGEST_ONLY else sum
    )
    return combine(mine) - combine(theirs)


def _largest(amounts: Iterable[int]) -> int:
    return max(amounts, default=0)


def royalty_bound(rule_set: RuleSet) -> int:
    """The most royalty units one seat can collect from one opponent in one deal."""
    if rule_set.royalties is RoyaltyPayment.NONE:
        return 0
    best = [0, 0, 0]
    for field, (row, _) in ROYALTY_FIELDS.items():
        best[row] = max(best[row], getattr(rule_set, field))
    return max(best) if rule_set.royalty_limit is RoyaltyLimit.LARGEST_ONLY else sum(best)

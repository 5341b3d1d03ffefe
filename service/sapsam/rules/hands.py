"""Hand values for the 5-card rows (middle, back) and the 3-card front.

One value type, :class:`HandValue`, orders every row against every other row, whatever its size
(docs/rules.md §1.3-§1.4): compare the category, then the group ranks (quads, the trips of a full
house, the pairs from high to low), then the kickers from high to low, where **a missing kicker is
weaker than any real card**. So front ``Q Q K`` is weaker than middle ``Q Q K 3 2``, and front
``A A K`` is stronger than middle ``K K Q J T``. Suits never break ties. The front knows only three
of a kind, pair and high card; 5-card rows know all nine categories, the ace plays high and also
low in the wheel ``A 2 3 4 5`` (a five-high straight, the lowest one); there is no wrap-around.

Every distinct value (7,462 for five cards, 455 for three) has its place in a table shipped with
the package (``data/hand_values.bin``, made by ``sapsam.rules.hand_table``, which enumerates rank
multisets rather than hands); loading it takes a fraction of a millisecond. Each value's object is
made the first time it is evaluated and then shared: the evaluators always return the same object
for one value. Evaluating five cards is a handful of table lookups: the product of one prime per
rank identifies the rank multiset (the classic Cactus Kev trick), and a flush needs only the five
suits to agree.
"""

from __future__ import annotations

import os
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Final

from sapsam.rules.cards import RANK_CHARS, RANK_NAMES, RANK_PLURALS

__all__ = [
    "ALL_VALUES",
    "FIVE_CARD_VALUES",
    "THREE_CARD_VALUES",
    "Category",
    "HandValue",
    "evaluate",
    "evaluate3",
    "evaluate5",
]


class Category(IntEnum):
    """Hand categories; a larger number is a stronger category, for 5- and 3-card rows alike."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8


ACE: Final = 12
FIVE: Final = 3  # the top card of the wheel A-2-3-4-5
KEY_LENGTH: Final = 5  # the longest comparison key (high card or flush: five ranks)
_MISSING: Final = -1  # a missing kicker ranks below the deuce (rank 0)


@dataclass(frozen=True, slots=True, eq=False)
class HandValue:
    """The value of one row: a category and its comparison ranks; totally ordered over both sizes.

    ``ranks`` holds the group ranks (quads; trips then pair of a full house; pairs high to low; a
    trips) and then the kickers high to low, ranks ``0 .. 12`` meaning ``2 .. A``. A straight or
    straight flush is keyed by its top card alone (the wheel's top is the five, rank 3). ``size``
    is the number of cards in the row, 3 or 5. ``strength`` is one integer, the value's position in
    the sorted order of all 7,917 distinct values of both sizes, so ``a < b`` exactly when
    ``a.strength < b.strength``; a 3-card value never equals a 5-card value.

    Values are shared: the evaluators return one object per distinct value, so ``is`` also works,
    but compare with ``==`` (it compares strengths).
    """

    category: Category
    ranks: tuple[int, ...]
    size: int
    strength: int

    @property
    def key(self) -> tuple[int, ...]:
        """The category then the ranks, padded with ``-1`` (missing kickers) to a fixed length.

        Ordering these tuples lexicographically is the rule book's order; ``strength`` is built
        from it.
        """
        return _comparison_key(self.category, self.ranks)

    def describe(self) -> str:
        """The value in words, e.g. ``"pair of sevens, kickers 9 5 3"``."""
        return _describe(self.category, self.ranks)

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return f"HandValue({self.category.name}, ranks={self.ranks}, size={self.size})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HandValue):
            return NotImplemented
        return self.strength == other.strength

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, HandValue):
            return NotImplemented
        return self.strength != other.strength

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, HandValue):
            return NotImplemented
        return self.strength < other.strength

    def __le__(self, other: object) -> bool:
        if not isinstance(other, HandValue):
            return NotImplemented
        return self.strength <= other.strength

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, HandValue):
            return NotImplemented
        return self.strength > other.strength

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, HandValue):
            return NotImplemented
        return self.strength >= other.strength

    def __hash__(self) -> int:
        return hash(self.strength)


def _comparison_key(category: int, ranks: tuple[int, ...]) -> tuple[int, ...]:
    return (category, *ranks, *(_MISSING,) * (KEY_LENGTH - len(ranks)))


# ---------------------------------------------------------------------------------------------
# Words


def _describe(category: Category, ranks: tuple[int, ...]) -> str:
    top = ranks[0]

    def kickers(rest: tuple[int, ...]) -> str:
        if not rest:
            return ""
        label = "kicker" if len(rest) == 1 else "kickers"
        return f", {label} " + " ".join(RANK_CHARS[rank] for rank in rest)

    if category == Category.STRAIGHT_FLUSH:
        royal = " (royal flush)" if top == ACE else ""
        return f"{RANK_NAMES[top]}-high straight flush{royal}"
    if category == Category.FOUR_OF_A_KIND:
        return f"four of a kind, {RANK_PLURALS[top]}{kickers(ranks[1:])}"
    if category == Category.FULL_HOUSE:
        return f"full house, {RANK_PLURALS[top]} over {RANK_PLURALS[ranks[1]]}"
    if category == Category.FLUSH:
        return f"{RANK_NAMES[top]}-high flush{kickers(ranks[1:])}"
    if category == Category.STRAIGHT:
        return f"{RANK_NAMES[top]}-high straight"
    if category == Category.THREE_OF_A_KIND:
        return f"three of a kind, {RANK_PLURALS[top]}{kickers(ranks[1:])}"
    if category == Category.TWO_PAIR:
        return f"two pair, {RANK_PLURALS[top]} and {RANK_PLURALS[ranks[1]]}{kickers(ranks[2:])}"
    if category == Category.PAIR:
        return f"pair of {RANK_PLURALS[top]}{kickers(ranks[1:])}"
    return f"{RANK_NAMES[top]} high{kickers(ranks[1:])}"


# ---------------------------------------------------------------------------------------------
# Every distinct value: loaded from the shipped table, each value object made on first use

# One prime per rank: the product of a hand's primes names its rank multiset uniquely.
_RANK_PRIMES: Final = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
_WHEEL: Final = (ACE, 3, 2, 1, 0)
_DESCENDING: Final = range(ACE, -1, -1)

TABLE_FILE: Final = "hand_values.bin"
"""The table's file in ``sapsam/rules/data`` (made and described by ``sapsam.rules.hand_table``)."""
VALUE_COUNT: Final = 7_917
FRONT_COUNT: Final = 455
UNSUITED_COUNT: Final = 6_175
SUITED_COUNT: Final = 1_287
THREE_CARD_FLAG: Final = 16
SUITED_FLAG: Final = 32


def _load() -> tuple[array[int], bytes, dict[int, int], dict[int, int], dict[int, int]]:
    """The shipped table: product and kind by strength, and each evaluator table's strengths by
    product (front, five unsuited, five suited). About 0.3 ms, against ~20 ms to build it."""
    with open(os.path.join(os.path.dirname(__file__), "data", TABLE_FILE), "rb") as file:
        data = file.read()
    products = array("I")
    products.frombytes(data[: 4 * VALUE_COUNT])
    strengths = array("H")
    strengths.frombytes(data[5 * VALUE_COUNT :])
    if sys.byteorder == "big":  # the file is little-endian
        products.byteswap()
        strengths.byteswap()
    kinds = data[4 * VALUE_COUNT : 5 * VALUE_COUNT]
    if len(kinds) != VALUE_COUNT or len(strengths) != VALUE_COUNT:
        raise RuntimeError(f"{TABLE_FILE} is damaged: reinstall the package")
    tables = []
    start = 0
    for count in (FRONT_COUNT, UNSUITED_COUNT, SUITED_COUNT):
        group = strengths[start : start + count]
        tables.append(dict(zip(map(products.__getitem__, group), group, strict=True)))
        start += count
    return products, kinds, tables[0], tables[1], tables[2]


_PRODUCTS, _KINDS, _FRONT_STRENGTH, _UNSUITED_STRENGTH, _SUITED_STRENGTH = _load()
_CATEGORIES: Final = tuple(Category)
_STRAIGHTS: Final = (Category.STRAIGHT, Category.STRAIGHT_FLUSH)
# The value objects made so far, by strength. One object per value even when two threads make
# the same value at once: ``setdefault`` (one step under the GIL) keeps the first one stored.
_MADE: Final[dict[int, HandValue]] = {}


def _value(strength: int) -> HandValue:
    """The one value object of ``strength``, made on first use from the table."""
    made = _MADE.get(strength)
    if made is None:
        kind = _KINDS[strength]
        category = _CATEGORIES[kind & 15]
        size = 3 if kind & THREE_CARD_FLAG else 5
        made = _MADE.setdefault(
            strength,
            HandValue(category, _ranks(category, _PRODUCTS[strength]), size, strength),
        )
    return made


def _ranks(category: Category, product: int) -> tuple[int, ...]:
    """A value's comparison ranks from its rank multiset (the product of its primes): groups by
    size, then kickers, each high to low; a straight's top card alone (the wheel's is the five)."""
    counted: list[tuple[int, int]] = []
    for rank in _DESCENDING:
        prime = _RANK_PRIMES[rank]
        count = 0
        while product % prime == 0:
            product //= prime
            count += 1
        if count:
            counted.append((count, rank))
    counted.sort(reverse=True)  # by group size, then rank: both high to low
    ranks = tuple(rank for _, rank in counted)
    if category in _STRAIGHTS:
        return (FIVE,) if ranks == _WHEEL else ranks[:1]
    return ranks


# The evaluators' tables, product to value, filled as values are first evaluated.
_UNSUITED: Final[dict[int, HandValue]] = {}
_SUITED: Final[dict[int, HandValue]] = {}
_FRONT: Final[dict[int, HandValue]] = {}


def _first_unsuited(product: int) -> HandValue:
    value = _UNSUITED[product] = _value(_UNSUITED_STRENGTH[product])
    return value


def _first_suited(product: int) -> HandValue:
    value = _SUITED[product] = _value(_SUITED_STRENGTH[product])
    return value


def _first_front(product: int) -> HandValue:
    value = _FRONT[product] = _value(_FRONT_STRENGTH[product])
    return value


def __getattr__(name: str) -> tuple[HandValue, ...]:
    """``ALL_VALUES``, ``FIVE_CARD_VALUES`` and ``THREE_CARD_VALUES``, made when first asked for
    (making all 7,917 objects takes ~5 ms that evaluating a few rows does not need)."""
    if name == "ALL_VALUES":
        found = tuple(_value(strength) for strength in range(VALUE_COUNT))
    elif name == "FIVE_CARD_VALUES":
        found = tuple(value for value in __getattr__("ALL_VALUES") if value.size == 5)
    elif name == "THREE_CARD_VALUES":
        found = tuple(value for value in __getattr__("ALL_VALUES") if value.size == 3)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = found
    return found


if TYPE_CHECKING:
    ALL_VALUES: tuple[HandValue, ...]
    """Every distinct value of both sizes, weakest first; ``ALL_VALUES[v.strength] is v``."""
    FIVE_CARD_VALUES: tuple[HandValue, ...]
    """The 7,462 distinct 5-card values, weakest first."""
    THREE_CARD_VALUES: tuple[HandValue, ...]
    """The 455 distinct 3-card values, weakest first."""

# Per-card prime of the card's rank, indexed by card (rank * 4 + suit).
_CARD_PRIME: Final = [_RANK_PRIMES[card >> 2] for card in range(52)]
# Per-card bit, for checking that the cards are distinct; a dict, so that a bad card (negative,
# too large, not an integer) is a KeyError rather than a wrapped-around list index.
_CARD_BIT: Final = {card: 1 << card for card in range(52)}


# ---------------------------------------------------------------------------------------------
# Evaluation


def evaluate5(c1: int, c2: int, c3: int, c4: int, c5: int) -> HandValue:
    """The value of five cards (``0 .. 51``); the fast path, which trusts its input.

    The cards must be valid and distinct; this is not checked (use :func:`evaluate` for untrusted
    input): a repeated card gives a meaningless value or a ``KeyError``.
    """
    # A flush needs five equal suits (card & 3); the chain stops at the first differing suit,
    # which is where almost every hand stops. The prime product names the rank multiset.
    # A value not evaluated before is a KeyError, made then (zero cost on the common path).
    product = (
        _CARD_PRIME[c1] * _CARD_PRIME[c2] * _CARD_PRIME[c3] * _CARD_PRIME[c4] * _CARD_PRIME[c5]
    )
    if c1 & 3 == c2 & 3 == c3 & 3 == c4 & 3 == c5 & 3:
        try:
            return _SUITED[product]
        except KeyError:
            return _first_suited(product)
    try:
        return _UNSUITED[product]
    except KeyError:
        return _first_unsuited(product)


def evaluate3(c1: int, c2: int, c3: int) -> HandValue:
    """The value of a 3-card front; the fast path, which trusts its input (valid, distinct)."""
    product = _CARD_PRIME[c1] * _CARD_PRIME[c2] * _CARD_PRIME[c3]
    try:
        return _FRONT[product]
    except KeyError:
        return _first_front(product)


def evaluate(cards: Sequence[int]) -> HandValue:
    """The value of a row of 3 or 5 distinct cards (``0 .. 51``), checked.

    Raises ``ValueError`` for another number of cards, a card outside ``0 .. 51`` or a repeat.
    """
    count = len(cards)
    # The fast paths are inlined rather than called: this function is the checked entry point
    # for whole hands, and the extra call would cost about a fifth of its time.
    try:
        if count == 5:
            c1, c2, c3, c4, c5 = cards
            bits = _CARD_BIT[c1] | _CARD_BIT[c2] | _CARD_BIT[c3] | _CARD_BIT[c4] | _CARD_BIT[c5]
            if bits.bit_count() == 5:
                product = (
                    _CARD_PRIME[c1]
                    * _CARD_PRIME[c2]
                    * _CARD_PRIME[c3]
                    * _CARD_PRIME[c4]
                    * _CARD_PRIME[c5]
                )
                if c1 & 3 == c2 & 3 == c3 & 3 == c4 & 3 == c5 & 3:
                    try:
                        return _SUITED[product]
                    except KeyError:  # first evaluated: valid distinct cards always have one
                        return _first_suited(product)
                try:
                    return _UNSUITED[product]
                except KeyError:
                    return _first_unsuited(product)
        elif count == 3:
            c1, c2, c3 = cards
            if (_CARD_BIT[c1] | _CARD_BIT[c2] | _CARD_BIT[c3]).bit_count() == 3:
                product = _CARD_PRIME[c1] * _CARD_PRIME[c2] * _CARD_PRIME[c3]
                try:
                    return _FRONT[product]
                except KeyError:
                    return _first_front(product)
        else:
            raise ValueError(f"a row has 3 or 5 cards, not {count}")
    except (KeyError, TypeError, IndexError):
        raise ValueError(f"not a card index 0..51 among {list(cards)!r}") from None
    raise ValueError(f"repeated card among {list(cards)!r}")

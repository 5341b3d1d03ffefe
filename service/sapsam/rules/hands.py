"""Hand values for the 5-card rows (middle, back) and the 3-card front.

One value type, :class:`HandValue`, orders every row against every other row, whatever its size
(docs/rules.md §1.3-§1.4): compare the category, then the group ranks (quads, the trips of a full
house, the pairs from high to low), then the kickers from high to low, where **a missing kicker is
weaker than any real card**. So front ``Q Q K`` is weaker than middle ``Q Q K 3 2``, and front
``A A K`` is stronger than middle ``K K Q J T``. Suits never break ties. The front knows only three
of a kind, pair and high card; 5-card rows know all nine categories, the ace plays high and also
low in the wheel ``A 2 3 4 5`` (a five-high straight, the lowest one); there is no wrap-around.

Every distinct value (7,462 for five cards, 455 for three) is built once at import, by enumerating
rank multisets rather than hands, and the evaluators return these shared objects. Evaluating five
cards is a handful of table lookups: the product of one prime per rank identifies the rank multiset
(the classic Cactus Kev trick), and a flush needs only the five suits to agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import combinations
from typing import Final, TypeAlias

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
_KEY_LENGTH: Final = 5  # the longest comparison key (high card or flush: five ranks)
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
    return (category, *ranks, *(_MISSING,) * (_KEY_LENGTH - len(ranks)))


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
# Every distinct value (built once, at import)

# One prime per rank: the product of a hand's primes names its rank multiset uniquely.
_RANK_PRIMES: Final = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
_WHEEL: Final = (ACE, 3, 2, 1, 0)
_DESCENDING: Final = range(ACE, -1, -1)

# A value's source: comparison key, category, ranks, size, product of its rank primes, suited.
_Entry: TypeAlias = tuple[tuple[int, ...], Category, tuple[int, ...], int, int, bool]


def _entries() -> list[_Entry]:
    """Every distinct value's source, generated category by category with its ranks already in
    comparison order (groups by size, then kickers, each high to low).

    Generating each shape directly, rather than counting and classifying every rank multiset,
    keeps this out of every start-up's way (that took ~45 ms, most of an offline verification).
    """
    primes = _RANK_PRIMES
    pads = [(_MISSING,) * (_KEY_LENGTH - length) for length in range(_KEY_LENGTH + 1)]
    entries: list[_Entry] = []
    add = entries.append

    def value(
        category: Category, ranks: tuple[int, ...], size: int, product: int, suited: bool = False
    ) -> None:
        add(((category, *ranks, *pads[len(ranks)]), category, ranks, size, product, suited))

    for ranks in combinations(_DESCENDING, 5):  # five distinct ranks: suited or not
        product = 1
        for rank in ranks:
            product *= primes[rank]
        top = ranks[0] if ranks[0] - ranks[4] == 4 else FIVE if ranks == _WHEEL else None
        if top is None:
            value(Category.HIGH_CARD, ranks, 5, product)
            value(Category.FLUSH, ranks, 5, product, suited=True)
        else:
            value(Category.STRAIGHT, (top,), 5, product)
            value(Category.STRAIGHT_FLUSH, (top,), 5, product, suited=True)
    for first, second, third in combinations(_DESCENDING, 3):  # a front of three distinct ranks
        product = primes[first] * primes[second] * primes[third]
        value(Category.HIGH_CARD, (first, second, third), 3, product)
    for group in _DESCENDING:  # a pair, trips or quads of ``group``, with kickers
        pair = primes[group] ** 2
        others = tuple(rank for rank in _DESCENDING if rank != group)
        value(Category.THREE_OF_A_KIND, (group,), 3, pair * primes[group])
        for kicker in others:
            value(Category.PAIR, (group, kicker), 3, pair * primes[kicker])
            value(
                Category.FULL_HOUSE, (group, kicker), 5, pair * primes[group] * primes[kicker] ** 2
            )
            value(Category.FOUR_OF_A_KIND, (group, kicker), 5, pair * pair * primes[kicker])
            if kicker < group:  # two pair, high pair first
                low = pair * primes[kicker] ** 2
                for last in others:
                    if last != kicker:
                        value(Category.TWO_PAIR, (group, kicker, last), 5, low * primes[last])
        for first, second in combinations(others, 2):
            value(
                Category.THREE_OF_A_KIND,
                (group, first, second),
                5,
                pair * primes[group] * primes[first] * primes[second],
            )
        for first, second, third in combinations(others, 3):
            value(
                Category.PAIR,
                (group, first, second, third),
                5,
                pair * primes[first] * primes[second] * primes[third],
            )
    return entries


def _build() -> tuple[
    tuple[HandValue, ...], dict[int, HandValue], dict[int, HandValue], dict[int, HandValue]
]:
    entries = _entries()
    entries.sort()  # by comparison key: no two values share one
    values: list[HandValue] = []
    unsuited: dict[int, HandValue] = {}
    suited: dict[int, HandValue] = {}
    front: dict[int, HandValue] = {}
    for strength, (_, category, ranks, size, product, is_suited) in enumerate(entries):
        value = HandValue(category, ranks, size, strength)
        values.append(value)
        if size == 3:
            front[product] = value
        elif is_suited:
            suited[product] = value
        else:
            unsuited[product] = value
    return tuple(values), unsuited, suited, front


_TABLES: Final = _build()
ALL_VALUES: Final = _TABLES[0]
"""Every distinct value of both sizes, weakest first; ``ALL_VALUES[v.strength] is v``."""
_UNSUITED: Final = _TABLES[1]
_SUITED: Final = _TABLES[2]
_FRONT: Final = _TABLES[3]

FIVE_CARD_VALUES: Final = tuple(value for value in ALL_VALUES if value.size == 5)
"""The 7,462 distinct 5-card values, weakest first."""
THREE_CARD_VALUES: Final = tuple(value for value in ALL_VALUES if value.size == 3)
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
    if c1 & 3 == c2 & 3 == c3 & 3 == c4 & 3 == c5 & 3:
        return _SUITED[
            _CARD_PRIME[c1] * _CARD_PRIME[c2] * _CARD_PRIME[c3] * _CARD_PRIME[c4] * _CARD_PRIME[c5]
        ]
    return _UNSUITED[
        _CARD_PRIME[c1] * _CARD_PRIME[c2] * _CARD_PRIME[c3] * _CARD_PRIME[c4] * _CARD_PRIME[c5]
    ]


def evaluate3(c1: int, c2: int, c3: int) -> HandValue:
    """The value of a 3-card front; the fast path, which trusts its input (valid, distinct)."""
    return _FRONT[_CARD_PRIME[c1] * _CARD_PRIME[c2] * _CARD_PRIME[c3]]


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
                    return _SUITED[product]
                return _UNSUITED[product]
        elif count == 3:
            c1, c2, c3 = cards
            if (_CARD_BIT[c1] | _CARD_BIT[c2] | _CARD_BIT[c3]).bit_count() == 3:
                return _FRONT[_CARD_PRIME[c1] * _CARD_PRIME[c2] * _CARD_PRIME[c3]]
        else:
            raise ValueError(f"a row has 3 or 5 cards, not {count}")
    except (KeyError, TypeError, IndexError):
        raise ValueError(f"not a card index 0..51 among {list(cards)!r}") from None
    raise ValueError(f"repeated card among {list(cards)!r}")

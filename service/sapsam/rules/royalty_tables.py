"""Royalty tables: how many units a strong row earns, for the closed and the open-face game alike.

A table is a mapping from a *royalty key* to a number of units. A key names a row and a hand:

* middle and back: ``<row>_<category>`` for ``three_of_a_kind``, ``straight``, ``flush``,
  ``full_house``, ``four_of_a_kind``, ``straight_flush``, plus ``<row>_royal_flush`` (the ace-high
  straight flush);
* front: ``front_pair`` and ``front_three_of_a_kind`` for every rank, and ``front_pair_<R>`` and
  ``front_three_of_a_kind_<R>`` for one rank ``R`` (``2`` .. ``9``, ``T``, ``J``, ``Q``, ``K``,
  ``A``), which the open-face tables grade by rank.

A row's amount is the amount of its most specific key present in the table: a royal flush reads
``<row>_royal_flush`` and, when the table has none, ``<row>_straight_flush``; a front pair of
queens reads ``front_pair_Q``, then ``front_pair``. A hand no key names earns 0. So a table lists
only what it pays, and overriding one amount (``with_amounts``) changes exactly that hand.

The named tables (``ROYALTY_TABLES``) are the ones the sources print (docs/rules.md §2.7):

* ``american`` and ``russian``: the open-face tables of sources 001 and 003 (shared/rules.md §3),
  which differ only in the back's and the middle's quads, straight flush and royal flush;
* ``four_player``: source 004's special-hand bonuses of the closed game;
* ``capsa_susun_flat`` and ``capsa_susun_graded``: source 002's hands, every royalty 1 unit, or
  graded by rarity as its example grades them (back quads 1, back straight flush 2).

This module is pure data and lookups: no rule set, no scoring. The closed game's rule set
(``sapsam.rules.ruleset``) and the open-face rules both read their amounts through
:func:`royalty_amount`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from sapsam.quoting import quote_prefix
from sapsam.rules.cards import RANK_CHARS
from sapsam.rules.hands import ACE, Category, HandValue

ROWS: Final = ("front", "middle", "back")
"""Row names by index, as the keys spell them (0 front, 1 middle, 2 back)."""

FIVE_CARD_HANDS: Final[Mapping[str, Category]] = MappingProxyType(
    {
        "three_of_a_kind": Category.THREE_OF_A_KIND,
        "straight": Category.STRAIGHT,
        "flush": Category.FLUSH,
        "full_house": Category.FULL_HOUSE,
        "four_of_a_kind": Category.FOUR_OF_A_KIND,
        "straight_flush": Category.STRAIGHT_FLUSH,
    }
)
"""The middle's and the back's categories a key may name (``royal_flush`` besides)."""

FRONT_HANDS: Final[Mapping[str, Category]] = MappingProxyType(
    {"pair": Category.PAIR, "three_of_a_kind": Category.THREE_OF_A_KIND}
)
"""The front's categories a key may name, for every rank or for one."""

ROYALTY_KEYS: Final[frozenset[str]] = frozenset(
    [
        *(f"{row}_{hand}" for row in ROWS[1:] for hand in (*FIVE_CARD_HANDS, "royal_flush")),
        *(f"front_{hand}" for hand in FRONT_HANDS),
        *(f"front_{hand}_{rank}" for hand in FRONT_HANDS for rank in RANK_CHARS),
    ]
)
"""Every key a royalty table may hold."""

_CATEGORY_NAMES: Final[Mapping[Category, str]] = MappingProxyType(
    {category: name for name, category in FIVE_CARD_HANDS.items()}
)


class RoyaltyTableError(ValueError):
    """A royalty table names an unknown key or an amount that is not a non-negative integer."""


def royalty_keys(row: int, value: HandValue) -> tuple[str, ...]:
    """The keys a row's value reads, most specific first (empty: no key names it)."""
    category = value.category
    if row == 0:
        if category not in (Category.PAIR, Category.THREE_OF_A_KIND):
            return ()
        hand = "pair" if category is Category.PAIR else "three_of_a_kind"
        return (f"front_{hand}_{RANK_CHARS[value.ranks[0]]}", f"front_{hand}")
    name = _CATEGORY_NAMES.get(category)
    if name is None:
        return ()
    row_name = ROWS[row]
    if category is Category.STRAIGHT_FLUSH and value.ranks[0] == ACE:
        return (f"{row_name}_royal_flush", f"{row_name}_{name}")
    return (f"{row_name}_{name}",)


def royalty_amount(amounts: Mapping[str, int], row: int, value: HandValue) -> int:
    """The units row ``row`` (0 front, 1 middle, 2 back) earns with ``value`` under ``amounts``:
    the amount of its most specific key present, else 0."""
    for key in royalty_keys(row, value):
        amount = amounts.get(key)
        if amount is not None:
            return amount
    return 0


def check_amounts(amounts: Mapping[str, object], maximum: int | None = None) -> dict[str, int]:
    """``amounts`` as a plain dict, checked: every key in ``ROYALTY_KEYS``, every amount an
    integer from 0 to ``maximum`` (no maximum when ``None``). Raises :class:`RoyaltyTableError`
    naming the first bad key."""
    if not isinstance(amounts, Mapping):
        raise RoyaltyTableError(
            f"royalty amounts must be an object of key: units, got {type(amounts).__name__}"
        )
    checked: dict[str, int] = {}
    for key in sorted(amounts, key=str):
        if key not in ROYALTY_KEYS:
            raise RoyaltyTableError(
                f"unknown royalty key {quote_prefix(key)} (keys are <row>_<hand>, e.g. "
                "back_four_of_a_kind, middle_royal_flush, front_pair_Q: docs/rules.md §2.7)"
            )
        amount = amounts[key]
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
            raise RoyaltyTableError(
                f"royalty {key!r} must be a non-negative integer, got {quote_prefix(amount)}"
            )
        if maximum is not None and amount > maximum:
            raise RoyaltyTableError(f"royalty {key!r} must be in 0..{maximum}, got {amount}")
        checked[key] = amount
    return checked


@dataclass(frozen=True)
class RoyaltyTable:
    """A named royalty table: its amounts (``amounts``, key: units), a one-line description and
    the sources it comes from."""

    name: str
    description: str
    sources: tuple[str, ...]
    amounts: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "amounts", MappingProxyType(check_amounts(self.amounts)))

    def amount(self, row: int, value: HandValue) -> int:
        """The units row ``row`` earns with ``value`` (:func:`royalty_amount`)."""
        return royalty_amount(self.amounts, row, value)

    def with_amounts(self, overrides: Mapping[str, int]) -> dict[str, int]:
        """This table's amounts with ``overrides`` applied (a key set to 0 pays nothing)."""
        return check_amounts({**self.amounts, **overrides})


def _graded_front() -> dict[str, int]:
    # 001 and 003: pairs 66 (1) .. AA (9), trips 222 (10) .. AAA (22), one unit per rank.
    six = RANK_CHARS.index("6")
    pairs = {f"front_pair_{RANK_CHARS[rank]}": rank - six + 1 for rank in range(six, ACE + 1)}
    trips = {f"front_three_of_a_kind_{char}": 10 + rank for rank, char in enumerate(RANK_CHARS)}
    return {**pairs, **trips}


def _rows(row: str, amounts: Iterable[tuple[str, int]]) -> dict[str, int]:
    return {f"{row}_{hand}": units for hand, units in amounts}


_OPEN_FACE_BACK_LOW: Final = (("straight", 2), ("flush", 4), ("full_house", 6))
_OPEN_FACE_MIDDLE_LOW: Final = (("three_of_a_kind", 2), ("straight", 4), ("flush", 8))

AMERICAN: Final = RoyaltyTable(
    name="american",
    description="Open-face 'American' royalties (sources 001, 003): back straight 2, flush 4, "
    "full house 6, quads 10, straight flush 15, royal 25; middle twice those, trips 2; front "
    "pairs 66..AA 1..9, trips 222..AAA 10..22.",
    sources=("001", "003"),
    amounts={
        **_rows(
            "back",
            (
                *_OPEN_FACE_BACK_LOW,
                ("four_of_a_kind", 10),
                ("straight_flush", 15),
                ("royal_flush", 25),
            ),
        ),
        **_rows(
            "middle",
            (
                *_OPEN_FACE_MIDDLE_LOW,
                ("full_house", 12),
                ("four_of_a_kind", 20),
                ("straight_flush", 30),
                ("royal_flush", 50),
            ),
        ),
        **_graded_front(),
    },
)

RUSSIAN: Final = RoyaltyTable(
    name="russian",
    description="Open-face 'Russian' royalties (source 003): as american but back quads 8, "
    "straight flush 10, royal 15; middle quads 16, straight flush 20, royal 30.",
    sources=("003",),
    amounts={
        **_rows(
            "back",
            (
                *_OPEN_FACE_BACK_LOW,
                ("four_of_a_kind", 8),
                ("straight_flush", 10),
                ("royal_flush", 15),
            ),
        ),
        **_rows(
            "middle",
            (
                *_OPEN_FACE_MIDDLE_LOW,
                ("full_house", 12),
                ("four_of_a_kind", 16),
                ("straight_flush", 20),
                ("royal_flush", 30),
            ),
        ),
        **_graded_front(),
    },
)

FOUR_PLAYER: Final = RoyaltyTable(
    name="four_player",
    description="Source 004's special-hand bonuses: front trips 3, middle full house 2, middle "
    "or back quads 4, straight flush (royal included) 5.",
    sources=("004",),
    amounts={
        "front_three_of_a_kind": 3,
        "middle_full_house": 2,
        "middle_four_of_a_kind": 4,
        "middle_straight_flush": 5,
        "back_four_of_a_kind": 4,
        "back_straight_flush": 5,
    },
)

_CAPSA_SUSUN_HANDS: Final = (
    "front_three_of_a_kind",
    "middle_full_house",
    "middle_four_of_a_kind",
    "middle_straight_flush",
    "back_four_of_a_kind",
    "back_straight_flush",
)

CAPSA_SUSUN_FLAT: Final = RoyaltyTable(
    name="capsa_susun_flat",
    description="Source 002's royalty hands (front trips, middle full house or better, quads, "
    "straight flush), every one 1 unit.",
    sources=("002",),
    amounts=dict.fromkeys(_CAPSA_SUSUN_HANDS, 1),
)

CAPSA_SUSUN_GRADED: Final = RoyaltyTable(
    name="capsa_susun_graded",
    description="Source 002's royalty hands graded by rarity as its example grades them: quads "
    "1 unit, a straight flush 2, front trips and a middle full house 1.",
    sources=("002",),
    amounts={
        **dict.fromkeys(_CAPSA_SUSUN_HANDS, 1),
        "middle_straight_flush": 2,
        "back_straight_flush": 2,
    },
)

ROYALTY_TABLES: Final[Mapping[str, RoyaltyTable]] = MappingProxyType(
    {
        table.name: table
        for table in (AMERICAN, RUSSIAN, FOUR_PLAYER, CAPSA_SUSUN_FLAT, CAPSA_SUSUN_GRADED)
    }
)
"""Every named table, by name."""


def royalty_table(name: str) -> RoyaltyTable:
    """The table called ``name``; an unknown name raises :class:`RoyaltyTableError` listing
    them."""
    try:
        return ROYALTY_TABLES[name]
    except (KeyError, TypeError):
        raise RoyaltyTableError(
            f"unknown royalty table {quote_prefix(name)} "
            f"(known tables: {', '.join(ROYALTY_TABLES)})"
        ) from None

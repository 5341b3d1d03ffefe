"""Naturals: whole 13-card hands that win automatically (docs/rules.md §2.9; rules version 5 on).

A natural is a property of the 13 cards a seat was dealt, not of how it set them: 002 says the
player holding one «nu își pune mâna», "does not set their hand". So :func:`natural_hand` judges a
declared natural from the dealt cards alone, and when a natural is decided by rows (three
straights, three flushes) it finds the rows that compare best itself, so two such naturals are
compared the same way by every verifier whatever rows the seats revealed.

The table of naturals a rule set plays is its ``naturals`` (:class:`NaturalsTable`):

* ``none``: no naturals (the default; every rule set of rules versions 1 to 4).
* ``classic``: the four of sources 002 and 004, each amount a rule-set field
  (``NATURAL_FIELDS``): six pairs 3, three straights 3, three flushes 3, dragon 13 (004:
  «Sześć par. 6 par + 1 karta nieparzysta. 3 jednostki», …, «Kompletny strit. … 13 jednostek»).
* ``extended``: the classic four plus the specials 十三水 (Thirteen Waters) servers commonly add
  (:data:`EXTENDED_AMOUNTS`; no source gives them, the amounts are sapsam's choice). Rules version
  7 added three straight flushes (三同花顺) to it (:data:`NATURAL_SINCE_VERSION`): an ``extended``
  rule set of versions 5 and 6 plays the others only, so its deals replay as they were scored.

Between two seats (:func:`natural_units`): a natural beats every ordinary hand, a foul included
(004: «wygrywają z każdym innym "zwykłym" układem»), and its holder collects its amount; between
two naturals the stronger kind (:data:`NATURAL_ORDER`) wins and collects its own amount; two of the
same kind compare as 002 says («Dacă doi jucători au șase perechi, jucătorul cu cele mai mari
șase perechi câștigă, altfel este o egalitate»; three flushes and three straights: the higher
back, then middle, then front) and an equal pair ties with no bonus.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from sapsam.rules.arrangement import Arrangement, ArrangementCheck, FoulReason, check_arrangement

if TYPE_CHECKING:
    from sapsam.rules.ruleset import RuleSet

HAND_CARDS: Final = 13


class NaturalsTable(StrEnum):
    """Which naturals a rule set plays (see the module documentation)."""

    NONE = "none"
    CLASSIC = "classic"
    EXTENDED = "extended"


class SixPairsCounting(StrEnum):
    """What counts as six pairs.

    * ``any_group``: six disjoint pairs of equal rank and one card left, so four of a kind counts
      as two pairs and three of a kind as a pair and the odd card (004's «6 par + 1 karta
      nieparzysta», six pairs and one odd card, read as it is written; the default).
    * ``distinct_ranks``: six ranks held exactly twice and one rank once.
    """

    ANY_GROUP = "any_group"
    DISTINCT_RANKS = "distinct_ranks"


class Natural(StrEnum):
    """A declaration: ``none`` or the natural a seat claims to hold."""

    NONE = "none"
    SIX_PAIRS = "six_pairs"
    THREE_STRAIGHTS = "three_straights"
    THREE_FLUSHES = "three_flushes"
    DRAGON = "dragon"
    # The extended table (NaturalsTable.EXTENDED) only.
    FIVE_PAIRS_AND_TRIPS = "five_pairs_and_trips"
    FOUR_TRIPS = "four_trips"
    ONE_COLOUR = "one_colour"
    ALL_LOW = "all_low"
    ALL_HIGH = "all_high"
    THREE_QUADS = "three_quads"
    TWELVE_ROYALS = "twelve_royals"
    SUPREME_DRAGON = "supreme_dragon"
    THREE_STRAIGHT_FLUSHES = "three_straight_flushes"  # from rules version 7


# Read for every seat judged: a module constant (reading a member off its enum class goes through
# EnumType's __getattr__ hook in Python 3.11, about 900 instructions a read).
_NO_NATURAL: Final = Natural.NONE

CLASSIC_NATURALS: Final = (
    Natural.SIX_PAIRS,
    Natural.THREE_STRAIGHTS,
    Natural.THREE_FLUSHES,
    Natural.DRAGON,
)

NATURAL_FIELDS: Final[Mapping[Natural, str]] = MappingProxyType(
    {natural: f"natural_{natural.value}" for natural in CLASSIC_NATURALS}
)
"""The rule-set field holding each classic natural's amount in units."""

EXTENDED_AMOUNTS: Final[Mapping[Natural, int]] = MappingProxyType(
    {
        Natural.FIVE_PAIRS_AND_TRIPS: 5,
        Natural.FOUR_TRIPS: 8,
        Natural.ONE_COLOUR: 10,
        Natural.ALL_LOW: 10,
        Natural.ALL_HIGH: 10,
        Natural.THREE_QUADS: 20,
        Natural.TWELVE_ROYALS: 24,
        Natural.SUPREME_DRAGON: 52,
        Natural.THREE_STRAIGHT_FLUSHES: 18,
    }
)
"""The extended table's specials and their units (fixed: recorded by the rule set's
``naturals = extended`` and rules version, so an old deal replays the same)."""

NATURAL_ORDER: Final[tuple[Natural, ...]] = (
    Natural.SIX_PAIRS,
    Natural.THREE_STRAIGHTS,
    Natural.THREE_FLUSHES,
    Natural.FIVE_PAIRS_AND_TRIPS,
    Natural.FOUR_TRIPS,
    Natural.ONE_COLOUR,
    Natural.ALL_LOW,
    Natural.ALL_HIGH,
    Natural.DRAGON,
    Natural.THREE_STRAIGHT_FLUSHES,
    Natural.THREE_QUADS,
    Natural.TWELVE_ROYALS,
    Natural.SUPREME_DRAGON,
)
"""Weakest first. The sources rank no natural against another but the dragon (13 units against 3):
flushes above straights above pairs, as in a poker row, and the extended specials by their amount
(the dragon placed among them by its 13 units)."""

_STRENGTH: Final = {natural: index for index, natural in enumerate(NATURAL_ORDER)}

NATURAL_SINCE_VERSION: Final[Mapping[Natural, int]] = MappingProxyType(
    {Natural.THREE_STRAIGHT_FLUSHES: 7}
)
"""The rules version that added each natural not in version 5's tables: a rule set of an earlier
version does not play it (declaring it is a false declaration, a foul, as it was then)."""

_CLASSIC_ORDER: Final = tuple(natural for natural in NATURAL_ORDER if natural in CLASSIC_NATURALS)
_EXTENDED_BEFORE_VERSION_7: Final = tuple(
    n for n in NATURAL_ORDER if n not in NATURAL_SINCE_VERSION
)


def playable_naturals(rule_set: RuleSet) -> tuple[Natural, ...]:
    """The naturals a seat may declare under ``rule_set``, weakest first (empty under ``none``)."""
    if rule_set.naturals is NaturalsTable.NONE:
        return ()
    if rule_set.naturals is NaturalsTable.CLASSIC:
        return _CLASSIC_ORDER
    # Constant tuples: natural_hand asks once per natural, for every hand a client holds.
    return NATURAL_ORDER if rule_set.rules_version >= 7 else _EXTENDED_BEFORE_VERSION_7


def natural_amount(rule_set: RuleSet, natural: Natural) -> int:
    """The units ``natural`` collects from each opponent it beats."""
    field = NATURAL_FIELDS.get(natural)
    return int(getattr(rule_set, field)) if field is not None else EXTENDED_AMOUNTS[natural]


@dataclass(frozen=True)
class NaturalHand:
    """A real natural: its kind and the key two naturals of that kind compare by (larger wins;
    equal ties): the pairs' ranks high to low for six pairs; the back's, middle's and front's
    straight tops, or flush ranks high to low, for three straights and three flushes; empty for
    the others, which tie with their own kind."""

    natural: Natural
    key: tuple[int, ...]


# --- detection -------------------------------------------------------------------------------


def _ranks(cards: Iterable[int]) -> list[int]:
    return [card >> 2 for card in cards]


def _six_pairs(cards: Collection[int], counting: SixPairsCounting) -> tuple[int, ...] | None:
    counts = Counter(_ranks(cards))
    if counting is SixPairsCounting.DISTINCT_RANKS:
        if sorted(counts.values()) != [1, 2, 2, 2, 2, 2, 2]:
            return None
    elif sum(count // 2 for count in counts.values()) != 6:
        return None
    # Compared pair by pair from the highest (four of a kind gives two pairs of its rank); the
    # odd card does not count (002: else it is a tie).
    pairs = (rank for rank, count in counts.items() for _ in range(count // 2))
    return tuple(sorted(pairs, reverse=True))


def _straight_tops(size: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """Every straight of ``size`` ranks as (top rank, its ranks), ace high and also low (A-2-3,
    A-2-3-4-5, whose top is the 3 or the 5), no wrap-around."""
    result = [(top, tuple(range(top - size + 1, top + 1))) for top in range(size - 1, 13)]
    low = (12, *range(size - 1))  # the ace with 2 .. size-1
    result.append((size - 2, low))
    return tuple(result)


_FIVE_STRAIGHTS_HIGH_FIRST: Final = tuple(sorted(_straight_tops(5), reverse=True))
_FRONT_STRAIGHT_TOPS: Final = {tuple(sorted(ranks)): top for top, ranks in _straight_tops(3)}


def _three_straights(cards: Collection[int]) -> tuple[int, ...] | None:
    # Rows are compared by their straights' top cards (a straight's value, docs/rules.md §1.3).
    # The back and the middle fix the front (the three cards left), so the first pair found,
    # walking both from the highest top down, gives the largest (back, middle, front) key.
    counts = [0] * 13
    for rank in _ranks(cards):
        counts[rank] += 1
    if max(counts) > 3:  # a rank is in at most one straight of each row
        return None
    for back_top, back in _FIVE_STRAIGHTS_HIGH_FIRST:
        if not all(counts[rank] for rank in back):
            continue
        for rank in back:
            counts[rank] -= 1
        for middle_top, middle in _FIVE_STRAIGHTS_HIGH_FIRST:
            if middle_top > back_top or not all(counts[rank] for rank in middle):
                continue  # a middle above the back: the same rows exchanged were tried first
            left = [rank for rank in range(13) for _ in range(counts[rank] - (rank in middle))]
            front_top = _FRONT_STRAIGHT_TOPS.get(tuple(left))
            if front_top is not None:
                return (back_top, middle_top, front_top)
        for rank in back:
            counts[rank] += 1
    return None


_FLUSH_SUIT_COUNTS: Final = ([13], [3, 10], [5, 8], [3, 5, 5])


def _three_flushes(cards: Collection[int]) -> tuple[int, ...] | None:
    # Each row is one suit; a suit's cards fill its rows from the top: the back first, then the
    # middle, then the front, which is the largest key for that choice of suits.
    by_suit: dict[int, list[int]] = {}
    for card in cards:
        by_suit.setdefault(card & 3, []).append(card >> 2)
    # Rows of 3, 5 and 5 of one suit each: only these suit counts can make them (most hands stop
    # here, before the 64 choices of suits are tried).
    if sorted(map(len, by_suit.values())) not in _FLUSH_SUIT_COUNTS:
        return None
    best: tuple[int, ...] | None = None
    for front_suit, middle_suit, back_suit in itertools.product(range(4), repeat=3):
        sizes = Counter({back_suit: 5}) + Counter({middle_suit: 5}) + Counter({front_suit: 3})
        if any(len(by_suit.get(suit, ())) != size for suit, size in sizes.items()):
            continue
        pools = {suit: sorted(ranks, reverse=True) for suit, ranks in by_suit.items()}
        back = pools[back_suit][:5]
        pools[back_suit] = pools[back_suit][5:]
        middle = pools[middle_suit][:5]
        pools[middle_suit] = pools[middle_suit][5:]
        front = pools[front_suit][:3]
        key = (*back, *middle, *front)
        if best is None or key > best:
            best = key
    return best


def _straight_flushes(size: int) -> tuple[tuple[int, frozenset[int]], ...]:
    """Every straight flush of ``size`` cards as (top rank, its cards), highest top first."""
    return tuple(
        sorted(
            (
                (top, frozenset(rank * 4 + suit for rank in ranks))
                for suit in range(4)
                for top, ranks in _straight_tops(size)
            ),
            key=lambda flush: flush[0],
            reverse=True,
        )
    )


_FIVE_CARD_STRAIGHT_FLUSHES: Final = _straight_flushes(5)
_FRONT_STRAIGHT_FLUSH_TOPS: Final = {cards: top for top, cards in _straight_flushes(3)}


def _three_straight_flushes(cards: Collection[int]) -> tuple[int, ...] | None:
    # 三同花顺: two 5-card straight flushes and a 3-card one. Keyed as three straights are (the
    # back's top, the middle's, the front's), the largest key any split of the cards gives.
    # Each row is one suit, so only the suit counts of three flushes can hold them.
    if sorted(Counter(card & 3 for card in cards).values()) not in _FLUSH_SUIT_COUNTS:
        return None
    held = frozenset(cards)
    best: tuple[int, ...] | None = None
    for back_top, back in _FIVE_CARD_STRAIGHT_FLUSHES:
        if not back <= held:
            continue
        rest = held - back
        for middle_top, middle in _FIVE_CARD_STRAIGHT_FLUSHES:
            if middle_top > back_top or not middle <= rest:
                continue  # a middle above the back: the same rows exchanged are tried too
            front_top = _FRONT_STRAIGHT_FLUSH_TOPS.get(rest - middle)
            if front_top is not None and (best is None or (back_top, middle_top, front_top) > best):
                best = (back_top, middle_top, front_top)
    return best


def _rank_counts(cards: Iterable[int]) -> list[int]:
    return sorted(Counter(_ranks(cards)).values(), reverse=True)


def _dragon(cards: Collection[int]) -> tuple[int, ...] | None:
    return () if len(set(_ranks(cards))) == HAND_CARDS else None


def _supreme_dragon(cards: Collection[int]) -> tuple[int, ...] | None:
    return () if _dragon(cards) is not None and len({card & 3 for card in cards}) == 1 else None


def _when(condition: bool) -> tuple[int, ...] | None:
    return () if condition else None


def natural_hand(rule_set: RuleSet, natural: Natural, dealt: Collection[int]) -> NaturalHand | None:
    """The natural ``natural`` if the 13 ``dealt`` cards hold it under ``rule_set``, else None
    (then a declaration of it is false: a foul). ``Natural.NONE`` and a natural the rule set does
    not play are never held."""
    if natural is Natural.NONE or natural not in playable_naturals(rule_set):
        return None
    cards = list(dealt)
    if len(cards) != HAND_CARDS or len(set(cards)) != HAND_CARDS:
        return None
    key = _KEY_OF[natural](cards, rule_set)
    return None if key is None else NaturalHand(natural, key)


_KEY_OF: Final[dict[Natural, Callable[[list[int], RuleSet], tuple[int, ...] | None]]] = {
    Natural.SIX_PAIRS: lambda cards, rules: _six_pairs(cards, rules.natural_six_pairs_counting),
    Natural.THREE_STRAIGHTS: lambda cards, rules: _three_straights(cards),
    Natural.THREE_FLUSHES: lambda cards, rules: _three_flushes(cards),
    Natural.DRAGON: lambda cards, rules: _dragon(cards),
    # 五对三条: five pairs and three of a kind.
    Natural.FIVE_PAIRS_AND_TRIPS: lambda cards, rules: _when(
        _rank_counts(cards) == [3, 2, 2, 2, 2, 2]
    ),
    # 四套三条: four three-of-a-kinds and one card.
    Natural.FOUR_TRIPS: lambda cards, rules: _when(
        sum(count // 3 for count in _rank_counts(cards)) == 4
    ),
    # 凑一色: every card red (diamonds, hearts) or every card black (clubs, spades).
    Natural.ONE_COLOUR: lambda cards, rules: _when(
        len({(card & 3) in (1, 2) for card in cards}) == 1
    ),
    # 全小: every card 8 or lower; 全大: every card 8 or higher.
    Natural.ALL_LOW: lambda cards, rules: _when(max(_ranks(cards)) <= 6),
    Natural.ALL_HIGH: lambda cards, rules: _when(min(_ranks(cards)) >= 6),
    # 三分天下: three four-of-a-kinds and one card.
    Natural.THREE_QUADS: lambda cards, rules: _when(_rank_counts(cards)[:3] == [4, 4, 4]),
    # 十二皇族: every card a jack, queen, king or ace.
    Natural.TWELVE_ROYALS: lambda cards, rules: _when(min(_ranks(cards)) >= 9),
    # 至尊清龙: a dragon of one suit.
    Natural.SUPREME_DRAGON: lambda cards, rules: _supreme_dragon(cards),
    # 三同花顺: three straight flushes (rules version 7 on).
    Natural.THREE_STRAIGHT_FLUSHES: lambda cards, rules: _three_straight_flushes(cards),
}


def naturals_held(rule_set: RuleSet, dealt: Collection[int]) -> tuple[NaturalHand, ...]:
    """Every natural the 13 cards hold under ``rule_set``, strongest first (what a client offers
    to declare; the first is the one to declare)."""
    held = (natural_hand(rule_set, natural, dealt) for natural in playable_naturals(rule_set))
    return tuple(sorted((hand for hand in held if hand is not None), key=_order, reverse=True))


def _order(hand: NaturalHand) -> tuple[int, tuple[int, ...]]:
    return (_STRENGTH[hand.natural], hand.key)


def declared(text: str | None) -> Natural:
    """A recorded declaration as a :class:`Natural`: ``None`` (never opened) and any name this
    code does not know read as ``none`` (decide refuses unknown names, so the log holds none)."""
    try:
        return Natural(text) if text is not None else _NO_NATURAL
    except ValueError:
        return _NO_NATURAL


def judge_seat(
    rule_set: RuleSet, arrangement: Arrangement, dealt: Collection[int], natural: Natural
) -> tuple[ArrangementCheck, NaturalHand | None]:
    """A seat's verdict with its declaration (docs/rules.md §1.5, §2.9): the rows' sizes and
    cards first; then a declared natural, real (no foul, its rows judged no further, the natural
    returned) or false (a foul, ``FALSE_NATURAL``); without one, the rows' order."""
    check = check_arrangement(arrangement, dealt, rule_set.strict_row_order)
    if natural is _NO_NATURAL or check.reason in (
        FoulReason.WRONG_ROW_SIZE,
        FoulReason.NOT_DEALT_CARDS,
    ):
        return check, None
    hand = natural_hand(rule_set, natural, dealt)
    if hand is None:
        detail = f"declared {natural.value}, which these 13 cards do not hold"
        return ArrangementCheck(True, FoulReason.FALSE_NATURAL, detail, check.values), None
    return ArrangementCheck(False, None, "", check.values), hand


# --- scoring ---------------------------------------------------------------------------------


def compare_naturals(first: NaturalHand, second: NaturalHand) -> int:
    """+1 when ``first`` is the stronger natural, -1 when ``second`` is, 0 for a tie."""
    mine, theirs = _order(first), _order(second)
    return (mine > theirs) - (mine < theirs)


@dataclass(frozen=True)
class NaturalSettlement:
    """How a pair settles because of naturals, from the first seat's side: ``outcome`` +1 (its
    natural wins), -1 (the other's does) or 0 (equal naturals); ``units`` what it gains."""

    outcome: int
    units: int


def natural_settlement(
    rule_set: RuleSet, first: NaturalHand | None, second: NaturalHand | None
) -> NaturalSettlement | None:
    """The pair's settlement by naturals, or ``None`` when neither seat holds one (the pair is
    then scored by its rows). A natural beats any hand without one, a foul included; the stronger
    of two naturals collects its own amount; equal ones tie and nothing changes hands (002)."""
    if first is None and second is None:
        return None
    if second is None:
        assert first is not None
        return NaturalSettlement(1, natural_amount(rule_set, first.natural))
    if first is None:
        return NaturalSettlement(-1, -natural_amount(rule_set, second.natural))
    outcome = compare_naturals(first, second)
    winner = first if outcome > 0 else second
    return NaturalSettlement(outcome, outcome * natural_amount(rule_set, winner.natural))


def natural_bound(rule_set: RuleSet) -> int:
    """The most units one natural collects from one opponent under ``rule_set`` (0 without)."""
    return max((natural_amount(rule_set, n) for n in playable_naturals(rule_set)), default=0)


__all__ = [
    "CLASSIC_NATURALS",
    "EXTENDED_AMOUNTS",
    "NATURAL_FIELDS",
    "NATURAL_ORDER",
    "NATURAL_SINCE_VERSION",
    "Natural",
    "NaturalHand",
    "NaturalSettlement",
    "NaturalsTable",
    "SixPairsCounting",
    "compare_naturals",
    "declared",
    "judge_seat",
    "natural_amount",
    "natural_bound",
    "natural_hand",
    "natural_settlement",
    "naturals_held",
    "playable_naturals",
]

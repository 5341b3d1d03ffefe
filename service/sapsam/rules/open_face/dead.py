"""Dead hands: a board whose rows cannot end in the order back >= middle >= front.

A finished hand is dead when its rows are out of order (001: «нарушен порядок старшинства
боксов», "the order of the boxes' seniority is broken"; equal rows are allowed, 003: «egalitatea
combinațiilor între rânduri este permisă»). A board still filling is **already dead** when no
way of filling its empty places with cards that may still come (``pool``) puts the rows in
order. That is what the automatic moves need (``sapsam.rules.open_face.automatic``), and they
need it never to be wrong in one direction: a move is made for a seat only when every option is
dead, so :func:`is_dead` answers ``True`` only when it is certain.

How: every necessary condition of a legal finish is tested on bounds of each row's value, the
weakest and the strongest it can still end as, each row taken alone (which can only widen the
range, so a failed condition is proof). A row with two empty places or fewer has its bounds
found exactly by trying every card pair of the pool; one with more is taken as unbounded (a
row with three or more places to fill can nearly always be made weak or strong enough). When at
most two places remain on the whole board, every finish is tried, which is exact. So the answer
is exact once at most two places remain, and otherwise sound.

"Every card" is tried up to equivalence: a row's value depends on the ranks and on whether five
cards share a suit, so two cards of one rank are interchangeable for a row unless the row's
placed cards all share a suit, and then only that suit matters (a front row never cares). Trying
one filling per class of interchangeable cards gives the same values at a fraction of the cost
(``_card_classes``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import combinations_with_replacement, product
from typing import Final

from sapsam.rules.cards import Card
from sapsam.rules.hands import HandValue, evaluate3, evaluate5
from sapsam.rules.open_face.board import ROW_CAPACITY, Board, Placement
from sapsam.rules.open_face.lowball import deuce_to_seven_key, lowball_in_order
from sapsam.rules.open_face.parameters import OpenFaceRules

EXACT_FREE_PLACES: Final = 2
"""Up to this many empty places in a row (or on the whole board) every filling is tried."""

Bounds = tuple[HandValue, HandValue] | None
"""A row's weakest and strongest possible final value, or ``None`` when not bounded."""


def _value(cards: tuple[int, ...]) -> HandValue:
    return evaluate3(*cards) if len(cards) == 3 else evaluate5(*cards)


def rows_in_order(front: HandValue, middle: HandValue, back: HandValue) -> bool:
    """Whether back >= middle >= front (equal rows allowed)."""
    return front <= middle <= back


def unseen_cards(board: Board, seen: Iterable[int] = ()) -> frozenset[Card]:
    """Cards that may still come to this board: neither on it nor among ``seen`` (the other
    boards, the seat's own undealt hand)."""
    excluded = set(board.cards).union(seen)
    return frozenset(Card(card) for card in range(52) if card not in excluded)


def _flush_suit(row: tuple[Card, ...], capacity: int) -> int | None:
    """The suit a 5-card row can still be a flush in (its cards all share it), else ``None``."""
    if capacity == 3 or not row:
        return None if capacity == 3 else -1  # an empty 5-card row: every suit matters
    suit = row[0] & 3
    return suit if all(card & 3 == suit for card in row) else None


def _card_classes(
    pool: Collection[Card], flush_suits: Sequence[int | None]
) -> dict[tuple[int, ...], list[Card]]:
    """The pool's cards grouped by what the given rows can tell apart: the rank, and for each row
    that can still be a flush, whether the card is of that suit (``-1``: the suit itself)."""
    classes: dict[tuple[int, ...], list[Card]] = {}
    for card in sorted(pool):
        suit = card & 3
        key = (
            card >> 2,
            *(
                -1 if flush is None else suit if flush == -1 else int(suit == flush)
                for flush in flush_suits
            ),
        )
        classes.setdefault(key, []).append(card)
    return classes


def _fillings(classes: dict[tuple[int, ...], list[Card]], count: int) -> Iterator[tuple[Card, ...]]:
    """One set of ``count`` cards for every multiset of classes the pool can supply."""
    for keys in combinations_with_replacement(sorted(classes), count):
        taken: dict[tuple[int, ...], int] = {}
        cards: list[Card] = []
        for key in keys:
            index = taken.get(key, 0)
            if index >= len(classes[key]):
                break
            taken[key] = index + 1
            cards.append(classes[key][index])
        else:
            yield tuple(cards)


def row_bounds(row: tuple[Card, ...], capacity: int, pool: Collection[Card]) -> Bounds:
    """The weakest and strongest value ``row`` can end as with cards of ``pool``, found by trying
    every filling when at most ``EXACT_FREE_PLACES`` places are empty; ``None`` otherwise (or
    when the pool cannot fill the row)."""
    free = capacity - len(row)
    if free == 0:
        value = _value(row)
        return (value, value)
    if free > EXACT_FREE_PLACES or len(pool) < free:
        return None
    weakest: HandValue | None = None
    strongest: HandValue | None = None
    for extra in _fillings(_card_classes(pool, [_flush_suit(row, capacity)]), free):
        value = _value(row + extra)
        if weakest is None or value < weakest:
            weakest = value
        if strongest is None or value > strongest:
            strongest = value
    if weakest is None or strongest is None:
        return None
    return (weakest, strongest)


@lru_cache(maxsize=4096)
def _cached_bounds(row: tuple[Card, ...], capacity: int, pool: frozenset[Card]) -> Bounds:
    """``row_bounds`` remembered: the placements of one street all leave the same pool, and
    many of them the same rows."""
    return row_bounds(row, capacity, pool)


def _classic_order(rows: Sequence[Sequence[Card]]) -> bool:
    return rows_in_order(*(_value(tuple(row)) for row in rows))


def _order_of(rules: OpenFaceRules | None) -> Callable[[Sequence[Sequence[Card]]], bool]:
    """The order rule of a finished board's rows: the classic one, or 2-7's."""
    if rules is None or not rules.lowball_middle:
        return _classic_order

    def lowball_order(rows: Sequence[Sequence[Card]]) -> bool:
        front, middle, back = rows
        return lowball_in_order(
            rules, _value(tuple(front)), deuce_to_seven_key(middle), _value(tuple(back))
        )

    return lowball_order


def _exactly_dead(
    board: Board,
    pool: Collection[Card],
    ordered: Callable[[Sequence[Sequence[Card]]], bool] = _classic_order,
) -> bool:
    """Every way of filling the (at most ``EXACT_FREE_PLACES``) empty places is out of order."""
    places = [row for row, free in enumerate(board.free_slots) for _ in range(free)]
    if len(pool) < len(places):
        return False  # the board cannot be finished from this pool: nothing is proven
    rows = [list(row) for row in board.rows]
    if not places:
        return not ordered(rows)
    flush_suits = [_flush_suit(board.rows[row], ROW_CAPACITY[row]) for row in sorted(set(places))]
    classes = _card_classes(pool, flush_suits)
    fillings: Iterable[tuple[Card, ...]]
    if len(places) == 1 or places[0] == places[1]:  # one row: the order of its cards is moot
        fillings = _fillings(classes, len(places))
    else:  # two rows: which card goes where matters
        fillings = (
            (first[0], second[-1] if second[0] == first[0] else second[0])
            for first, second in product(classes.values(), repeat=2)
            if second[0] != first[0] or len(second) > 1
        )
    for filling in fillings:
        for row, card in zip(places, filling, strict=True):
            rows[row].append(card)
        alive = ordered(rows)
        for row in places:
            rows[row].pop()
        if alive:
            return False
    return True


def is_dead(
    board: Board, pool: Collection[Card] | None = None, rules: OpenFaceRules | None = None
) -> bool:
    """Whether the board cannot end with its rows in order, whatever cards of ``pool`` (by
    default every card not on the board) fill it. ``True`` only when certain (module doc).

    ``rules`` with a lowball middle (2-7) use its order rule: exact when at most two places
    remain, otherwise only back against front is bounded (the middle's lowball key is not)."""
    cards = unseen_cards(board) if pool is None else pool
    if sum(board.free_slots) <= EXACT_FREE_PLACES:
        return _exactly_dead(board, cards, _order_of(rules))
    lowball = rules is not None and rules.lowball_middle
    frozen = frozenset(cards)
    front, middle, back = (
        _cached_bounds(tuple(sorted(row)), capacity, frozen)
        for row, capacity in zip(board.rows, ROW_CAPACITY, strict=True)
    )
    # Necessary for a legal finish: some front no stronger than some middle, some middle no
    # stronger than some back, and (with the middle unbounded) some front no stronger than some
    # back. Each bound is a row's own extreme, so failing one is proof.
    if lowball:
        return front is not None and back is not None and front[0] > back[1]
    if front is not None and middle is not None and front[0] > middle[1]:
        return True
    if middle is not None and back is not None and middle[0] > back[1]:
        return True
    return front is not None and back is not None and front[0] > back[1]


def kills(
    board: Board,
    placement: Placement,
    pool: Collection[Card] | None = None,
    rules: OpenFaceRules | None = None,
) -> bool:
    """Whether ``placement`` leaves the board dead (``pool``: the cards that may still come,
    by default every card not on the board after it; ``rules`` as in :func:`is_dead`)."""
    after = board.with_placement(placement)
    if pool is not None:
        placed = set(placement.cards)
        pool = [card for card in pool if card not in placed]
    return is_dead(after, pool, rules)


def every_option_kills(
    board: Board,
    options: Iterable[Placement],
    pool: Collection[Card] | None = None,
    rules: OpenFaceRules | None = None,
) -> bool:
    """Whether each of ``options`` (a street's placements) leaves the board dead; ``pool`` and
    ``rules`` as in :func:`kills`."""
    return all(kills(board, option, pool, rules) for option in options)

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
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from itertools import combinations
from typing import Final

from sapsam.rules.cards import Card
from sapsam.rules.hands import HandValue, evaluate3, evaluate5
from sapsam.rules.open_face.board import ROW_CAPACITY, Board, Placement

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
    for extra in combinations(pool, free):
        value = _value(row + extra)
        if weakest is None or value < weakest:
            weakest = value
        if strongest is None or value > strongest:
            strongest = value
    assert weakest is not None and strongest is not None
    return (weakest, strongest)


def _exactly_dead(board: Board, pool: Collection[Card]) -> bool:
    """Every way of filling the (at most ``EXACT_FREE_PLACES``) empty places is out of order."""
    places = [row for row, free in enumerate(board.free_slots) for _ in range(free)]
    cards = sorted(pool)
    if len(cards) < len(places):
        return False  # the board cannot be finished from this pool: nothing is proven
    rows = [list(row) for row in board.rows]
    if not places:
        return not rows_in_order(*(_value(tuple(row)) for row in rows))
    if len(places) == 1:
        fillings: Iterable[tuple[Card, ...]] = ((card,) for card in cards)
    elif places[0] == places[1]:  # two places of one row: the order of the two cards is moot
        fillings = combinations(cards, 2)
    else:
        fillings = ((a, b) for a in cards for b in cards if a != b)
    for filling in fillings:
        for row, card in zip(places, filling, strict=True):
            rows[row].append(card)
        front, middle, back = (_value(tuple(row)) for row in rows)
        alive = rows_in_order(front, middle, back)
        for row in places:
            rows[row].pop()
        if alive:
            return False
    return True


def is_dead(board: Board, pool: Collection[Card] | None = None) -> bool:
    """Whether the board cannot end with its rows in order, whatever cards of ``pool`` (by
    default every card not on the board) fill it. ``True`` only when certain (module doc)."""
    cards = unseen_cards(board) if pool is None else pool
    if sum(board.free_slots) <= EXACT_FREE_PLACES:
        return _exactly_dead(board, cards)
    front, middle, back = (
        row_bounds(row, capacity, cards)
        for row, capacity in zip(board.rows, ROW_CAPACITY, strict=True)
    )
    # Necessary for a legal finish: some front no stronger than some middle, some middle no
    # stronger than some back, and (with the middle unbounded) some front no stronger than some
    # back. Each bound is a row's own extreme, so failing one is proof.
    if front is not None and middle is not None and front[0] > middle[1]:
        return True
    if middle is not None and back is not None and middle[0] > back[1]:
        return True
    return front is not None and back is not None and front[0] > back[1]


def kills(board: Board, placement: Placement, pool: Collection[Card] | None = None) -> bool:
    """Whether ``placement`` leaves the board dead (``pool``: the cards that may still come,
    by default every card not on the board after it)."""
    after = board.with_placement(placement)
    if pool is not None:
        placed = set(placement.cards)
        pool = [card for card in pool if card not in placed]
    return is_dead(after, pool)

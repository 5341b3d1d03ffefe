"""A seat's three rows as they fill, the street schedule, and which placements are legal.

Placements are face up and final (001: «Все действия совершаются в открытую», "every action is
done in the open"; 003: «odată ce un jucător a plasat o carte pe unul dintre rânduri, aceasta nu
mai poate fi mutată pe alt rând», "once a player has placed a card in one of the rows, it can no
longer be moved to another row"): a :class:`Board` only grows. On each street a seat places the
rule set's ``street_cards`` count; Pineapple deals ``street_discards`` more on every street after
the first, which the seat discards unseen (001: «2 из них он должен положить перед собой на стол,
а третью выбросить», "2 of them he must lay on the table before him and throw away the third").
Checks follow the ``verify_x`` / ``can_x`` / ``x`` shape: ``verify_placement`` raises
:class:`PlacementError` with a sentence a player can read, ``can_place`` says yes or no,
``place`` returns the new board.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import accumulate, combinations
from typing import Final

from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card, format_cards, parse_cards
from sapsam.rules.open_face.parameters import HAND_CARDS, OpenFaceRules


class Row(IntEnum):
    """The three rows; the number is the row's place in ``Board.rows``."""

    FRONT = 0
    MIDDLE = 1
    BACK = 2


ROW_CAPACITY: Final = (3, 5, 5)
"""Cards each row holds when full: front 3, middle 5, back 5."""
ROW_LABELS: Final = ("front", "middle", "back")
BIGGEST_ROW_FIRST: Final = (Row.BACK, Row.MIDDLE, Row.FRONT)
"""The order in which the timeout and the listing of placements try the rows (003: «de la cea
mai mare la cea mai mică casetă», "from the biggest to the smallest box")."""


class PlacementError(ValueError):
    """A placement is not allowed: a card not dealt, placed twice or not placed, or a full row."""


@dataclass(frozen=True)
class Placement:
    """The cards one street adds to each row (each tuple in the order the seat gave them)."""

    front: tuple[Card, ...] = ()
    middle: tuple[Card, ...] = ()
    back: tuple[Card, ...] = ()

    @classmethod
    def of_rows(cls, cards: Sequence[Card], rows: Sequence[Row]) -> Placement:
        """The placement that puts ``cards[i]`` into ``rows[i]``."""
        added: tuple[list[Card], list[Card], list[Card]] = ([], [], [])
        for card, row in zip(cards, rows, strict=True):
            added[row].append(card)
        return cls(tuple(added[0]), tuple(added[1]), tuple(added[2]))

    @property
    def rows(self) -> tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]:
        return (self.front, self.middle, self.back)

    @property
    def cards(self) -> tuple[Card, ...]:
        return self.front + self.middle + self.back

    def __str__(self) -> str:
        rows = zip(ROW_LABELS, self.rows, strict=True)
        return ", ".join(f"{label} {format_cards(row)}" for label, row in rows if row)


@dataclass(frozen=True)
class Board:
    """A seat's face-up rows so far; complete when they hold 3, 5 and 5 cards."""

    front: tuple[Card, ...] = ()
    middle: tuple[Card, ...] = ()
    back: tuple[Card, ...] = ()

    @classmethod
    def parse(cls, front: str = "", middle: str = "", back: str = "") -> Board:
        """A board from card notation, e.g. ``Board.parse("Qs Qh", "", "As Ks")``; checked."""
        board = cls(parse_cards(front), parse_cards(middle), parse_cards(back))
        verify_board(board)
        return board

    @property
    def rows(self) -> tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]:
        return (self.front, self.middle, self.back)

    @property
    def cards(self) -> tuple[Card, ...]:
        return self.front + self.middle + self.back

    @property
    def placed(self) -> int:
        return len(self.front) + len(self.middle) + len(self.back)

    def free(self, row: Row) -> int:
        """Empty places left in ``row``."""
        return ROW_CAPACITY[row] - len(self.rows[row])

    @property
    def free_slots(self) -> tuple[int, int, int]:
        return (3 - len(self.front), 5 - len(self.middle), 5 - len(self.back))

    @property
    def complete(self) -> bool:
        return self.placed == HAND_CARDS

    def with_placement(self, placement: Placement) -> Board:
        """The board with ``placement``'s cards added (unchecked: see :func:`place`)."""
        return Board(
            self.front + placement.front,
            self.middle + placement.middle,
            self.back + placement.back,
        )

    def arrangement(self) -> Arrangement:
        """A complete board as the closed game's arrangement (for its foul check and values)."""
        if not self.complete:
            raise PlacementError(f"the board holds {self.placed} cards, not {HAND_CARDS}")
        return Arrangement.of_card_rows(self.front, self.middle, self.back)

    def __str__(self) -> str:
        return " / ".join(format_cards(row) for row in self.rows)


def verify_board(board: Board) -> None:
    """Raise :class:`PlacementError` unless every row fits its capacity and no card repeats."""
    for label, row, capacity in zip(ROW_LABELS, board.rows, ROW_CAPACITY, strict=True):
        if len(row) > capacity:
            raise PlacementError(f"the {label} row holds {len(row)} cards, at most {capacity}")
    if len(set(board.cards)) != board.placed:
        raise PlacementError(f"a card repeats on the board {board}")


# ---------------------------------------------------------------------------------------------
# Streets


def street_starts(rules: OpenFaceRules) -> tuple[int, ...]:
    """How many cards a seat has placed when each street begins: ``(0, 5, 6, …, 12)`` classic,
    ``(0, 5, 9)`` Turbo."""
    return (0, *accumulate(rules.street_cards))[:-1]


def street_of(rules: OpenFaceRules, board: Board) -> int | None:
    """The street a board is waiting for (0 first), or ``None`` when it is complete.

    A board between street starts (which a seat placing all its cards never leaves) raises.
    """
    if board.complete:
        return None
    starts = street_starts(rules)
    if board.placed not in starts:
        raise PlacementError(
            f"{board.placed} cards placed is not the start of a street "
            f"(streets of {list(rules.street_cards)} start at {list(starts)})"
        )
    return starts.index(board.placed)


# ---------------------------------------------------------------------------------------------
# Placements


def discards_due(rules: OpenFaceRules, street: int) -> int:
    """Cards a normal seat discards on ``street`` (0 on the first, ``street_discards`` after)."""
    return rules.street_discards if street > 0 else 0


def verify_placement(
    board: Board, dealt: Sequence[Card], placement: Placement, discards: Sequence[Card] = ()
) -> None:
    """Raise :class:`PlacementError` unless ``placement`` and ``discards`` together hold exactly
    the ``dealt`` cards, each once, and the rows have room for the placed ones. How many cards
    are discarded is the caller's to check (:func:`verify_street_move`)."""
    if discards:
        dealt_set = set(dealt)
        outside = [card for card in discards if card not in dealt_set]
        if outside:
            raise PlacementError(f"not dealt to this seat on this street: {format_cards(outside)}")
        if len(set(discards)) != len(discards):
            raise PlacementError(f"a card is discarded twice: {format_cards(discards)}")
        both = set(discards).intersection(placement.cards)
        if both:
            raise PlacementError(f"a card is both placed and discarded: {format_cards(both)}")
        thrown = set(discards)
        dealt = [card for card in dealt if card not in thrown]
    placed = placement.cards
    dealt_set = set(dealt)
    if len(dealt_set) != len(dealt):
        raise PlacementError(f"the dealt cards repeat a card: {format_cards(dealt)}")
    if len(set(placed)) != len(placed):
        raise PlacementError(f"a card is placed twice: {placement}")
    extra = [card for card in placed if card not in dealt_set]
    if extra:
        raise PlacementError(f"not dealt to this seat on this street: {format_cards(extra)}")
    placed_set = set(placed)
    missing = [card for card in dealt if card not in placed_set]
    if missing:
        raise PlacementError(
            f"every dealt card must be placed; not placed: {format_cards(missing)}"
        )
    for label, row, added, capacity in zip(
        ROW_LABELS, board.rows, placement.rows, ROW_CAPACITY, strict=True
    ):
        if len(row) + len(added) > capacity:
            raise PlacementError(
                f"the {label} row has room for {capacity - len(row)} more, "
                f"not {len(added)} ({format_cards(added)})"
            )


def verify_street_move(
    rules: OpenFaceRules,
    street: int,
    board: Board,
    dealt: Sequence[Card],
    placement: Placement,
    discards: Sequence[Card] = (),
) -> None:
    """:func:`verify_placement`, and exactly the street's :func:`discards_due` discarded."""
    due = discards_due(rules, street)
    if len(discards) != due:
        raise PlacementError(
            f"street {street} discards {due} card{'s' if due != 1 else ''} of the "
            f"{len(dealt)} dealt, not {len(discards)}"
        )
    verify_placement(board, dealt, placement, discards)


def street_moves(
    board: Board, dealt: Sequence[Card], discards: int
) -> tuple[tuple[Placement, tuple[Card, ...]], ...]:
    """Every (placement, discarded cards) of a street that discards ``discards`` of the dealt
    cards: for each choice of discards (in the order dealt, the last dealt first), every legal
    placement of the rest (:func:`legal_placements`)."""
    if discards == 0:
        return tuple((placement, ()) for placement in legal_placements(board, dealt))
    moves: list[tuple[Placement, tuple[Card, ...]]] = []
    for thrown in reversed(list(combinations(dealt, discards))):
        kept = [card for card in dealt if card not in thrown]
        moves.extend((placement, thrown) for placement in legal_placements(board, kept))
    return tuple(moves)


def can_place(board: Board, dealt: Sequence[Card], placement: Placement) -> bool:
    """Whether :func:`verify_placement` accepts the placement."""
    try:
        verify_placement(board, dealt, placement)
    except PlacementError:
        return False
    return True


def place(board: Board, dealt: Sequence[Card], placement: Placement) -> Board:
    """The board after a checked placement."""
    verify_placement(board, dealt, placement)
    return board.with_placement(placement)


def row_choices(board: Board, count: int) -> Iterator[tuple[Row, ...]]:
    """Every way to send ``count`` cards (in order) into rows with room, each a tuple of rows;
    back before middle before front for each card, so the first is the biggest-row-first fill."""
    free = list(board.free_slots)
    chosen: list[Row] = []

    def extend(index: int) -> Iterator[tuple[Row, ...]]:
        if index == count:
            yield tuple(chosen)
            return
        for row in BIGGEST_ROW_FIRST:
            if free[row]:
                free[row] -= 1
                chosen.append(row)
                yield from extend(index + 1)
                chosen.pop()
                free[row] += 1

    return extend(0)


def legal_placements(board: Board, dealt: Sequence[Card]) -> tuple[Placement, ...]:
    """Every placement of the dealt cards the rows have room for, in :func:`row_choices` order.

    Distinct cards make every row choice a different board, so there are no duplicates: 232
    for five cards on an empty board, at most 3 for one card.
    """
    if sum(board.free_slots) < len(dealt):
        raise PlacementError(
            f"{len(dealt)} cards dealt but the rows have room for {sum(board.free_slots)}"
        )
    return tuple(Placement.of_rows(dealt, rows) for rows in row_choices(board, len(dealt)))

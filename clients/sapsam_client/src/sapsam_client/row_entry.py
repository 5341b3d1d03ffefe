"""Entering a hand's three rows one at a time, as ``sapsam-play`` reads them: pure, no I/O.

A :class:`RowEntry` is the rows set so far; :func:`enter` applies one line the player typed and
says what happened. Each row typed is checked card by card against the hand and the rows already
set, and kept once accepted; the last row fills itself with the cards left. Lines::

    Ks Kd 3c          the next empty row (front, then middle, then back)
    middle 9s 8s ...  that row, replacing what it held
    swap Ks 7d        swap two cards (between rows, or a placed card for one left)
    u                 undo the last change (any number of times)
    s                 the solver's suggestion, r: start again
    hint              show the suggestion (read by sapsam-play's dialogue; the rows stay)
    ?                 help
    (Enter)           with nothing set: the suggestion
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from sapsam_client.commitment import ROW_SIZES, CardError, Rows, canonical, card_index, card_text

ROW_NAMES: Final = ("front", "middle", "back")
RowCards = tuple[str, ...] | None
"""A row's cards in the server's notation and canonical order, or None while it is empty."""

HELP: Final = (
    "Type a row's cards, e.g.  Ks kd 3c  or  10h 9h 8h 7h 6h  (ranks A K Q J T",
    "9..2, 10 for T; suits c d h s or ♣ ♦ ♥ ♠). Rows fill front, middle, back",
    "in turn; the last fills itself with the cards left.",
    "  front|middle|back CARDS  set that row     swap C1 C2  swap two cards",
    "  u  undo the last change  r  start again   s  the suggestion   ?  this help",
    "  hint  show the solver's suggestion (for this table's rules; s takes it)",
    "  Enter: the suggestion (before any row is set), or confirm (all three set)",
)
"""The help, lines of at most 77 characters (shown indented by two)."""

HINT_WORDS: Final = ("hint",)
"""What the player types to see the solver's suggestion without taking it (it is shown only
then)."""


@dataclass(frozen=True)
class RowEntry:
    """The rows set so far for one hand, and the earlier states for undo."""

    hand: tuple[str, ...]
    rows: tuple[RowCards, RowCards, RowCards] = (None, None, None)
    history: tuple[tuple[RowCards, RowCards, RowCards], ...] = ()

    @classmethod
    def start(cls, hand: Sequence[str]) -> RowEntry:
        """Nothing set yet for ``hand``."""
        return cls(canonical(hand))

    @property
    def next_row(self) -> str | None:
        """The first empty row's name; None once every row is set."""
        for name, row in zip(ROW_NAMES, self.rows, strict=True):
            if row is None:
                return name
        return None

    @property
    def complete(self) -> bool:
        """Whether all three rows are set."""
        return self.next_row is None

    @property
    def started(self) -> bool:
        """Whether any row is set."""
        return any(row is not None for row in self.rows)

    @property
    def left(self) -> tuple[str, ...]:
        """The hand's cards in no row yet, in canonical order."""
        placed = {card for row in self.rows if row for card in row}
        return tuple(card for card in self.hand if card not in placed)

    def where(self, card: str) -> str | None:
        """The name of the row holding ``card``, if any."""
        for name, row in zip(ROW_NAMES, self.rows, strict=True):
            if row and card in row:
                return name
        return None

    def arranged(self) -> Rows:
        """The three rows (only once :attr:`complete`)."""
        if not self.complete:
            raise ValueError(f"the {self.next_row} row is not set")
        front, middle, back = (row or () for row in self.rows)
        return Rows(front, middle, back)

    def changed(self, rows: tuple[RowCards, RowCards, RowCards]) -> RowEntry:
        """These rows (the last one filled in if it is all that is left), undoable."""
        rows = (_sorted(rows[0]), _sorted(rows[1]), _sorted(rows[2]))
        entry = replace(self, rows=rows, history=(*self.history, self.rows))
        empty = [index for index, row in enumerate(entry.rows) if row is None]
        if len(empty) == 1 and len(entry.left) == ROW_SIZES[ROW_NAMES[empty[0]]]:
            filled = list(entry.rows)
            filled[empty[0]] = entry.left
            entry = replace(entry, rows=(filled[0], filled[1], filled[2]))
        return entry


def _sorted(row: RowCards) -> RowCards:
    return None if row is None else canonical(row)


def read_cards(text: str) -> tuple[str, ...]:
    """Cards typed by a person (spaces or commas, any case, ``10`` for a ten, suit symbols), in
    the server's notation; :class:`CardError` names the first that is not a card."""
    cards = []
    for token in text.replace(",", " ").split():
        try:
            cards.append(card_text(card_index(token)))
        except (CardError, IndexError):
            raise CardError(f"{token!r} is not a card (cards look like As Td 9c 10h)") from None
    return tuple(cards)


def row_problem(entry: RowEntry, row: str, cards: Sequence[str]) -> str:
    """Why ``cards`` cannot be the ``row`` (size, repeats, cards not in the hand or already in
    another row); ``""`` when they can."""
    for index, card in enumerate(cards):
        if card in cards[:index]:
            return f"{card} is typed twice"
        if card not in entry.hand:
            return f"{card} is not in your hand"
        holder = entry.where(card)
        if holder is not None and holder != row:
            return f"{card} is already in the {holder} row"
    size = ROW_SIZES[row]
    if len(cards) != size:
        return f"the {row} row takes {size} cards, not {len(cards)}"
    return ""


def enter(entry: RowEntry, line: str, suggestion: Rows) -> tuple[RowEntry, str]:
    """Apply one typed line; the new entry and what to tell the player (``""``: nothing)."""
    text = line.strip()
    word, _, rest = text.partition(" ")
    command = word.lower()
    if command in ("?", "h", "help"):
        return entry, "\n".join(HELP)
    if command in ("u", "undo"):
        if not entry.history:
            return entry, "nothing to undo"
        return replace(entry, rows=entry.history[-1], history=entry.history[:-1]), ""
    if command in ("s", "suggest", "suggestion") or (not text and not entry.started):
        return entry.changed((suggestion.front, suggestion.middle, suggestion.back)), ""
    if command in ("r", "reset", "clear"):
        return (entry.changed((None, None, None)), "") if entry.started else (entry, "")
    if not text:
        return entry, "" if entry.complete else f"type the {entry.next_row} row (? for help)"
    if command in ("swap", "x"):
        return _swap(entry, rest)
    row = command if command in ROW_NAMES else entry.next_row
    typed = rest if command in ROW_NAMES else text
    if row is None:
        return entry, "all three rows are set: swap cards, undo, or Enter to confirm (? for help)"
    try:
        cards = read_cards(typed)
    except CardError as error:
        return entry, str(error)
    problem = row_problem(entry, row, cards)
    if problem:
        return entry, problem
    rows = list(entry.rows)
    rows[ROW_NAMES.index(row)] = cards
    return entry.changed((rows[0], rows[1], rows[2])), ""


def _swap(entry: RowEntry, typed: str) -> tuple[RowEntry, str]:
    """Swap two placed cards between rows, or put a card left in a placed card's place."""
    try:
        cards = read_cards(typed)
    except CardError as error:
        return entry, str(error)
    if len(cards) != 2:
        return entry, "swap takes two cards, e.g.  swap Ks 7d"
    for card in cards:
        if card not in entry.hand:
            return entry, f"{card} is not in your hand"
    first, second = cards
    rows_of = (entry.where(first), entry.where(second))
    if rows_of == (None, None):
        return entry, f"neither {first} nor {second} is in a row yet"
    if rows_of[0] == rows_of[1]:
        return entry, f"{first} and {second} are both in the {rows_of[0]} row"
    swapped = {first: second, second: first}
    rows = tuple(
        None if row is None else tuple(swapped.get(card, card) for card in row)
        for row in entry.rows
    )
    return entry.changed((rows[0], rows[1], rows[2])), ""

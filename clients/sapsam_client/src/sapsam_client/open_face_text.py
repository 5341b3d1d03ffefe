"""What ``sapsam-play`` shows at an open-face table (issues #18, #19), and how it reads a typed
placement: pure, no I/O (``sapsam_client.open_face_play`` is the session).

Every seat's rows as they fill (``__`` for a place still empty), a Pineapple seat's discards
only as a count (``2 discarded``: the cards stay hidden from the others until opened at the end
of the deal; the person sees its own), the events of the table's stream in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sapsam_client.card_style import PLAIN, CardStyle, card_shown
from sapsam_client.connection import deal_number, seat_position
from sapsam_client.results_text import label
from sapsam_proto.v1 import open_face_pb2, table_event_pb2

ROW_NAMES: Final = ("front", "middle", "back")
ROW_SIZES: Final = (3, 5, 5)
ROW_LETTERS: Final = {"f": 0, "m": 1, "b": 2}
DISCARD_LETTER: Final = "x"
EMPTY: Final = "__"

Rows3 = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


# -- what the screen shows ------------------------------------------------------------------


def row_text(cards: Sequence[str], size: int, style: CardStyle = PLAIN) -> str:
    """One row as placed (placement order), ``__`` for each place still empty."""
    shown = [card_shown(card, style) for card in cards]
    return " ".join(shown + [EMPTY] * (size - len(cards)))


def rows_text(rows: open_face_pb2.OpenFaceRows, style: CardStyle = PLAIN) -> str:
    """A seat's three rows: ``front | middle | back``."""
    return " | ".join(
        row_text(list(row), size, style)
        for row, size in zip((rows.front, rows.middle, rows.back), ROW_SIZES, strict=True)
    )


def seat_status(seat: open_face_pb2.OpenFaceSeat) -> str:
    """What a seat's line says besides its rows."""
    if seat.fantasyland and not seat.committed:
        return "Fantasyland: setting its hand"
    if seat.fantasyland and not seat.revealed:
        return "Fantasyland: set face down"
    if seat.rows_hidden:
        return "placing (hidden until the Fantasyland hand is set)"
    return ""


def board_lines(
    deal: open_face_pb2.OpenFaceDeal,
    labels: dict[str, str],
    me: str,
    style: CardStyle = PLAIN,
) -> list[str]:
    """Every seat's rows, one line each (front | middle | back), the person's marked."""
    lines = []
    for seat in deal.seats:
        name = "you" if seat.seat == me else label(labels, seat.seat)
        tag = f"{name} (seat {seat_position(seat.seat)})"
        if seat.fantasyland:
            tag += " FL"
        status = seat_status(seat)
        shown = status if seat.rows_hidden or (seat.fantasyland and not seat.revealed) else ""
        body = shown or rows_text(seat.rows, style)
        if status and not shown:
            body += f"  ({status})"
        if seat.discards:  # opened at the end of the deal: everyone sees them
            body += f"  discarded {' '.join(card_shown(card, style) for card in seat.discards)}"
        elif seat.discards_made:  # Pineapple: that it discarded, never which card
            body += f"  ({seat.discards_made} discarded)"
        lines.append(f"  {tag:<24} {body}")
    return lines


def placement_from_letters(answer: str, cards: Sequence[str], free: Sequence[int]) -> Rows3 | str:
    """The rows ``answer`` (one of f, m, b per card of ``cards``, in order; spaces and commas
    ignored) puts the cards in, or why it cannot: a wrong letter, a wrong count, a row that has
    fewer free places (``free``: front, middle, back) than cards sent to it."""
    parsed = street_from_letters(answer, cards, free, 0)
    return parsed if isinstance(parsed, str) else parsed[0]


def street_from_letters(
    answer: str, cards: Sequence[str], free: Sequence[int], discards: int
) -> tuple[Rows3, tuple[str, ...]] | str:
    """As :func:`placement_from_letters`, on a Pineapple street that discards ``discards`` of
    the cards: ``x`` marks each discarded card (exactly ``discards`` of them); the rows and the
    discarded cards, or why not."""
    letters = [letter for letter in answer.lower() if letter not in " ,"]
    allowed = "f, m, b or x" if discards else "f, m or b"
    if len(letters) != len(cards):
        plural = "s" if len(cards) != 1 else ""
        return f"give {len(cards)} letter{plural} ({allowed}), one for each card, in order"
    known = {*ROW_LETTERS, DISCARD_LETTER} if discards else set(ROW_LETTERS)
    wrong = sorted({letter for letter in letters if letter not in known})
    if wrong:
        more = ", x (discard)" if discards else ""
        return f"{', '.join(wrong)}: use f (front), m (middle) or b (back){more}"
    thrown = tuple(card for letter, card in zip(letters, cards, strict=True) if letter == "x")
    if len(thrown) != discards:
        return f"discard exactly {discards} card{'s' if discards != 1 else ''} (x)"
    rows: tuple[list[str], list[str], list[str]] = ([], [], [])
    for letter, card in zip(letters, cards, strict=True):
        if letter != DISCARD_LETTER:
            rows[ROW_LETTERS[letter]].append(card)
    for index, row in enumerate(rows):
        if len(row) > free[index]:
            return f"the {ROW_NAMES[index]} row has room for {free[index]} more, not {len(row)}"
    return (tuple(rows[0]), tuple(rows[1]), tuple(rows[2])), thrown


def letters_of(
    placement: Sequence[Sequence[str]], cards: Sequence[str], thrown: Sequence[str] = ()
) -> str:
    """The letters that type ``placement`` (front, middle, back; ``x`` for a card in
    ``thrown``) for ``cards`` in order."""
    where = {card: "fmb"[index] for index, row in enumerate(placement) for card in row}
    where.update({card: DISCARD_LETTER for card in thrown})
    return "".join(where[card] for card in cards)


def fantasyland_row_problem(
    typed: Sequence[str], size: int, cards: Sequence[str], used: Sequence[str]
) -> str:
    """Why the cards typed for a Fantasyland row will not do ('' when they will)."""
    if len(typed) != size:
        return f"give {size} cards"
    if len(set(typed)) != len(typed):
        return "a card is typed twice"
    missing = [card for card in typed if card not in cards]
    if missing:
        return f"not among your cards: {' '.join(missing)}"
    again = [card for card in typed if card in used]
    if again:
        return f"already in another row: {' '.join(again)}"
    return ""


def normal_cards(text: str) -> list[str]:
    """Card words as the server writes them (``as`` → ``As``, ``10h`` → ``Th``)."""
    cards = []
    for word in text.replace(",", " ").split():
        word = word.replace("10", "T")
        cards.append(word[:-1].upper() + word[-1:].lower() if len(word) == 2 else word)
    return cards


_FACE_DOWN: Final = {
    "discard_committed": "discarded a card face down",
    "fantasyland_committed": "set a Fantasyland hand face down",
}
"""The face-down moves the others see made (the seat that made one sees nothing more)."""


def event_lines(
    event: table_event_pb2.TableEvent,
    labels: dict[str, str],
    me: str,
    style: CardStyle = PLAIN,
) -> list[str]:
    """What an open-face event tells the person at seat ``me``."""
    kind = event.WhichOneof("payload")

    def who(seat: str) -> str:
        return "you" if seat == me else label(labels, seat)

    if kind == "cards_placed":
        placed = event.cards_placed
        if placed.hidden or (placed.seat == me and not placed.automatic):
            return []
        how = f" (automatic: {placed.automatic})" if placed.automatic else ""
        return [f"{who(placed.seat)} placed {_placed_said(placed.placed, style)}{how}"]
    if kind in _FACE_DOWN:
        seat = getattr(event, kind).seat
        return [] if seat == me else [f"{who(seat)} {_FACE_DOWN[kind]}"]
    if kind == "discards_revealed":
        thrown = event.discards_revealed
        cards = [card_shown(card, style) for item in thrown.discards for card in item.cards]
        how = "" if all(item.nonce for item in thrown.discards) else " (by the server)"
        return [f"{who(thrown.seat)} opened the discards{how}: {' '.join(cards)}"]
    if kind == "fantasyland_reveals_opened":
        opened = event.fantasyland_reveals_opened
        seats = ", ".join(who(seat) for seat in opened.seats)
        return [f"every hand is set: {seats} to open the Fantasyland hand (or it is dead)"]
    if kind == "fantasyland_timed_out":
        timed = event.fantasyland_timed_out
        return [f"{who(timed.seat)} ran out of time setting the Fantasyland hand"]
    if kind == "fantasyland_revealed":
        revealed = event.fantasyland_revealed
        dead = " DEAD" if revealed.dead else ""
        return [f"{who(revealed.seat)} opened Fantasyland: {rows_text(revealed.rows, style)}{dead}"]
    if kind == "deal_scored" and event.deal_scored.HasField("open_face"):
        score = event.deal_scored.open_face
        lines = [f"deal {deal_number(score.deal)} scored:"]
        for seat in score.seats:
            dead = "  DEAD" if seat.dead else ""
            lines.append(
                f"  {who(seat.seat):<12} {rows_text(seat.rows, style)}{dead}"
                f"  {seat.score_delta:+d} (total {seat.series_total:+d})"
            )
        return lines
    if kind == "series_completed":
        lines = ["the set is over:"]
        for standing in event.series_completed.standings:
            lines.append(f"  {standing.place}. {who(standing.seat)}  {standing.total:+d}")
        return lines
    return []


def _placed_said(rows: open_face_pb2.OpenFaceRows, style: CardStyle) -> str:
    parts = [
        f"{name} {' '.join(card_shown(card, style) for card in row)}"
        for name, row in zip(ROW_NAMES, (rows.front, rows.middle, rows.back), strict=True)
        if row
    ]
    return ", ".join(parts) or "nothing"

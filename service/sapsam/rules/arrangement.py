"""Arrangements: a player's 13 cards split into front 3, middle 5 and back 5, and the foul check.

An :class:`Arrangement` holds whatever rows a player sent, of any sizes, so that a wrong count can
be represented and judged: :func:`check_arrangement` decides whether it is a foul and says why, in
words a player can read (docs/rules.md §1.5: the back must not be weaker than the middle, the middle
not weaker than the front, equal is allowed; a wrong number of cards is a foul too).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from sapsam.frozen import from_fields
from sapsam.rules.cards import Card, canonical_order, format_cards, parse_cards
from sapsam.rules.hands import HandValue, evaluate3, evaluate5

FRONT_SIZE: Final = 3
MIDDLE_SIZE: Final = 5
BACK_SIZE: Final = 5
ROW_NAMES: Final = ("front", "middle", "back")
ROW_SIZES: Final = (FRONT_SIZE, MIDDLE_SIZE, BACK_SIZE)
HAND_SIZE: Final = FRONT_SIZE + MIDDLE_SIZE + BACK_SIZE


@dataclass(frozen=True)
class Arrangement:
    """Three rows of cards as a player set them; sizes are not enforced here (see the check)."""

    front: tuple[Card, ...]
    middle: tuple[Card, ...]
    back: tuple[Card, ...]

    def __post_init__(self) -> None:
        # Accept any iterable of card indices, so that callers may pass lists or plain ints; the
        # stored rows are always tuples of Card (hashable, printable).
        for name in ROW_NAMES:
            row = getattr(self, name)
            if not (type(row) is tuple and all(type(card) is Card for card in row)):
                object.__setattr__(self, name, tuple(Card(card) for card in row))

    @classmethod
    def parse(cls, front: str, middle: str, back: str) -> Arrangement:
        """Read three rows in card notation, e.g. ``Arrangement.parse("2s 2h Ad", …)``.

        Raises :class:`~sapsam.rules.cards.CardError` for a bad token or a card repeated inside
        one row; repeats across rows and wrong row sizes are left for :func:`check_arrangement`.
        """
        return cls(parse_cards(front), parse_cards(middle), parse_cards(back))

    @classmethod
    def of(cls, front: Iterable[int], middle: Iterable[int], back: Iterable[int]) -> Arrangement:
        """An arrangement from card indices (``0 .. 51``) in any iterable form."""
        return cls(tuple(front), tuple(middle), tuple(back))  # type: ignore[arg-type]

    @classmethod
    def of_card_rows(
        cls, front: tuple[Card, ...], middle: tuple[Card, ...], back: tuple[Card, ...]
    ) -> Arrangement:
        """The arrangement of rows that already are tuples of ``Card`` (as ``parse_cards``
        returns them), made without ``__post_init__``, whose conversion would change nothing:
        replays and audits make them by the thousand. Pass anything else to the constructor."""
        return from_fields(cls, {"front": front, "middle": middle, "back": back})

    @property
    def rows(self) -> tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]:
        """Front, middle, back."""
        return (self.front, self.middle, self.back)

    @property
    def cards(self) -> tuple[Card, ...]:
        """All cards in row order: front, then middle, then back."""
        return self.front + self.middle + self.back

    def canonical(self) -> Arrangement:
        """The same rows, each sorted into canonical deck order (for hashing and comparing)."""
        return Arrangement(
            canonical_order(self.front), canonical_order(self.middle), canonical_order(self.back)
        )

    def __str__(self) -> str:
        return " / ".join(format_cards(row) for row in self.rows)


class FoulReason(StrEnum):
    """Why an arrangement is a foul."""

    WRONG_ROW_SIZE = "WRONG_ROW_SIZE"
    """A row does not have 3 (front) or 5 (middle, back) cards."""
    NOT_DEALT_CARDS = "NOT_DEALT_CARDS"
    """A card repeats, or the cards are not exactly the 13 dealt to the seat."""
    FALSE_NATURAL = "FALSE_NATURAL"
    """The seat declared a natural its 13 cards do not hold (``sapsam.rules.naturals``); judged
    after the cards, before the order, which a real natural's rows need not keep."""
    ROWS_OUT_OF_ORDER = "ROWS_OUT_OF_ORDER"
    """The front beats the middle or the middle beats the back."""


@dataclass(frozen=True)
class ArrangementCheck:
    """The verdict on one arrangement.

    ``values`` are the front, middle and back values whenever the row sizes are right and no card
    repeats (also for a foul by order or by undealt cards, so a referee can show them), ``None``
    otherwise. ``detail`` is
    empty for a legal arrangement and says what is wrong for a foul. ``cards`` are a legal
    arrangement's 13 cards (what a broken hand's royalty is read from, docs/rules.md §2.7), empty
    for a foul.
    """

    foul: bool
    reason: FoulReason | None
    detail: str
    values: tuple[HandValue, HandValue, HandValue] | None
    cards: tuple[int, ...] = ()


def _foul(
    reason: FoulReason, detail: str, values: tuple[HandValue, HandValue, HandValue] | None = None
) -> ArrangementCheck:
    return ArrangementCheck(foul=True, reason=reason, detail=detail, values=values)


def check_arrangement(
    arrangement: Arrangement, dealt: Collection[int] | None = None, strict_order: bool = False
) -> ArrangementCheck:
    """Judge an arrangement: legal, or a foul with its reason.

    The checks run in this order and the first failure is reported: row sizes (3, 5, 5), then the
    cards (no repeats; and, when ``dealt`` is given, exactly the dealt cards), then the order
    back >= middle >= front, where equal values are allowed (unless ``strict_order``, a rule
    set's ``row_order`` ``strictly_increasing``: then each row must beat the one before it) and a
    3-card front compares with a 5-card middle as in docs/rules.md §1.4 (a missing kicker is
    weaker than any real card).
    """
    front_row, middle_row, back_row = arrangement.front, arrangement.middle, arrangement.back
    # Rows of 3, 5 and 5 (the usual case) pass in one test; otherwise the first wrong one is named.
    if len(front_row) != FRONT_SIZE or len(middle_row) != MIDDLE_SIZE or len(back_row) != BACK_SIZE:
        for name, row, size in zip(
            ROW_NAMES, (front_row, middle_row, back_row), ROW_SIZES, strict=True
        ):
            if len(row) != size:
                return _foul(
                    FoulReason.WRONG_ROW_SIZE, f"{name} has {len(row)} cards, expected {size}"
                )
    cards = front_row + middle_row + back_row
    card_set = set(cards)
    if len(card_set) != len(cards):  # only then are the repeats counted
        repeated = [card for card, count in Counter(cards).items() if count > 1]
        # Values of rows with repeated cards would be meaningless: report none.
        return _foul(
            FoulReason.NOT_DEALT_CARDS, f"card repeated: {format_cards(canonical_order(repeated))}"
        )
    values = (evaluate3(*front_row), evaluate5(*middle_row), evaluate5(*back_row))
    if dealt is not None:
        dealt_set = set(dealt)
        # The usual case, exactly the 13 dealt cards, passes in one comparison; otherwise what is
        # missing and what is extra is worked out.
        if dealt_set != card_set or len(dealt_set) != HAND_SIZE:
            missing = dealt_set.difference(cards)
            extra = card_set.difference(dealt_set)
            if missing or extra or len(dealt_set) != HAND_SIZE:
                parts = []
                if extra:
                    parts.append(f"not dealt: {format_cards(canonical_order(extra))}")
                if missing:
                    parts.append(f"dealt but not placed: {format_cards(canonical_order(missing))}")
                if not parts:
                    parts.append(f"{len(dealt_set)} cards were dealt, expected {HAND_SIZE}")
                return _foul(FoulReason.NOT_DEALT_CARDS, "; ".join(parts), values)
    front, middle, back = values
    # Compared by strength, as HandValue's own comparisons do (the evaluators give HandValues),
    # without a method call per comparison. A 3-card front never equals a 5-card middle.
    if strict_order and middle.strength == back.strength:
        return _foul(
            FoulReason.ROWS_OUT_OF_ORDER,
            f"middle {middle.describe()} does not beat back {back.describe()} (rows must increase)",
            values,
        )
    if front.strength > middle.strength:
        return _foul(
            FoulReason.ROWS_OUT_OF_ORDER,
            f"front {front.describe()} beats middle {middle.describe()}",
            values,
        )
    if middle.strength > back.strength:
        return _foul(
            FoulReason.ROWS_OUT_OF_ORDER,
            f"middle {middle.describe()} beats back {back.describe()}",
            values,
        )
    # The legal verdict, made without the frozen __init__'s setattr per field (every seat of
    # every deal verified or replayed gets one; the class has no __post_init__).
    return from_fields(
        ArrangementCheck,
        {"foul": False, "reason": None, "detail": "", "values": values, "cards": cards},
    )


def is_foul(
    arrangement: Arrangement, dealt: Collection[int] | None = None, strict_order: bool = False
) -> bool:
    """Whether :func:`check_arrangement` judges the arrangement a foul."""
    return check_arrangement(arrangement, dealt, strict_order).foul

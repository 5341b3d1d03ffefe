"""Cards, their notation, and the canonical 52-card deck.

A card is a small integer, ``index = rank * 4 + suit``, so that the canonical deck order is simply
``0 .. 51`` and evaluators can index tables by card without any conversion:

* ranks ``0 .. 12`` are ``2 3 4 5 6 7 8 9 T J Q K A`` (ace high; the wheel is handled by the
  evaluator),
* suits ``0 .. 3`` are clubs, diamonds, hearts, spades (bridge order).

The canonical deck therefore reads ``2c 2d 2h 2s 3c 3d … As`` (see docs/fairness.md). Suits never
break ties between hands; the suit order only fixes the deck order and the canonical order of cards
inside a row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from sapsam.quoting import quote_prefix

RANK_CHARS: Final = "23456789TJQKA"
SUIT_CHARS: Final = "cdhs"
SUIT_SYMBOLS: Final = "♣♦♥♠"

RANK_NAMES: Final = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
)
RANK_PLURALS: Final = tuple("sixes" if name == "six" else name + "s" for name in RANK_NAMES)

_RANK_BY_CHAR: Final = {char: index for index, char in enumerate(RANK_CHARS)}
_SUIT_BY_CHAR: Final = {
    **{char: index for index, char in enumerate(SUIT_CHARS)},
    **{symbol: index for index, symbol in enumerate(SUIT_SYMBOLS)},
    # Variation selectors sometimes follow the symbols (♠️); the text form is accepted too.
    **{symbol + "\ufe0f": index for index, symbol in enumerate(SUIT_SYMBOLS)},
}


class CardError(ValueError):
    """A card token could not be read, a card repeats, or there are too few or too many cards.

    The message names the offending token and its 1-based position, so it can be shown to a
    player or client developer as it is.
    """


class Card(int):
    """One playing card; an ``int`` in ``0 .. 51`` equal to its index in the canonical deck."""

    __slots__ = ()

    def __new__(cls, index: int) -> Card:
        if not 0 <= index < 52:
            raise CardError(f"card index {index} is outside 0..51")
        return super().__new__(cls, index)

    @classmethod
    def of(cls, rank: int, suit: int) -> Card:
        """The card with rank ``0 .. 12`` (2 .. A) and suit ``0 .. 3`` (c d h s)."""
        if not (0 <= rank < 13 and 0 <= suit < 4):
            raise CardError(f"no card has rank {rank} and suit {suit}")
        return _ALL_CARDS[rank * 4 + suit]

    @classmethod
    def parse(cls, token: str) -> Card:
        """Read one card such as ``As``, ``td``, ``10h`` or ``Q♠``."""
        return _parse_token(token, position=None)

    @property
    def rank(self) -> int:
        """0 .. 12 for 2 .. A."""
        return self >> 2

    @property
    def suit(self) -> int:
        """0 .. 3 for clubs, diamonds, hearts, spades."""
        return self & 3

    def __str__(self) -> str:
        return RANK_CHARS[self >> 2] + SUIT_CHARS[self & 3]

    def __repr__(self) -> str:
        return f"Card({self})"

    @property
    def symbol(self) -> str:
        """The card with its suit symbol, e.g. ``A♠``."""
        return RANK_CHARS[self >> 2] + SUIT_SYMBOLS[self & 3]


_ALL_CARDS: Final = tuple(int.__new__(Card, index) for index in range(52))

# Each card by its printed form ("As", "Td"): parse_cards' quick path, and each token's first try.
_BY_NOTATION: Final = {str(card): card for card in _ALL_CARDS}
# Each card's printed form by index: format_cards without a call of Card.__str__ per card.
_NOTATION: Final = tuple(str(card) for card in _ALL_CARDS)

DECK: Final[tuple[Card, ...]] = _ALL_CARDS
"""The canonical deck: ``2c 2d 2h 2s 3c … As``, i.e. card index order."""


def _parse_token(token: str, position: int | None) -> Card:
    known = _BY_NOTATION.get(token)
    if known is not None:  # the printed form ("As"), as every event and reply holds it
        return known
    where = f" at position {position}" if position is not None else ""
    shown = quote_prefix(token, 12)  # a card is 2 or 3 characters: more is quoted in part only
    text = token.strip()
    if len(text) < 2:
        raise CardError(f"bad card {shown}{where}: expected a rank and a suit, like 'As' or '10h'")
    rank_text, suit_text = (text[:2], text[2:]) if text.startswith("10") else (text[0], text[1:])
    rank = 8 if rank_text == "10" else _RANK_BY_CHAR.get(rank_text.upper())
    if rank is None:
        raise CardError(
            f"bad card {shown}{where}: unknown rank {rank_text!r} (use 2-9, T or 10, J, Q, K, A)"
        )
    suit = _SUIT_BY_CHAR.get(suit_text.lower())
    if suit is None:
        raise CardError(
            f"bad card {shown}{where}: unknown suit {quote_prefix(suit_text, 12)} "
            "(use c d h s or ♣ ♦ ♥ ♠)"
        )
    return _ALL_CARDS[rank * 4 + suit]


def parse_cards(text: str | Iterable[str], count: int | None = None) -> tuple[Card, ...]:
    """Read cards separated by white space or commas; refuse repeats and, if given, a wrong count.

    ``text`` may also be an iterable of single tokens. Positions in error messages are 1-based.
    """
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    # What the log and every export hold: distinct cards, each as str(card) prints it. One
    # lookup per card (replays and audits read thousands of rows); anything else, or a wrong
    # count, takes the token-by-token reading, which gives the same cards or the precise error.
    try:
        printed = tuple(map(_BY_NOTATION.__getitem__, tokens))
    except (KeyError, TypeError):
        pass
    else:
        if len(set(printed)) == len(printed) and (count is None or len(printed) == count):
            return printed
    return _parse_tokens(tokens, count)


def _parse_tokens(tokens: Sequence[str], count: int | None) -> tuple[Card, ...]:
    """``parse_cards`` token by token: every notation, every check, positions in errors."""
    cards: list[Card] = []
    seen: dict[Card, int] = {}
    for position, token in enumerate(tokens, start=1):
        card = _parse_token(token, position)
        if card in seen:
            raise CardError(
                f"duplicate card {quote_prefix(token, 12)} at position {position} "
                f"(already given at position {seen[card]})"
            )
        seen[card] = position
        cards.append(card)
    if count is not None and len(cards) != count:
        raise CardError(f"expected {count} cards, got {len(cards)}")
    return tuple(cards)


def format_cards(cards: Iterable[int]) -> str:
    """Cards in the usual notation, separated by single spaces, in the order given."""
    # Indexed as _ALL_CARDS was (the same cards, the same IndexError or TypeError for a bad one).
    return " ".join(map(_NOTATION.__getitem__, cards))


def card_texts(cards: Iterable[int]) -> list[str]:
    """Each card in the usual notation (``str(card)``), in the order given: looked up, without a
    call of ``Card.__str__`` per card (a deal's hands, rows and answers print ~200 cards)."""
    return list(map(_NOTATION.__getitem__, cards))


def canonical_order(cards: Iterable[int]) -> tuple[Card, ...]:
    """Cards sorted into canonical deck order (ascending index)."""
    return tuple(_ALL_CARDS[card] for card in sorted(cards))


def by_strength(cards: Sequence[int]) -> tuple[Card, ...]:
    """Cards sorted for display: highest rank first, suits in deck order within a rank."""
    return tuple(_ALL_CARDS[card] for card in sorted(cards, key=lambda c: (-(c >> 2), c & 3)))

"""Cards and rows written for people, the one way: ``sapsam-play`` shows a hand with it, and the
audit's replay and verify show the same hand the same way.

Cards are written strongest first (by rank, then suit, spades high), as ``As Td`` or, with suit
symbols, ``A♠ T♦`` (hearts and diamonds in red with colour); a row is named as a person says it
("pair of kings", "king-high flush"), with the kickers only when two rows share a name.

Pure: the card notation of :mod:`sapsam.rules.cards`, the values of :mod:`sapsam.rules.hands`.
The terminal client reaches it through its ``rules`` extra (``sapsam_client.card_style`` and
``sapsam_client.hand_names`` delegate here), so the client never imports the server otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from sapsam.rules.cards import (
    RANK_CHARS,
    RANK_NAMES,
    RANK_PLURALS,
    SUIT_SYMBOLS,
    Card,
    parse_cards,
)
from sapsam.rules.hands import evaluate

RED: Final = "\033[31m"
RESET: Final = "\033[0m"

# The categories' numbers in sapsam.rules.hands.Category (stronger is larger).
HIGH_CARD: Final = 0
PAIR: Final = 1
TWO_PAIR: Final = 2
THREE_OF_A_KIND: Final = 3
STRAIGHT: Final = 4
FLUSH: Final = 5
FULL_HOUSE: Final = 6
FOUR_OF_A_KIND: Final = 7
STRAIGHT_FLUSH: Final = 8
ACE: Final = 12
FIVE: Final = 3  # the top card of the wheel, A 2 3 4 5


def card_shown(card: str, *, symbols: bool = False, colour: bool = False) -> str:
    """One card, two columns wide whatever the style (``As``, ``A♠``); ``CardError`` (a
    ``ValueError``) for a token that is no card."""
    index = _card(card)
    text = str(index)
    shown = text[0] + SUIT_SYMBOLS[index & 3] if symbols else text
    if colour and text[1] in "dh":
        return f"{RED}{shown}{RESET}"
    return shown


def _card(token: str) -> Card:
    (card,) = parse_cards([token])
    return card


def by_rank(cards: Sequence[str]) -> list[str]:
    """Cards strongest first: by rank, then suit (spades high), in the server's notation."""
    # Card by card: a fouled row may repeat a card, and is still shown as it was sent.
    return [str(card) for card in sorted((_card(card) for card in cards), reverse=True)]


def cards_shown(cards: Sequence[str], *, symbols: bool = False, colour: bool = False) -> str:
    """Cards strongest first, separated by spaces."""
    return " ".join(card_shown(card, symbols=symbols, colour=colour) for card in by_rank(cards))


def value_name(category: int, ranks: Sequence[int], *, detailed: bool = False) -> str:
    """The name of a value given as ``sapsam.rules.hands.HandValue`` gives it: the category and
    the ranks in comparison order (groups, then kickers; ``0`` is a two, ``12`` an ace).

    ``detailed`` adds the kickers, which tell apart two values of the same name.
    """
    top = ranks[0]
    rest = tuple(ranks[1:])
    if category == STRAIGHT_FLUSH:
        if top == ACE:
            return "royal flush"
        return f"{RANK_NAMES[top]}-high straight flush"
    if category == FOUR_OF_A_KIND:
        return f"four {RANK_PLURALS[top]}" + _kickers(rest, detailed)
    if category == FULL_HOUSE:
        return f"{RANK_PLURALS[top]} full of {RANK_PLURALS[rest[0]]}"
    if category == FLUSH:
        return f"{RANK_NAMES[top]}-high flush" + _kickers(rest, detailed)
    if category == STRAIGHT:
        wheel = " (the wheel)" if top == FIVE else ""
        return f"{RANK_NAMES[top]}-high straight{wheel}"
    if category == THREE_OF_A_KIND:
        return f"three {RANK_PLURALS[top]}" + _kickers(rest, detailed)
    if category == TWO_PAIR:
        pairs = f"two pair, {RANK_PLURALS[top]} and {RANK_PLURALS[rest[0]]}"
        return pairs + _kickers(rest[1:], detailed)
    if category == PAIR:
        return f"pair of {RANK_PLURALS[top]}" + _kickers(rest, detailed)
    if category == HIGH_CARD:
        return f"{RANK_NAMES[top]} high" + _kickers(rest, detailed)
    raise ValueError(f"no hand category {category}")


def _kickers(ranks: tuple[int, ...], detailed: bool) -> str:
    if not detailed or not ranks:
        return ""
    label = "kicker" if len(ranks) == 1 else "kickers"
    return f" ({label} {' '.join(RANK_CHARS[rank] for rank in ranks)})"


def row_value(cards: Sequence[str]) -> tuple[int, int, tuple[int, ...]]:
    """(strength, category, ranks) of a row of 3 or 5 cards: strengths order rows of both sizes
    the way the rules do. ``ValueError`` for a malformed row."""
    value = evaluate(parse_cards(list(cards)))
    return int(value.strength), int(value.category), tuple(int(rank) for rank in value.ranks)


def row_name(cards: Sequence[str], *, detailed: bool = False) -> str:
    """The name of a row of 3 or 5 cards ("pair of kings", "king-high flush")."""
    _, category, ranks = row_value(cards)
    return value_name(category, ranks, detailed=detailed)


def names_apart(first: Sequence[str], second: Sequence[str]) -> tuple[str, str]:
    """The names of two rows to be compared: short, unless the short names are the same and the
    values are not (then with the kickers that decide it)."""
    first_value, second_value = row_value(first), row_value(second)
    short = (value_name(*first_value[1:]), value_name(*second_value[1:]))
    if short[0] == short[1] and first_value[0] != second_value[0]:
        return (
            value_name(*first_value[1:], detailed=True),
            value_name(*second_value[1:], detailed=True),
        )
    return short


def terminal_style(stream: object, environment: Mapping[str, str]) -> tuple[bool, bool]:
    """(symbols, colour) a terminal supports: symbols when it is not a dumb terminal and the
    output is UTF-8; colour when, besides, the output is a terminal and ``NO_COLOR`` is not set
    (or empty) (no-color.org)."""
    term = environment.get("TERM", "")
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    symbols = term not in ("", "dumb") and encoding == "utf8"
    try:
        tty = bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # no such method, or a closed stream
        tty = False
    colour = symbols and tty and not environment.get("NO_COLOR")
    return symbols, colour

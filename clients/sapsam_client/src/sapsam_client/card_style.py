"""How ``sapsam-play`` writes cards: ``As Td`` on any terminal, ``A♠ T♦`` with suit symbols where
the terminal can show them, hearts and diamonds in red where it has colour.

Typing always works both ways (``As``, ``a♠``, ``10s``: ``sapsam_client.commitment.card_index``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TextIO

from sapsam_client.commitment import card_index, card_text

SYMBOLS: Final = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
RED: Final = "\033[31m"
RESET: Final = "\033[0m"


@dataclass(frozen=True)
class CardStyle:
    """Suit symbols instead of letters; red hearts and diamonds (ANSI colour)."""

    symbols: bool = False
    colour: bool = False


PLAIN: Final = CardStyle()


def card_shown(card: str, style: CardStyle = PLAIN) -> str:
    """One card, two columns wide whatever the style (``As``, ``A♠``)."""
    text = card_text(card_index(card))
    shown = text[0] + SYMBOLS[text[1]] if style.symbols else text
    if style.colour and text[1] in "dh":
        return f"{RED}{shown}{RESET}"
    return shown


def by_rank(cards: Sequence[str]) -> list[str]:
    """Cards strongest first: by rank, then suit (spades high), in the server's notation."""
    return [card_text(index) for index in sorted((card_index(c) for c in cards), reverse=True)]


def cards_shown(cards: Sequence[str], style: CardStyle = PLAIN) -> str:
    """Cards strongest first, separated by spaces."""
    return " ".join(card_shown(card, style) for card in by_rank(cards))


def style_for(stream: TextIO, environment: Mapping[str, str], plain: bool = False) -> CardStyle:
    """The style a terminal supports: symbols when it is not a dumb terminal and the output is
    UTF-8; colour when, besides, the output is a terminal and ``NO_COLOR`` is not set (or empty)
    (no-color.org). ``plain`` (``--plain``) asks for letters without colour."""
    if plain:
        return PLAIN
    term = environment.get("TERM", "")
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    symbols = term not in ("", "dumb") and encoding == "utf8"
    try:
        tty = stream.isatty()
    except ValueError:  # a closed stream
        tty = False
    colour = symbols and tty and not environment.get("NO_COLOR")
    return CardStyle(symbols=symbols, colour=colour)

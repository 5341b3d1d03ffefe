"""How ``sapsam-play`` writes cards: ``As Td`` on any terminal, ``A♠ T♦`` with suit symbols where
the terminal can show them, hearts and diamonds in red where it has colour.

The writing itself lives in one home, ``sapsam.rules.hand_text`` (the ``rules`` extra, which
``sapsam-play`` needs), so the audit's replay shows a hand exactly as the client showed it; it is
imported when a card is first written, so importing this module needs no extra.

Typing always works both ways (``As``, ``a♠``, ``10s``: ``sapsam_client.commitment.card_index``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TextIO

from sapsam_client.rules import rules_module


@dataclass(frozen=True)
class CardStyle:
    """Suit symbols instead of letters; red hearts and diamonds (ANSI colour)."""

    symbols: bool = False
    colour: bool = False


PLAIN: Final = CardStyle()


def card_shown(card: str, style: CardStyle = PLAIN) -> str:
    """One card, two columns wide whatever the style (``As``, ``A♠``)."""
    shown: str = rules_module("hand_text").card_shown(
        card, symbols=style.symbols, colour=style.colour
    )
    return shown


def by_rank(cards: Sequence[str]) -> list[str]:
    """Cards strongest first: by rank, then suit (spades high), in the server's notation."""
    ordered: list[str] = rules_module("hand_text").by_rank(cards)
    return ordered


def cards_shown(cards: Sequence[str], style: CardStyle = PLAIN) -> str:
    """Cards strongest first, separated by spaces."""
    shown: str = rules_module("hand_text").cards_shown(
        cards, symbols=style.symbols, colour=style.colour
    )
    return shown


def style_for(stream: TextIO, environment: Mapping[str, str], plain: bool = False) -> CardStyle:
    """The style a terminal supports: symbols when it is not a dumb terminal and the output is
    UTF-8; colour when, besides, the output is a terminal and ``NO_COLOR`` is not set (or empty)
    (no-color.org). ``plain`` (``--plain``) asks for letters without colour."""
    if plain:
        return PLAIN
    symbols, colour = rules_module("hand_text").terminal_style(stream, environment)
    return CardStyle(symbols=bool(symbols), colour=bool(colour))

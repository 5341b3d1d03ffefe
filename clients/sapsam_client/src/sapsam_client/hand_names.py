"""A row's value in a few words, as a person says it: "pair of kings", "king-high flush".

The value itself comes from the server distribution's rules code (``sapsam.rules.hands``, the
``rules`` extra, through :func:`sapsam_client.rules.rules_module`): nothing here judges a hand, it
only names the category and ranks that code returns. ``sapsam.rules`` has its own wording
(``HandValue.describe``: "pair of kings, kickers 9 5 3"), always with every kicker; a player
reading a result wants the short name first and the kickers only when two rows share it, which is
what :func:`row_name` with ``detailed`` gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sapsam_client.commitment import card_index
from sapsam_client.rules import rules_module

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

RANK_CHARS: Final = "23456789TJQKA"
RANK_NAMES: Final = (
    *("two", "three", "four", "five", "six", "seven", "eight"),
    *("nine", "ten", "jack", "queen", "king", "ace"),
)
RANK_PLURALS: Final = tuple("sixes" if name == "six" else name + "s" for name in RANK_NAMES)
ACE: Final = 12
FIVE: Final = 3  # the top card of the wheel, A 2 3 4 5


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
    """(strength, category, ranks) of a row of 3 or 5 cards, by ``sapsam.rules.hands``: strengths
    order rows of both sizes the way the rules do. ``ValueError`` for a malformed row."""
    value = rules_module("hands").evaluate([card_index(card) for card in cards])
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

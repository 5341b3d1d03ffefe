"""A row's value in a few words, as a person says it: "pair of kings", "king-high flush".

The names and the values come from the server distribution's pure rules code (the ``rules``
extra, through :func:`sapsam_client.rules.rules_module`): ``sapsam.rules.hand_text`` names what
``sapsam.rules.hands`` values, the one home the audit's replay uses too, so a dispute shows a row
in the words the player read. ``sapsam.rules`` has a longer wording too (``HandValue.describe``:
"pair of kings, kickers 9 5 3"); a player reading a result wants the short name first and the
kickers only when two rows share it, which is what :func:`row_name` with ``detailed`` gives.
"""

from __future__ import annotations

from collections.abc import Sequence

from sapsam_client.rules import rules_module


def value_name(category: int, ranks: Sequence[int], *, detailed: bool = False) -> str:
    """The name of a value given as ``sapsam.rules.hands.HandValue`` gives it: the category and
    the ranks in comparison order (groups, then kickers; ``0`` is a two, ``12`` an ace).

    ``detailed`` adds the kickers, which tell apart two values of the same name.
    """
    name: str = rules_module("hand_text").value_name(category, ranks, detailed=detailed)
    return name


def row_value(cards: Sequence[str]) -> tuple[int, int, tuple[int, ...]]:
    """(strength, category, ranks) of a row of 3 or 5 cards, by ``sapsam.rules.hands``: strengths
    order rows of both sizes the way the rules do. ``ValueError`` for a malformed row."""
    value: tuple[int, int, tuple[int, ...]] = rules_module("hand_text").row_value(cards)
    return value


def row_name(cards: Sequence[str], *, detailed: bool = False) -> str:
    """The name of a row of 3 or 5 cards ("pair of kings", "king-high flush")."""
    name: str = rules_module("hand_text").row_name(cards, detailed=detailed)
    return name


def names_apart(first: Sequence[str], second: Sequence[str]) -> tuple[str, str]:
    """The names of two rows to be compared: short, unless the short names are the same and the
    values are not (then with the kickers that decide it)."""
    names: tuple[str, str] = rules_module("hand_text").names_apart(first, second)
    return names

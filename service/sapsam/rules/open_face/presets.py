"""Open face's and Pineapple's presets: the named rule sets a table or a tournament may choose,
with a line describing each, and :func:`open_face_preset` to find one by name (docs/rules.md §8).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from sapsam.quoting import quote_prefix
from sapsam.rules.open_face.parameters import (
    PINEAPPLE_STREETS,
    TURBO_STREETS,
    FantasylandCards,
    FantasylandReentry,
    FinnishTwo,
    MiddleRow,
    OpenFaceRules,
    OpenFaceRulesError,
    OpenFaceTimeoutPolicy,
)

REVEAL_SECONDS: Final = 30
"""Every preset's ``reveal_seconds``: the closed game's reveal window
(``sapsam.rules.presets.PRESET_REVEAL_SECONDS``), for the same reason: clients open by
themselves, so the window only has to cover a reconnect."""


def _preset(name: str, **fields: Any) -> OpenFaceRules:
    return OpenFaceRules(name=name, reveal_seconds=REVEAL_SECONDS, **fields)


OPEN_FACE_PRESETS: Final[Mapping[str, OpenFaceRules]] = MappingProxyType(
    {
        "ofc_classic": _preset("ofc_classic"),
        "ofc_turbo": _preset("ofc_turbo", street_cards=TURBO_STREETS),
        "ofc_russian": _preset(
            "ofc_russian",
            royalty_table="russian",
            timeout_policy=OpenFaceTimeoutPolicy.BIGGEST_ROW_FIRST,
        ),
        "ofc_mercier_deeb": _preset(
            "ofc_mercier_deeb",
            middle_trips_royalty=0,
            fantasyland_reentry=FantasylandReentry.ROW_ROYALTY_OVER_TEN,
            fantasyland_max_consecutive=None,
            timeout_policy=OpenFaceTimeoutPolicy.BIGGEST_ROW_FIRST,
        ),
        "ofc_finnish": _preset("ofc_finnish", finnish_two_of_spades=FinnishTwo.ROW),
    }
)
"""Named open-face rule sets the service offers (docs/rules.md §8.9). Finnish 2♠ is an option
of any open-face rule set (``finnish_two_of_spades``); ``ofc_finnish`` is ``ofc_classic`` with
it (``row``, docs/rules.md §8.12)."""


PINEAPPLE_PRESETS: Final[Mapping[str, OpenFaceRules]] = MappingProxyType(
    {
        "pineapple": _preset(
            "pineapple",
            street_cards=PINEAPPLE_STREETS,
            street_discards=1,
            max_seats=3,
            fantasyland_cards=FantasylandCards.FOURTEEN,
            fantasyland_reentry=FantasylandReentry.FRONT_TRIPS_BACK_QUADS,
        ),
        "pineapple_2_7": _preset(
            "pineapple_2_7",
            street_cards=PINEAPPLE_STREETS,
            street_discards=1,
            max_seats=3,
            fantasyland_cards=FantasylandCards.FOURTEEN,
            fantasyland_reentry=FantasylandReentry.FRONT_TRIPS_BACK_QUADS,
            middle_row=MiddleRow.DEUCE_TO_SEVEN,
        ),
    }
)
"""Pineapple's named rule sets (docs/rules.md §8.12). Kept apart from ``OPEN_FACE_PRESETS``
until the API places a street with its discard (issue #19): the rules, the domain and the audit
play them; :func:`open_face_preset` finds them."""


OPEN_FACE_PRESET_DESCRIPTIONS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "ofc_classic": "Open face as source 001 plays it: 5 cards then 1 at a time, 1-6, the "
        "American royalties with middle trips 2, Fantasyland on QQ+ at most twice in a row, a "
        "timed-out hand dead for the rest of the set.",
        "ofc_turbo": "ofc_classic dealt 5 + 4 + 4 (001's Turbo).",
        "ofc_russian": "Source 003's 'Russian' royalties, Fantasyland with one repeat, a "
        "timed-out hand placed from the biggest row down and not killed.",
        "ofc_mercier_deeb": "Source 003's PokerStars table (no middle trips royalty) with the "
        "Mercier/Deeb Fantasyland: repeated for any row royalty over 10, without limit.",
        "ofc_finnish": "ofc_classic with source 003's Finnish 2♠: the 2♠ doubles both royalties "
        "of the row it sits in, won or lost.",
    }
)


PINEAPPLE_PRESET_DESCRIPTIONS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "pineapple": "Pineapple (001, 003): 5 cards, then 3 a turn, 2 placed and 1 discarded "
        "unseen; at most 3 seats; Fantasyland of 14 cards (13 set, 1 discarded), repeated for "
        "front trips or back quads.",
        "pineapple_2_7": "pineapple with a deuce-to-seven lowball middle (001's 2-7 Pineapple): "
        "the weaker middle wins; dead unless back >= front >= middle.",
    }
)


def every_open_face_preset() -> dict[str, OpenFaceRules]:
    """Open face's presets then Pineapple's, by name: what a table or a tournament may name."""
    return {**OPEN_FACE_PRESETS, **PINEAPPLE_PRESETS}


def open_face_preset(name: str) -> OpenFaceRules:
    """The open-face or Pineapple preset called ``name``; an unknown name raises, listing
    them."""
    try:
        return OPEN_FACE_PRESETS[name]
    except (KeyError, TypeError):
        pass
    try:
        return PINEAPPLE_PRESETS[name]
    except (KeyError, TypeError):
        raise OpenFaceRulesError(
            f"unknown open-face preset {quote_prefix(name)} "
            f"(known presets: {', '.join([*OPEN_FACE_PRESETS, *PINEAPPLE_PRESETS])})"
        ) from None

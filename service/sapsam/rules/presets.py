"""The presets: named rule sets, each with a one-line description (docs/rules.md §2.2).

``pagat`` is the base game of docs/rules.md §1 and the default (``DEFAULT_RULE_SET``); the others
are the scoring methods and options of §2.3 to §2.10 as the sources combine them, each with a
one-line description (``PRESET_DESCRIPTIONS``). The names of rules version 1 (``two_four``,
``one_six``, ``scoop_bonus``) remain accepted as aliases (``PRESET_ALIASES``). Every preset has an
arranging and a reveal deadline (``PRESET_ARRANGE_SECONDS``, ``PRESET_REVEAL_SECONDS``), so a
table started from one can never wait for an absent player forever.

A preset is a rule set like any other: a table records it resolved, every field, so a change here
changes new tables only.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from sapsam.quoting import quote_prefix
from sapsam.rules.naturals import NaturalsTable
from sapsam.rules.royalties import BrokenHands, RoyaltyLimit, RoyaltyPayment, table_fields
from sapsam.rules.rule_options import RowOrder, ScoringMethod, SurrenderRule
from sapsam.rules.ruleset import RuleSet, RuleSetError

PRESET_ARRANGE_SECONDS: Final = 90
"""Every preset's ``arrange_seconds`` (docs/rules.md §2.2 gives the reasoning)."""
PRESET_REVEAL_SECONDS: Final = 30
"""Every preset's ``reveal_seconds``: the clients reveal by themselves, so the window only has to
cover a reconnect (docs/rules.md §2.2)."""

PRESET_SURRENDER_SECONDS: Final = 20
"""``surrender_seconds`` a CreateTable request gets when it turns surrender on without a
deadline of its own: one announcement is a single choice (docs/rules.md §2.8)."""

_PRESET_DEADLINES: Final[dict[str, Any]] = {
    "arrange_seconds": PRESET_ARRANGE_SECONDS,
    "reveal_seconds": PRESET_REVEAL_SECONDS,
}


def _preset(name: str, **fields: Any) -> RuleSet:
    return RuleSet(name=name, **_PRESET_DEADLINES, **fields)


_FOUR_PLAYER: Final[dict[str, Any]] = {
    "scoring": ScoringMethod.PER_ROW,
    "min_seats": 4,
    "max_seats": 4,
    "row_order": RowOrder.STRICTLY_INCREASING,
}

_CAPSA_SUSUN: Final[dict[str, Any]] = {
    "scoring": ScoringMethod.TWO_FOUR,
    "royalties": RoyaltyPayment.WON_ROW,
    **table_fields("capsa_susun_flat"),
    "naturals": NaturalsTable.CLASSIC,
    "surrender": SurrenderRule.PAY_PLAYERS,
    "surrender_seconds": PRESET_SURRENDER_SECONDS,
}
"""002's game as sapsam reads its usual options: 2-4 scoring («cele 24 de metode de notare»,
the first of the two most common), royalties to the winner of the row only («În mod normal, doar
câștigătorul»), every royalty 1 unit («toate redevențele valorează aceeași sumă»), its naturals
(004's amounts, 002 giving none) and its surrender announcement («fiecare jucător va anunța la
rândul său […] indiferent dacă își joacă sau nu mâna») at the default price."""

PRESETS: Final[Mapping[str, RuleSet]] = MappingProxyType(
    {
        "pagat": _preset("pagat", scoring=ScoringMethod.PER_ROW),
        "pagat_two_four": _preset("pagat_two_four", scoring=ScoringMethod.TWO_FOUR),
        "pagat_one_six": _preset("pagat_one_six", scoring=ScoringMethod.ONE_SIX),
        "pagat_one_six_two": _preset(
            "pagat_one_six_two", scoring=ScoringMethod.ONE_SIX, one_six_two_of_three=2
        ),
        "pagat_scoop_bonus": _preset(
            "pagat_scoop_bonus", scoring=ScoringMethod.PER_ROW_SCOOP_BONUS, scoop_bonus=1
        ),
        "four_player": _preset("four_player", **_FOUR_PLAYER),
        "four_player_royalties": _preset(
            "four_player_royalties", **_FOUR_PLAYER, royalties=RoyaltyPayment.WON_ROW
        ),
        "four_player_bonus": _preset(
            "four_player_bonus",
            **_FOUR_PLAYER,
            royalties=RoyaltyPayment.WON_ROW,
            naturals=NaturalsTable.CLASSIC,
        ),
        "capsa_susun": _preset("capsa_susun", **_CAPSA_SUSUN),
        "capsa_susun_graded": _preset(
            "capsa_susun_graded", **{**_CAPSA_SUSUN, **table_fields("capsa_susun_graded")}
        ),
        "capsa_susun_both_paid": _preset(
            "capsa_susun_both_paid", **{**_CAPSA_SUSUN, "royalties": RoyaltyPayment.HELD_ROW}
        ),
        "capsa_susun_one_royalty": _preset(
            "capsa_susun_one_royalty",
            **{**_CAPSA_SUSUN, "royalty_limit": RoyaltyLimit.LARGEST_ONLY},
        ),
        "capsa_susun_broken": _preset(
            "capsa_susun_broken",
            **{**_CAPSA_SUSUN, "royalty_broken_hands": BrokenHands.CLAIMED},
        ),
        "capsa_susun_one_six": _preset(
            "capsa_susun_one_six", **{**_CAPSA_SUSUN, "scoring": ScoringMethod.ONE_SIX}
        ),
        "capsa_susun_scoop_bonus": _preset(
            "capsa_susun_scoop_bonus",
            **{**_CAPSA_SUSUN, "scoring": ScoringMethod.PER_ROW_SCOOP_BONUS},
        ),
        "closed_american": _preset(
            "closed_american",
            scoring=ScoringMethod.ONE_SIX,
            royalties=RoyaltyPayment.HELD_ROW,
            **table_fields("american"),
        ),
        "closed_russian": _preset(
            "closed_russian",
            scoring=ScoringMethod.ONE_SIX,
            royalties=RoyaltyPayment.HELD_ROW,
            **table_fields("russian"),
        ),
        "thirteen_waters": _preset(
            "thirteen_waters",
            scoring=ScoringMethod.PER_ROW,
            royalties=RoyaltyPayment.WON_ROW,
            naturals=NaturalsTable.EXTENDED,
        ),
    }
)
"""Named rule sets (docs/rules.md §2.2); ``pagat`` (§1) is the default. Each has deadlines.

``four_player`` is 004's game as it says it "may be played", without the special hands;
``four_player_royalties`` adds the first of them, the royalties, and ``four_player_bonus`` both,
the royalties and the naturals. ``capsa_susun`` is 002's game as sapsam reads its usual options,
naturals and surrender included; its variants change one option each. ``thirteen_waters`` is
the optional preset with the extended specials (十三水, Thirteen Waters; docs/rules.md §2.9.2),
which no source describes: their amounts are sapsam's."""

_CAPSA_SUSUN_REST: Final = (
    " With 002's naturals (004's amounts) and surrender announcement (2 units)."
)

PRESET_DESCRIPTIONS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "pagat": "The base game (source 000): each row won +1 unit, lost -1, tied 0; no bonus.",
        "pagat_two_four": "2-4 scoring (source 002): per row, plus 1 unit for winning two or "
        "three rows; a 2-1 win nets +2, a scoop +4.",
        "pagat_one_six": "1-6 'western' scoring (sources 001, 003): 1 unit for winning two of "
        "the three rows, 6 for all three.",
        "pagat_one_six_two": "1-6 with source 003's alternative: 2 units for winning two of the "
        "three rows, 6 for all three.",
        "pagat_scoop_bonus": "Scoop bonus (source 002): per row, plus 1 extra unit for winning "
        "all three rows.",
        "four_player": "The Polish four-player game (source 004) without its optional special "
        "hands: four seats, per row, and each row must beat the one before it.",
        "four_player_royalties": "four_player with source 004's royalties for won rows (front "
        "trips 3, middle full house 2, quads 4, straight flush 5); without its naturals.",
        "four_player_bonus": "The Polish four-player game (source 004) with both its special "
        "hands: four_player_royalties plus the naturals (six pairs 3, three straights 3, three "
        "flushes 3, dragon 13), declared before the arrangement is committed.",
        "capsa_susun": "Capsa Susun (source 002): 2-4 scoring, royalties (front trips, middle "
        "full house or better, quads, straight flush) 1 unit each to the row's winner only."
        + _CAPSA_SUSUN_REST,
        "capsa_susun_graded": "capsa_susun with royalties graded by rarity as 002's example "
        "grades them: a straight flush 2 units, the others 1." + _CAPSA_SUSUN_REST,
        "capsa_susun_both_paid": "capsa_susun with every royalty paid whether its row won or "
        "lost, the difference changing hands (002's 'normally only the winner', otherwise)."
        + _CAPSA_SUSUN_REST,
        "capsa_susun_one_royalty": "capsa_susun with one royalty per hand: only the largest "
        "royalty a player collects from an opponent counts (002)." + _CAPSA_SUSUN_REST,
        "capsa_susun_broken": "capsa_susun where quads or a straight flush dealt but split "
        "across rows still earns its royalty (002)." + _CAPSA_SUSUN_REST,
        "capsa_susun_one_six": "capsa_susun scored 1-6, 002's other common method: 1 unit for "
        "two of three rows, 6 for all three, plus royalties." + _CAPSA_SUSUN_REST,
        "capsa_susun_scoop_bonus": "capsa_susun scored per row with 002's scoop bonus (1 extra "
        "unit for all three rows), plus royalties." + _CAPSA_SUSUN_REST,
        "closed_american": "The closed game scored as source 003 scores open-face: 1-6, and the "
        "'American' royalties held won or lost, the difference changing hands.",
        "closed_russian": "closed_american with source 003's 'Russian' royalties (back quads 8, "
        "straight flush 10, royal 15; middle twice those).",
        "thirteen_waters": "The closed game with the extended specials Thirteen Waters servers "
        "play (sapsam's amounts; no source gives them): per row, 004's royalties for won rows, "
        "and the four naturals plus nine specials, declared before committing.",
    }
)
"""One line for each preset, in English: what ``sapsam rules list`` and ``ListRuleSets`` show."""

PRESET_ALIASES: Final[Mapping[str, str]] = MappingProxyType(
    {"two_four": "pagat_two_four", "one_six": "pagat_one_six", "scoop_bonus": "pagat_scoop_bonus"}
)
"""Rules version 1's preset names, still accepted: each names today's preset (of the latest
rules version, whose rule set records the new name)."""

DEFAULT_RULE_SET: Final = PRESETS["pagat"]


def preset(name: str) -> RuleSet:
    """The preset called ``name`` (or an alias of it, ``PRESET_ALIASES``); an unknown name raises
    :class:`RuleSetError` listing them."""
    try:
        return PRESETS[PRESET_ALIASES.get(name, name)]
    except (KeyError, TypeError):
        raise RuleSetError(
            f"unknown rule set preset {quote_prefix(name)} (known presets: {', '.join(PRESETS)})"
        ) from None


def resolve_rule_set(value: str | Mapping[str, Any]) -> RuleSet:
    """A rule set from a preset name or a full rule-set object (as in :meth:`RuleSet.from_dict`)."""
    if isinstance(value, str):
        return preset(value)
    if isinstance(value, Mapping):
        return RuleSet.from_dict(value)
    raise RuleSetError(
        f"rules must be a preset name or a rule set object, got {type(value).__name__}"
    )

"""How sapsam-play and sapsam-bot create a table: one wording, one preset list."""

from __future__ import annotations

import argparse

# The server's presets (sapsam rules list); named here because the SDK does not import the server.
PRESET_NAMES = (
    "pagat",
    "pagat_two_four",
    "pagat_one_six",
    "pagat_one_six_two",
    "pagat_scoop_bonus",
    "four_player",
    "four_player_royalties",
    "four_player_bonus",
    "capsa_susun",
    "capsa_susun_graded",
    "capsa_susun_both_paid",
    "capsa_susun_one_royalty",
    "capsa_susun_broken",
    "capsa_susun_one_six",
    "capsa_susun_scoop_bonus",
    "closed_american",
    "closed_russian",
    "thirteen_waters",
)
OPEN_FACE_PRESET_NAMES = (
    "ofc_classic",
    "ofc_turbo",
    "ofc_russian",
    "ofc_mercier_deeb",
    "ofc_finnish",
    "pineapple",
    "pineapple_2_7",
)
"""The server's open-face presets (issues #18, #19; Pineapple's seat at most 3): a set of as many
deals as seats, no --deals."""


def add_table_creation_options(parser: argparse.ArgumentParser) -> None:
    """``--seat-count``, ``--deals`` and ``--preset``, each used with ``--create``."""
    parser.add_argument(
        "--seat-count",
        type=int,
        default=4,
        help="with --create: seats at the table, 2 to 4 (default: %(default)s)",
    )
    parser.add_argument(
        "--deals",
        type=int,
        help="with --create: deals in the series (default: the preset's series length)",
    )
    parser.add_argument(
        "--preset",
        help=f"with --create: rule set preset: {', '.join(PRESET_NAMES)} (default: pagat, the"
        f" base game); or open face: {', '.join(OPEN_FACE_PRESET_NAMES)}",
    )

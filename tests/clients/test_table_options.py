"""sapsam-play and sapsam-bot name the server's presets, every one, in the server's order."""

from __future__ import annotations

from sapsam.rules.ruleset import PRESETS
from sapsam_client import bot, terminal
from sapsam_client.table_options import PRESET_NAMES


def test_the_clients_name_every_preset_the_server_has() -> None:
    assert tuple(PRESETS) == PRESET_NAMES


def test_both_programs_create_tables_with_the_same_options() -> None:
    for parser in (bot.build_parser(), terminal.build_parser()):
        arguments = parser.parse_args(
            ["--create", "--seat-count", "3", "--deals", "5", "--preset", "four_player"]
        )
        assert (arguments.seat_count, arguments.deals, arguments.preset) == (3, 5, "four_player")
        assert "four_player_royalties" in parser.format_help()

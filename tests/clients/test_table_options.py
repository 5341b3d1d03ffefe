"""sapsam-play and sapsam-bot name the server's presets, every one, in the server's order; the SDK
warns of a table created without deadlines."""

from __future__ import annotations

import warnings

import pytest

from sapsam.rules.presets import PRESETS
from sapsam_client import NoDeadlineWarning, bot, connect, terminal
from sapsam_client.table_options import PRESET_NAMES
from sapsam_proto.v1 import rule_set_pb2


def test_the_clients_name_every_preset_the_server_has() -> None:
    assert tuple(PRESETS) == PRESET_NAMES


def test_both_programs_create_tables_with_the_same_options() -> None:
    for parser in (bot.build_parser(), terminal.build_parser()):
        arguments = parser.parse_args(
            ["--create", "--seat-count", "3", "--deals", "5", "--preset", "four_player"]
        )
        assert (arguments.seat_count, arguments.deals, arguments.preset) == (3, 5, "four_player")
        assert "four_player_royalties" in parser.format_help()


def test_the_sdk_says_loudly_that_a_table_has_no_deadline(address: str) -> None:
    # The server's CreateTableResponse.warnings were dropped by create_table: a table created
    # through the SDK without deadlines said nothing, and could then wait forever.
    client = connect(address)
    client.register("Ann")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a preset's table warns of nothing
        client.create_table(2, preset="pagat")
    with pytest.warns(NoDeadlineWarning) as caught:
        table = client.create_table(
            2, rule_set=rule_set_pb2.RuleSet(name="slow", arrange_seconds=0, reveal_seconds=0)
        )
    said = [str(warning.message) for warning in caught]
    assert len(said) == 2 and all(text.startswith(f"{table.name}: ") for text in said)
    assert "no arranging deadline" in said[0] and "no reveal deadline" in said[1]

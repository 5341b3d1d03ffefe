"""The bot's state file: players by seat index and open commitments, owner-only, one file per
server, table, --seat option and --name, locked while a bot runs so a second bot takes another
slot; the commands printed to resume a bot or a player, and how a player's unfinished tables
are described."""

from __future__ import annotations

import json
import shlex
import uuid
from pathlib import Path

import pytest

from sapsam_client.bot import build_parser as bot_parser
from sapsam_client.bot import resume_command as bot_resume
from sapsam_client.bot_state import (
    BotState,
    StateDamagedError,
    StateInUseError,
    state_folder,
    state_name,
)
from sapsam_client.commitment import Rows
from sapsam_client.my_tables import HeldTable
from sapsam_client.my_tables import resume_command as play_resume
from sapsam_client.seat_types import Commitment
from sapsam_client.terminal import build_parser as play_parser
from sapsam_client.tokens import SavedPlayer
from sapsam_proto.v1 import rule_set_pb2, table_pb2

TABLE = f"tables/{uuid.UUID(int=7)}"
ROWS = Rows.of(["As", "Ad", "2c"], ["Kc", "Kd", "3h", "4h", "5h"], ["Qs", "Qh", "Qd", "9c", "9s"])


def test_players_and_commitments_survive_a_reopen_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "bot.json"
    state = BotState(path)
    assert state.player(0) is None and state.load(f"{TABLE}/seats/1") == {}
    ann = SavedPlayer("players/a", "bot", "token-a")
    state.keep_player(0, ann)
    state.keep_player(1, SavedPlayer("players/b", "bot 2", "token-b"))
    committed = Commitment(3, ROWS, b"\x01" * 32, b"\x02" * 32)
    state.save(f"{TABLE}/seats/1", committed)
    state.save(f"{TABLE}/seats/2", Commitment(3, ROWS, b"\x03" * 32, b"\x04" * 32))
    state.close()

    again = BotState(path)
    assert again.player(0) == ann and again.player(1) == SavedPlayer(
        "players/b", "bot 2", "token-b"
    )
    assert again.load(f"{TABLE}/seats/1") == {3: committed}
    again.forget(f"{TABLE}/seats/1", 3)
    assert again.load(f"{TABLE}/seats/1") == {} and len(again.load(f"{TABLE}/seats/2")) == 1
    assert path.stat().st_mode & 0o777 == 0o600  # tokens and nonces: the owner's alone
    again.close()


def test_a_running_bot_keeps_its_file_a_second_one_takes_the_next_slot(tmp_path: Path) -> None:
    first = BotState.claim("127.0.0.1:50051", TABLE, None, tmp_path)
    with pytest.raises(StateInUseError):
        BotState(first.path)
    second = BotState.claim("127.0.0.1:50051", TABLE, None, tmp_path)
    assert first.path != second.path
    assert first.path.name == state_name("127.0.0.1:50051", TABLE, None, 1)
    assert second.path.name == state_name("127.0.0.1:50051", TABLE, None, 2)
    first.close()  # the first bot stopped: a rerun takes its file
    assert BotState.claim("127.0.0.1:50051", TABLE, None, tmp_path).path == first.path
    seat_two = BotState.claim("127.0.0.1:50051", TABLE, 2, tmp_path)
    assert seat_two.path.name == f"127.0.0.1-50051_{uuid.UUID(int=7)}_seat2_bot-1.json"


def test_another_bot_command_at_the_table_never_takes_up_the_first_ones_players(
    tmp_path: Path,
) -> None:
    # `--name Zed` stopped; `--name Yan` started at the same table must not play Zed's seats
    # (it did: the file was keyed by server, table and --seat only); Zed's rerun takes them up.
    zed = BotState.claim("127.0.0.1:50051", TABLE, None, tmp_path, name="Zed")
    zed_player = SavedPlayer("players/zed", "Zed", "token-of-zed")
    zed.keep_player(0, zed_player)
    zed.close()
    yan = BotState.claim("127.0.0.1:50051", TABLE, None, tmp_path, name="Yan")
    assert yan.path != zed.path and yan.player(0) is None
    again = BotState.claim("127.0.0.1:50051", TABLE, None, tmp_path, name="Zed")
    assert again.path == zed.path and again.player(0) == zed_player
    assert again.path.name == f"127.0.0.1-50051_{uuid.UUID(int=7)}_any_Zed-1.json"
    assert state_name("h:1", TABLE, None, 1, "Zoë & co").endswith("_any_Zo-co-1.json")
    yan.close()
    again.close()


def test_the_default_folder_is_the_user_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert state_folder() == tmp_path / "sapsam" / "bots"


def test_a_bot_created_its_table_resumes_with_that_table() -> None:
    argv = ["--server", "h:1", "--create", "--seat-count", "3", "--deals=4", "--seats-here", "2"]
    command = bot_resume(argv, TABLE)
    assert command == f"sapsam-bot --server h:1 --table {TABLE} --seats-here 2"
    bot_parser().parse_args(shlex.split(command)[1:])  # a valid command line
    assert bot_resume(["--table", TABLE, "--seat", "1"], TABLE) == (
        f"sapsam-bot --table {TABLE} --seat 1"
    )


def test_a_player_resumes_at_the_same_table_with_the_same_token_file() -> None:
    arguments = play_parser().parse_args(
        ["--server", "h:1", "--create", "--token-file", "/x y/t.json", "--plain"]
    )
    command = play_resume(arguments, TABLE)
    assert command == f"sapsam-play --server h:1 --table {TABLE} --token-file '/x y/t.json' --plain"
    again = play_parser().parse_args(shlex.split(command)[1:])
    assert again.table == TABLE and again.token_file == "/x y/t.json"


@pytest.mark.parametrize("damage", [[1, 2], {"3": "not a commitment"}, {"x": {}}])
def test_a_damaged_commitment_is_a_clear_refusal(tmp_path: Path, damage: object) -> None:
    path = tmp_path / "bot.json"
    path.write_text(json.dumps({"commitments": {f"{TABLE}/seats/1": damage}}), encoding="utf-8")
    state = BotState(path)
    with pytest.raises(StateDamagedError, match="move it away"):
        state.load(f"{TABLE}/seats/1")
    state.close()


def test_an_unfinished_table_past_its_series_length_is_not_deal_4_of_3() -> None:
    # Deal 3 of a 3-deal series voided: the table plays deal 4, which counts as the third.
    table = table_pb2.Table(
        name=TABLE,
        status=table_pb2.TABLE_STATUS_PLAYING,
        deal_number=4,
        rule_set=rule_set_pb2.RuleSet(series_length=3),
    )
    shown = HeldTable(table, f"{TABLE}/seats/0").describe()
    assert shown == (
        f"{TABLE}  your seat 0, deal 4 (a series of 3 deals that count; voided deals do not)"
    )
    table.deal_number = 2
    assert HeldTable(table, f"{TABLE}/seats/0").describe().endswith("deal 2 of 3")

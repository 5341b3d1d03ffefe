"""`sapsam-bot` plays a seat its player already holds: one taken in advance through the SDK, or its
own after the bot process was killed mid-series and started again."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sapsam_client import Client, Registration, connect
from sapsam_client.tokens import SavedPlayer, save_player
from sapsam_proto.v1 import table_pb2

BOT = [sys.executable, "-m", "sapsam_client.bot"]
DEAL_LINE = re.compile(r"^tables/\S+/seats/(\d): deal (\d+) ([+-]\d+)", re.MULTILINE)


def _environment(token_file: Path) -> dict[str, str]:
    # A token file of the test's own, so nothing saved by the user is picked up.
    return {**os.environ, "SAPSAM_TOKEN_FILE": str(token_file)}


def _bot(
    address: str, table: str, environment: dict[str, str], *extra: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*BOT, "--server", address, "--table", table, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
    )


def _table_with_a_seat_taken(address: str, series_length: int) -> tuple[Client, str, Registration]:
    """A 2-seat table where "ann", registered through the SDK, holds seat 1 in advance."""
    owner = connect(address)
    ann = owner.register("ann")
    table = owner.create_table(2, series_length=series_length).name
    assert owner.join_table(table, 1).position == 1
    return owner, table, ann


@pytest.mark.parametrize("found_by", ["player", "seat", "token file"])
def test_a_bot_with_a_token_plays_the_seat_its_player_already_holds(
    address: str, tmp_path: Path, found_by: str
) -> None:
    owner, table, ann = _table_with_a_seat_taken(address, series_length=2)
    token_file = tmp_path / "tokens.json"
    how = {
        "player": ["--player", ann.player],
        "seat": ["--seat", "1"],
        "token file": [],
    }[found_by]
    if found_by == "token file":
        save_player(token_file, address, SavedPlayer(ann.player, ann.display_name, ann.token))
    environment = _environment(token_file)
    held = _bot(address, table, environment, "--token", ann.token, *how)
    other = _bot(address, table, environment, "--strategy", "random", "--seed", "3")
    outputs = [bot.communicate(timeout=120)[0] for bot in (held, other)]
    assert [held.returncode, other.returncode] == [0, 0], outputs
    deals = DEAL_LINE.findall(outputs[0])
    assert [(seat, int(deal)) for seat, deal, _ in deals] == [("1", 1), ("1", 2)]
    assert "standings:" in outputs[0]
    final = owner.get_table(table)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert [(seat.position, seat.display_name) for seat in final.seats] == [(0, "bot"), (1, "ann")]


def test_a_bot_that_cannot_tell_which_seat_is_held_says_what_to_give(
    address: str, tmp_path: Path
) -> None:
    _, table, ann = _table_with_a_seat_taken(address, series_length=2)
    completed = subprocess.run(
        [*BOT, "--server", address, "--table", table, "--token", ann.token],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=_environment(tmp_path / "tokens.json"),
    )
    assert completed.returncode == 1
    assert "ALREADY_SEATED" in completed.stderr
    assert "name the player (players/ID) or the seat number" in completed.stderr


def test_a_bot_restarted_mid_series_resumes_its_seat_and_the_series_finishes(
    address: str, tmp_path: Path
) -> None:
    owner = connect(address)
    ann = owner.register("ann")
    table = owner.create_table(2, series_length=3).name
    environment = _environment(tmp_path / "tokens.json")
    resumable = ["--token", ann.token, "--player", ann.player]
    resumable += ["--commitments", str(tmp_path / "commitments.json")]
    first = _bot(address, table, environment, *resumable)
    other = _bot(address, table, environment, "--strategy", "random", "--seed", "7")
    assert first.stdout is not None
    seen = ""
    for line in first.stdout:
        seen += line
        if DEAL_LINE.match(line):
            break  # deal 1 is scored: the series is under way
    first.kill()  # a crash, not a clean exit
    first.communicate(timeout=30)
    assert [int(deal) for _, deal, _ in DEAL_LINE.findall(seen)] == [1], seen
    assert owner.get_table(table).phase != table_pb2.TABLE_PHASE_SERIES_COMPLETE

    again = _bot(address, table, environment, *resumable)
    outputs = [bot.communicate(timeout=120)[0] for bot in (again, other)]
    assert [again.returncode, other.returncode] == [0, 0], outputs
    # The restarted bot plays the same seat and sees the series to its end.
    seats = {seat for seat, _, _ in DEAL_LINE.findall(outputs[0])}
    numbers = [int(deal) for _, deal, _ in DEAL_LINE.findall(outputs[0])]
    assert len(seats) == 1 and numbers[-1] == 3 and "standings:" in outputs[0]
    final = owner.get_table(table)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert sorted(seat.display_name for seat in final.seats) == ["ann", "bot"]
    held = next(seat for seat in final.seats if seat.player == ann.player)
    assert held.name.endswith(f"/seats/{seats.pop()}")

"""A tournament run from the CLI alone, through the real entry point (``python -m sapsam.cli``)
against a real server: players registered by display name, the bots following their players
from round to round, ``watch`` live to the end, pause / resume, forfeit and re-seat, standings and
leaderboards as a table, CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

from test_tournament_cli import sapsam
from tournament_play import OPERATOR_TOKEN, Services

from sapsam.api.server import RunningServer
from sapsam.audit.sample_play import play_deal
from sapsam.cli import tournament_bots

WATCH_START_SECONDS = 120
"""How long ``sapsam tournament watch`` may take to print its first picture (a loaded machine)."""


def created(url: str, *options: str) -> str:
    made = sapsam("tournament", "create", "--name", "Club night", *options, "--database-url", url)
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def first_picture(watcher: subprocess.Popen[str], watched: Path) -> None:
    """Wait until ``sapsam tournament watch`` printed its first picture (it follows the
    tournament from there on)."""
    deadline = time.monotonic() + WATCH_START_SECONDS
    while "Club night (tournaments/" not in watched.read_text():
        assert watcher.poll() is None, f"the watch ended at once: {watched.read_text()}"
        assert time.monotonic() < deadline, "the watch printed no picture in time"
        time.sleep(0.1)


def test_a_tournament_from_registration_to_final_standings(
    server: RunningServer, database_url: str, tmp_path: Path
) -> None:
    url = database_url
    target = f"127.0.0.1:{server.port}"
    bots = tournament_bots.register_bots(target, 4)
    names = [bot.display_name for bot in bots]
    tournament = created(url, "--seat-count", "2", "--rounds", "2", "--deals", "1")
    # Unknown players are refused, by name and by id, and then nobody is entered.
    unknown = sapsam(
        "tournament", "register", tournament, names[0], "nobody", "--database-url", url
    )
    assert unknown.returncode == 2 and "no player is named 'nobody'" in unknown.stderr
    assert "nothing was done" in unknown.stderr
    stranger = f"players/{uuid.uuid4()}"
    refused = sapsam("tournament", "register", tournament, stranger, "--database-url", url)
    assert refused.returncode == 2 and f"no player {stranger}" in refused.stderr
    assert " 0 players" in sapsam("tournament", "show", tournament, "--database-url", url).stdout
    # By display name, or by id.
    entered = sapsam(
        "tournament", "register", tournament, *names[:3], bots[3].player, "--database-url", url
    )
    assert entered.returncode == 0, entered.stderr
    assert f"entered {names[0]} ({bots[0].player})" in entered.stdout
    started = sapsam("tournament", "start", tournament, "--database-url", url)
    assert started.returncode == 0 and names[1] in started.stdout
    watch_options = ("--server", target, "--operator-token", OPERATOR_TOKEN)
    once = sapsam("tournament", "watch", tournament, *watch_options, "--once")
    assert once.returncode == 0, once.stderr
    assert "Club night (tournaments/" in once.stdout and "RUNNING, round 1 of 2" in once.stdout
    assert "waits for anyone seated to go on" in once.stdout or "waits for seat" in once.stdout
    no_token = sapsam("tournament", "watch", tournament, "--server", target, "--once")
    assert no_token.returncode == 2 and "operator token" in no_token.stderr
    # Pause and resume, as the operator would.
    paused = sapsam("tournament", "pause", tournament, "--reason", "lunch", "--database-url", url)
    assert paused.returncode == 0 and "is paused: lunch" in paused.stdout
    twice = sapsam("tournament", "pause", tournament, "--reason", "again", "--database-url", url)
    assert twice.returncode == 2 and "TOURNAMENT_PAUSED" in twice.stderr
    shown = sapsam("tournament", "watch", tournament, *watch_options, "--once").stdout
    assert "PAUSED" in shown and "(lunch)" in shown
    assert "(held: the tournament is paused)" in shown and "ALERT" not in shown
    resumed = sapsam("tournament", "resume", tournament, "--database-url", url)
    assert resumed.returncode == 0 and "runs again" in resumed.stdout
    # The live watch follows the whole tournament while the bots play it, then ends by itself.
    # It follows from the version of the picture it prints first, so the bots start only once
    # that is printed: a watcher slow to start (a loaded machine: it failed so once under -n 2)
    # would begin after round 1's credits, or after the end, and print none of them.
    watched, watch_errors = tmp_path / "watch.out", tmp_path / "watch.err"
    with watched.open("w") as out_file, watch_errors.open("w") as err_file:
        watcher = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sapsam.cli",
                "tournament",
                "watch",
                tournament,
                *watch_options,
                "--refresh-seconds",
                "1",
            ],
            stdout=out_file,
            stderr=err_file,
            text=True,
        )
    try:
        first_picture(watcher, watched)
        players = [f"{bot.player}={bot.token}" for bot in bots]
        played = sapsam(
            "tournament",
            "bot",
            tournament,
            "--server",
            target,
            *(option for player in players for option in ("--player", player)),
        )
        assert played.returncode == 0, played.stderr
        assert f"{names[0]}: round 1, tables/" in played.stdout
        assert f"{names[0]}: round 2, tables/" in played.stdout
        assert "the tournament is over: 4 bots played at 4 tables (8 seats)" in played.stdout
        assert watcher.wait(timeout=120) == 0, watch_errors.read_text()
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
    out = watched.read_text()
    assert "deal 1 credited (" in out and "round 1 is complete" in out
    assert "round 2 seated (random draw): 2 tables" in out
    assert "the tournament is complete: the standings are final" in out
    # Standings: a table by display name, CSV, JSON.
    table = sapsam("tournament", "standings", tournament, "--database-url", url).stdout
    assert "Club night: standings (final; equal totals share a place)" in table
    assert all(name in table for name in names)
    as_csv = sapsam("tournament", "standings", tournament, "--format", "csv", "--database-url", url)
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert len(rows) == 4 and {row["display_name"] for row in rows} == set(names)
    assert sum(int(row["total"]) for row in rows) == 0
    as_json = sapsam(
        "tournament", "standings", tournament, "--format", "json", "--database-url", url
    )
    document = json.loads(as_json.stdout)
    assert document["final"] is True and document["status"] == "COMPLETE"
    assert [line["deals_played"] for line in document["lines"]] == [2, 2, 2, 2]
    board = sapsam("tournament", "leaderboard", "--format", "json", "--database-url", url)
    entries = json.loads(board.stdout)["lines"]
    assert {entry["display_name"] for entry in entries} >= set(names)
    text_board = sapsam("tournament", "leaderboard", "--database-url", url).stdout
    assert text_board.startswith("leaderboard (all tournaments; ") and names[2] in text_board
    after = sapsam("tournament", "watch", tournament, *watch_options)  # over: it ends at once
    assert after.returncode == 0 and "COMPLETE" in after.stdout
    late = sapsam("tournament", "cancel", tournament, "--reason", "x", "--database-url", url)
    assert late.returncode == 2 and "TOURNAMENT_COMPLETE" in late.stderr


async def test_forfeit_and_reseat_by_display_name(
    server: RunningServer, services: Services
) -> None:
    url = services.database_url
    target = f"127.0.0.1:{server.port}"
    bots = tournament_bots.register_bots(target, 5)
    names = [bot.display_name for bot in bots]
    tournament = created(url, "--seat-count", "2", "--rounds", "2", "--deals", "2")
    assert (
        sapsam("tournament", "register", tournament, *names[:4], "--database-url", url).returncode
        == 0
    )
    assert sapsam("tournament", "start", tournament, "--database-url", url).returncode == 0
    tournament_id = uuid.UUID(tournament.removeprefix("tournaments/"))
    state = await services.tournaments.load(tournament_id)
    table = state.round_tables(1)[0]
    await play_deal(services.tables, table.table_id, 1)
    leaver = next(bot for bot in bots if bot.player == f"players/{table.players[1]}")
    left = sapsam(
        "tournament",
        "forfeit",
        tournament,
        leaver.display_name,
        "--reason",
        "train",
        "--database-url",
        url,
    )
    assert left.returncode == 0, left.stderr
    assert f"{leaver.display_name} has left Club night in round 1: train" in left.stdout
    assert f"their seat is tables/{table.table_id} seat 1" in left.stdout
    # The newcomer, by display name, takes the seat from deal 2.
    taken = sapsam(
        "tournament",
        "reseat",
        tournament,
        f"tables/{table.table_id}",
        "1",
        names[4],
        "--database-url",
        url,
    )
    assert taken.returncode == 0, taken.stderr
    assert f"{names[4]} holds seat 1 of tables/{table.table_id} from deal 2 on" in taken.stdout
    again = sapsam(
        "tournament",
        "reseat",
        tournament,
        f"tables/{table.table_id}",
        "0",
        names[4],
        "--database-url",
        url,
    )
    assert again.returncode == 2 and "PLAYER_SEATED" in again.stderr
    shown = sapsam("tournament", "show", tournament, "--database-url", url).stdout
    assert f"{leaver.display_name} forfeited in round 1" in shown and names[4] in shown
    table_text = sapsam("tournament", "standings", tournament, "--database-url", url).stdout
    assert f"{leaver.display_name} (forfeited)" in table_text
    document = json.loads(
        sapsam(
            "tournament", "standings", tournament, "--format", "json", "--database-url", url
        ).stdout
    )
    flagged = {line["display_name"]: line["forfeited"] for line in document["lines"]}
    assert flagged[leaver.display_name] is True and flagged[names[4]] is False


async def test_the_standings_say_how_many_rounds_in_words(services: Services) -> None:
    # "after 0 of 1 rounds" was printed for a one-round tournament.
    url = services.database_url
    for rounds, words in (("1", "after 0 of 1 round;"), ("2", "after 0 of 2 rounds;")):
        tournament = created(url, "--seat-count", "2", "--rounds", rounds, "--deals", "1")
        shown = sapsam("tournament", "standings", tournament, "--database-url", url)
        assert shown.returncode == 0, shown.stderr
        assert f"Club night: standings (so far, {words} equal totals" in shown.stdout

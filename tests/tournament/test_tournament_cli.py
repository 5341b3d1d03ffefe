"""``sapsam tournament …`` and ``sapsam audit verify --tournament``, run as the operator would."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from sapsam.api.server import RunningServer
from sapsam.cli import tournament_bots


def sapsam(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sapsam.cli", *arguments],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_demo_plays_and_verifies_a_tournament_and_the_audit_agrees(database_url: str) -> None:
    demo = sapsam("tournament", "demo", "--database-url", database_url)
    assert demo.returncode == 0, demo.stderr
    # It says where it plays: the given database (it said "fresh database"), never its URL.
    assert "(the PostgreSQL given by --database-url; what is played stays in it)" in demo.stdout
    assert database_url not in demo.stdout
    assert "verification: PASSED (seating of both rounds, 12 deals, standings)" in demo.stdout
    assert demo.stdout.count("  table ") == 6
    standings = re.findall(r"^ +(\d+)([= ]) .* ([+-]\d+)  \(", demo.stdout, re.MULTILINE)
    assert len(standings) == 12
    tournament = re.search(r"^(tournaments/\S+):", demo.stdout, re.MULTILINE)
    assert tournament is not None
    audit = sapsam(
        "audit", "verify", "--tournament", tournament.group(1), "--database-url", database_url
    )
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "✓ seating[1]" in audit.stdout and "✓ standings" in audit.stdout
    # The whole-database audit holds too: tournament streams' chains, tables, read models.
    everything = sapsam("audit", "verify", "--all", "--database-url", database_url)
    assert everything.returncode == 0, everything.stdout + everything.stderr


@pytest.mark.parametrize("preset", ["ofc_turbo", "pineapple"])
def test_the_demo_plays_an_open_face_tournament(database_url: str, preset: str) -> None:
    # Pineapple's tables (issue #19): each bot commits and opens its discards.
    demo = sapsam("tournament", "demo", "--preset", preset, "--database-url", database_url)
    assert demo.returncode == 0, demo.stderr
    assert f"2 tables of 2, 2 rounds of one {preset} set a table" in demo.stdout
    assert "✓ set[1." in demo.stdout and "✓ set[2." in demo.stdout
    verdict = re.search(
        r"^verification: PASSED \(seating of both rounds, (\d+) deals", demo.stdout, re.M
    )
    assert verdict is not None and int(verdict.group(1)) >= 8, demo.stdout  # 2 a table a round
    assert demo.stdout.count("  table ") == 4
    refused = sapsam("tournament", "demo", "--preset", "ofc_turbo", "--deals", "3")
    assert refused.returncode == 2 and "one set a table" in refused.stderr


def test_operator_commands(server: RunningServer, database_url: str) -> None:
    url = database_url
    created = sapsam(
        "tournament",
        "create",
        "--name",
        "Club night",
        "--seat-count",
        "2",
        "--rounds",
        "1",
        "--deals",
        "1",
        "--database-url",
        url,
    )
    assert created.returncode == 0, created.stderr
    tournament = created.stdout.strip()
    assert tournament.startswith("tournaments/")
    bots = tournament_bots.register_bots(f"127.0.0.1:{server.port}", 3)
    players = [bot.player.removeprefix("players/") for bot in bots]
    assert sapsam("tournament", "start", tournament, "--database-url", url).returncode == 2
    registered = sapsam("tournament", "register", tournament, *players, "--database-url", url)
    assert registered.returncode == 0 and registered.stdout.count("entered") == 3
    withdrawn = sapsam("tournament", "unregister", tournament, players[2], "--database-url", url)
    assert withdrawn.returncode == 0
    assert withdrawn.stdout == f"withdrew {bots[2].display_name} (players/{players[2]})\n"
    started = sapsam("tournament", "start", tournament, "--database-url", url)
    assert started.returncode == 0 and "round 1:" in started.stdout
    again = sapsam("tournament", "start", tournament, "--database-url", url)
    assert again.returncode == 2 and "ALREADY_STARTED" in again.stderr
    shown = sapsam("tournament", "show", tournament, "--database-url", url)
    assert "RUNNING" in shown.stdout and "2 players" in shown.stdout
    standings = sapsam("tournament", "standings", tournament, "--database-url", url)
    assert standings.stdout.count(" 1= ") == 2  # nothing played yet: both share first place
    listed = sapsam("tournament", "list", "--database-url", url)
    assert tournament in listed.stdout
    verified = sapsam("tournament", "verify", tournament, "--database-url", url)
    assert verified.returncode == 0, verified.stdout

"""`sapsam-play` in a pseudo-terminal of 80×24, against three SDK bots on a real server.

The client runs as a child process on its own pty (``pty_child``: started without forking this
process, which runs the server's gRPC threads).

Deal 1: the person types rows that foul, is warned, declines, and accepts the suggestion. Deal 2:
the person confirms a foul after the warning. The reveal of each deal shows every seat's rows,
the row-by-row results and the standings; the final table follows the last deal. Until a deal's
reveal no card but the person's own appears on the screen. A second run reuses the saved token.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from pty_child import PtyChild, pty_child

from sapsam.rules.arrangement import Arrangement, FoulReason, check_arrangement
from sapsam.rules.cards import parse_cards
from sapsam_client import Seat, connect, solver_arranger

CARD = re.compile(r"\b[2-9TJQKA][cdhs]\b")
HAND = re.compile(r"your cards \(seat 0, dealer seat \d\)\r\n  ((?:[2-9TJQKA][cdhs] ?){13})")


def foul_rows(hand: list[str]) -> tuple[str, str]:
    """Front and middle rows (typed as a person would) that put the hand out of order."""
    generator = random.Random(7)
    cards = list(hand)
    while True:
        generator.shuffle(cards)
        arrangement = Arrangement.parse(
            " ".join(cards[:3]), " ".join(cards[3:8]), " ".join(cards[8:])
        )
        if check_arrangement(arrangement, parse_cards(hand)).reason == FoulReason.ROWS_OUT_OF_ORDER:
            return " ".join(cards[:3]).lower(), ", ".join(cards[3:8])


def start_bots(address: str, table: str) -> tuple[list[threading.Thread], list[BaseException]]:
    failures: list[BaseException] = []

    def bot(index: int) -> None:
        client = connect(address)
        client.register(f"bot {index}")
        seat: Seat = client.join_table(table, index)
        try:
            seat.play_series(solver_arranger)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=bot, args=(i,), daemon=True) for i in (1, 2, 3)]
    return threads, failures


def play_command(address: str, table: str, token_file: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sapsam_client.terminal",
        *("--server", address, "--table", table, "--seat", "0"),
        *("--name", "Human", "--token-file", str(token_file)),
    ]


# A bare environment (no HOME, no config folder: the token file is named), plus the PYTHONPATH
# the tests run with, so the client is the code under test.
PLAY_ENV = {"PYTHONUNBUFFERED": "1", "PATH": "/usr/bin:/bin", "TERM": "dumb"} | (
    {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
)


@pytest.fixture
def on_pty() -> Iterator[Callable[[list[str], dict[str, str]], PtyChild]]:
    """Starts a command on a pty of 24x80 (``pty_child``: not forked from this gRPC process);
    whatever still runs at the end is killed."""
    with contextlib.ExitStack() as running:
        yield lambda command, env: running.enter_context(pty_child(command, env))


def test_a_person_plays_a_series_against_three_bots(
    address: str, tmp_path: Path, on_pty: Callable[[list[str], dict[str, str]], PtyChild]
) -> None:
    host = connect(address)
    host.register("host")
    table = host.create_table(4, series_length=2).name
    token_file = tmp_path / "config" / "tokens.json"
    transcript = io.StringIO()
    first = on_pty(play_command(address, table, token_file), PLAY_ENV)
    child = first.terminal
    child.logfile_read = transcript
    child.expect("you sit at seat 0")
    threads, failures = start_bots(address, table)
    for thread in threads:
        thread.start()

    # Deal 1: a foul is announced before confirming; declined; the suggestion accepted.
    child.expect(HAND)
    hand = child.match.group(1).split()
    child.expect("Suggested rows:")
    child.expect(r"front ([^\r\n]+)\r\n  middle ([^\r\n]+)\r\n  back ([^\r\n]+)\r\n")
    assert all(value.strip() for value in child.match.groups())  # each row shows its value
    child.expect(r"front \(Enter = suggestion\)> ")
    front, middle = foul_rows(hand)
    child.sendline(front)
    child.expect("middle> ")
    child.sendline(middle)
    child.expect(r"WARNING: these rows are a FOUL:\r\n  (front|middle) .*?beats")
    child.expect(r"Confirm the foul anyway\? \[y/N\] ")
    child.sendline("n")
    child.expect(r"front \(Enter = suggestion\)> ")
    child.sendline("")
    child.expect(r"Confirm these rows\? \[Y/n\] ")
    child.sendline("")
    child.expect("== deal 1: the reveal ==")
    before_reveal = transcript.getvalue().split("== deal 1: the reveal ==")[0]
    assert set(CARD.findall(before_reveal)) <= set(hand), "another seat's card before the reveal"
    child.expect(r"standings: [^\r\n]+\r\n")

    # Deal 2: the person confirms a foul; the reveal shows it.
    child.expect(HAND)
    hand_2 = child.match.group(1).split()
    child.expect(r"front \(Enter = suggestion\)> ")
    front, middle = foul_rows(hand_2)
    child.sendline(front)
    child.expect("middle> ")
    child.sendline(middle)
    child.expect("WARNING: these rows are a FOUL")
    child.expect(r"Confirm the foul anyway\? \[y/N\] ")
    child.sendline("y")
    child.expect("== deal 2: the reveal ==")
    between = transcript.getvalue().split("== deal 1: the reveal ==")[1]
    deal_2_before = between.split("== deal 2: the reveal ==")[0].split("your cards")[1]
    assert set(CARD.findall(deal_2_before)) <= set(hand_2)
    child.expect(r"\*0 Human +[^\r\n]+ FOUL\r\n")
    child.expect(r"rows \(front middle back, W/L/= for the first seat\):\r\n")
    child.expect(r"  0v1 [WL=]{3} [+-]\d+   0v2 [WL=]{3} [+-]\d+   0v3 [WL=]{3} [+-]\d+\r\n")
    child.expect("== final standings after 2 deals ==")
    child.expect(r"((?:  \d[= ] seat \d [^\r\n]+\r\n){4})")
    final = child.match.group(1)
    assert "(you)" in final
    child.expect("the series is over")
    child.expect(pexpect.EOF)
    assert first.exit_code() == 0
    for thread in threads:
        thread.join(30)
    assert failures == []

    screen = transcript.getvalue().splitlines()
    # 80 columns (only the saved token's file path, shown on a line of its own, may be longer).
    assert [line for line in screen if len(line) > 80 and str(tmp_path) not in line] == []
    # Every seat's revealed rows are in the reveals, with the rows of all four seats.
    reveal = transcript.getvalue().split("== deal 2: the reveal ==")[1]
    assert len(re.findall(r"^[* ][0-3] \S", reveal, re.MULTILINE)) >= 4
    for seat in (1, 2, 3):
        assert re.search(rf"^ {seat} bot {seat} +(?:[2-9TJQKA][cdhs][ |]+){{13}}", reveal, re.M)

    # The token was saved, owner-only, and a second run reuses it (no new registration).
    saved = json.loads(token_file.read_text())
    assert saved[address]["display_name"] == "Human"
    assert token_file.stat().st_mode & 0o077 == 0
    again = on_pty(play_command(address, table, token_file), PLAY_ENV).terminal
    again.expect("playing as Human")
    again.expect("you sit at seat 0")
    again.expect("== final standings after 2 deals ==")
    again.expect(pexpect.EOF)
    assert "registered as" not in (again.before or "")
    assert json.loads(token_file.read_text()) == saved

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
from sapsam_client import Hand, Rows, Seat, connect, solver_arranger
from sapsam_client.arranging import HINT_TITLE
from sapsam_client.row_entry import HELP
from sapsam_proto.v1 import rule_set_pb2
from sapsam_proto.v1.table_pb2 import Table

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


def start_bots(
    address: str,
    table: str,
    seats: tuple[int, ...] = (1, 2, 3),
    held: threading.Event | None = None,
) -> tuple[list[threading.Thread], list[BaseException]]:
    """Solver bots at ``seats``; the last one, given ``held``, arranges its first hand only once
    ``held`` is set (a slow player the others wait for)."""
    failures: list[BaseException] = []

    def bot(index: int) -> None:
        client = connect(address)
        client.register(f"bot {index}")
        seat: Seat = client.join_table(table, index)

        def arrange(hand: Hand, current: Table) -> Rows:
            if held is not None and index == seats[-1]:
                held.wait(60)
            return solver_arranger(hand, current)

        try:
            seat.play_series(arrange)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=bot, args=(i,), daemon=True) for i in seats]
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


def without_help(text: str) -> str:
    """The screen without the help's example cards."""
    for line in HELP:
        text = text.replace(line, "")
    return text


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
    child.expect(r"waiting for 3 more players to sit down \(no time limit\)\r\n")
    slow_bot = threading.Event()
    threads, failures = start_bots(address, table, held=slow_bot)
    for thread in threads:
        thread.start()

    # Deal 1: rows typed one at a time, each card checked; a foul is announced before
    # confirming; the confirmation takes only yes or no; declined, undone, the suggestion taken.
    child.expect(HAND)
    hand = child.match.group(1).split()
    child.expect(r"front \(3 cards, Enter = suggestion\)> ")
    # The solver's suggestion only when asked for (hint), and ? lists hint.
    assert "hint shows the solver's suggestion" in child.before
    assert HINT_TITLE not in child.before and "Suggested" not in child.before
    child.sendline("hint")
    child.expect(re.escape(HINT_TITLE))
    child.expect(r"front ([^\r\n]+)\r\n  middle ([^\r\n]+)\r\n  back ([^\r\n]+)\r\n")
    assert all(value.strip() for value in child.match.groups())  # each row shows its name
    child.expect(r"front \(3 cards, Enter = suggestion\)> ")
    stranger = next(card for card in ("2c", "2d", "2h", "2s", "3c") if card not in hand)
    child.sendline(f"{hand[0]} {hand[1]} {stranger}")
    child.expect(f"  {stranger} is not in your hand\r\n")
    child.expect(r"front \(3 cards, Enter = suggestion\)> ")
    child.sendline("?")
    child.expect(r"swap C1 C2  swap two cards")
    child.expect(r"hint  show the solver's suggestion")
    front, middle = foul_rows(hand)
    child.sendline(front)
    child.expect(r"  front  [^\r\n]+\r\n  cards left: ((?:[2-9TJQKA][cdhs] ?){10})\r\n")
    left = child.match.group(1).split()
    assert set(left) == set(hand) - {card.capitalize() for card in front.split()}
    child.expect(r"middle \(5 cards\)> ")
    child.sendline(f"{front.split()[0]} " + " ".join(middle.split(", ")[1:]))
    child.expect(f"  {front.split()[0].capitalize()} is already in the front row\r\n")
    child.expect(r"middle \(5 cards\)> ")
    child.sendline(middle)
    child.expect("Your rows:")
    child.expect(r"WARNING: these rows are a FOUL:\r\n  (front|middle) .*?beats")
    child.expect(r"Confirm the foul anyway\? \[y/n\] ")
    child.sendline("maybe")
    child.expect(r"please answer y \(yes\) or n \(no\)\r\n")
    child.expect(r"Confirm the foul anyway\? \[y/n\] ")
    child.sendline("n")
    child.expect(r"Change the rows")
    child.expect(r"change> ")
    child.sendline("u")
    child.expect(r"cards left: ")
    child.expect(r"middle \(5 cards\)> ")
    child.sendline("s")
    child.expect("Your rows:")
    child.expect(r"Confirm these rows\? \[y/n\] ")
    child.sendline("y")
    # The table waits for the slow bot, and says so, counting down the preset's arranging
    # deadline (every preset has one: docs/rules.md §2.2).
    child.expect(r"waiting for bot 3 \(seat 3\) to arrange: [^\r\n]* left\r\n")
    slow_bot.set()
    child.expect(r"every seat confirmed: revealing")
    child.expect("== deal 1 of 2: the reveal ==")
    before_reveal = without_help(transcript.getvalue().split("== deal 1 of 2: the reveal ==")[0])
    typed_stranger = {stranger}  # typed by the person, refused
    assert set(CARD.findall(before_reveal)) <= set(hand) | typed_stranger, (
        "a card before the reveal"
    )
    child.expect(r"you v bot 1 \(seat 1\): won \d, lost \d, tied \d: [+-]\d+ points?\r\n")
    child.expect(r"  front: [^\r\n]*(beat|tie)")
    child.expect(r"standings after deal 1: [^\r\n]+\r\n")

    # Deal 2: the person confirms a foul; the reveal shows it. The results of deal 1 came first.
    child.expect(HAND)
    hand_2 = child.match.group(1).split()
    screen_so_far = transcript.getvalue()
    assert screen_so_far.index("standings after deal 1") < screen_so_far.index("Deal 2: your")
    child.expect(r"front \(3 cards, Enter = suggestion\)> ")
    front, middle = foul_rows(hand_2)
    child.sendline(front)
    child.expect(r"middle \(5 cards\)> ")
    child.sendline(middle)
    child.expect("WARNING: these rows are a FOUL")
    child.expect(r"Confirm the foul anyway\? \[y/n\] ")
    child.sendline("yes")
    child.expect("== deal 2 of 2: the reveal ==")
    between = transcript.getvalue().split("== deal 1 of 2: the reveal ==")[1]
    deal_2_before = between.split("== deal 2 of 2: the reveal ==")[0].split("your cards")[1]
    assert set(CARD.findall(without_help(deal_2_before))) <= set(hand_2)
    child.expect(r"\*seat 0 you: [+-]\d+ points?, total [+-]\d+, FOUL[^\r\n]*\r\n")
    for bot in (1, 2, 3):
        child.expect(rf"you v bot {bot} \(seat {bot}\): won 0, lost 3, tied 0: -\d+ points?\r\n")
        child.expect(rf"  front: you fouled, bot {bot}'s [^\r\n]+ wins\r\n")
    child.expect(r"standings after deal 2: [^\r\n]+\r\n")
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
    # Every seat's revealed rows are in the reveals, each row named.
    reveal = transcript.getvalue().split("== deal 2 of 2: the reveal ==")[1]
    for bot in (1, 2, 3):
        assert re.search(
            rf"^ seat {bot} bot {bot}: [^\r\n]+\r\n    (?:[2-9TJQKA][cdhs][ |]*){{13}}\r\n"
            r"    [a-z][^\r\n]*; [^\r\n]+; ",
            reveal,
            re.M,
        )

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


def test_suit_symbols_colour_and_a_live_status_on_a_capable_terminal(
    address: str, tmp_path: Path, on_pty: Callable[[list[str], dict[str, str]], PtyChild]
) -> None:
    host = connect(address)
    host.register("host")
    # An arranging deadline, counted down in the status.
    rules = rule_set_pb2.RuleSet(arrange_seconds=45)
    table = host.create_table(2, rule_set=rules, series_length=1).name
    capable = PLAY_ENV | {"TERM": "xterm-256color", "LC_ALL": "C.UTF-8"}
    player = on_pty(play_command(address, table, tmp_path / "tokens.json"), capable)
    child = player.terminal
    child.expect("you sit at seat 0")
    # Drawn in place: a carriage return, the status, "erase to the end of the line".
    child.expect("\rwaiting for 1 more player to sit down \\(no time limit\\)\x1b\\[K")
    slow_bot = threading.Event()
    threads, failures = start_bots(address, table, seats=(1,), held=slow_bot)
    threads[0].start()
    child.expect(r"your cards \(seat 0, dealer seat \d\)\r\n  ([^\r\n]+)\r\n")
    hand_line = child.match.group(1)
    assert re.search("[♠♣]", hand_line) and "\x1b[31m" in hand_line and "\x1b[0m" in hand_line
    assert not CARD.search(hand_line)  # no suit letters
    child.expect(r"front \(3 cards, Enter = suggestion\)> ")
    child.sendline("")
    child.expect(r"Confirm these rows\? \[y/n\] ")
    child.sendline("y")
    # The deadline counted down, redrawn every second.
    countdown = "\rwaiting for bot 1 \\(seat 1\\) to arrange: (\\d+) s left\x1b\\[K"
    child.expect(countdown)
    first_left = int(child.match.group(1))
    child.expect(countdown)
    child.expect(countdown)
    assert 0 < int(child.match.group(1)) < first_left <= 45
    slow_bot.set()
    child.expect("== deal 1 of 1: the reveal ==")
    child.expect(r"\*seat 0 you: [^\r\n]+\r\n    ([^\r\n]+)\r\n")
    assert re.search("[♠♣]", child.match.group(1))  # the reveal in symbols too
    child.expect("== final standings after 1 deal ==")
    child.expect(pexpect.EOF)
    assert player.exit_code() == 0
    threads[0].join(30)
    assert failures == []

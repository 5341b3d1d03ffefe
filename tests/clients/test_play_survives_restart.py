"""`sapsam-play` on a pty keeps playing across server restarts: against two bot processes, a real
`sapsam serve` on a fixed port is SIGKILLed and started again on the same port and database
while the person is choosing rows, and again right after a confirmation; the 3-deal series
finishes. And a person who stops with Ctrl-C is told the exact command that takes the seat up
again; without --table, the table is offered among the person's unfinished tables."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bot_process import BotProcess, bot_env
from pty_child import pty_child
from served_process import OPERATOR_TOKEN, ServedProcess

from sapsam_client import connect
from sapsam_proto.v1 import table_pb2

ROWS_PROMPT = r"Enter = suggestion\)> "
CONFIRM_PROMPT = r"Confirm these rows\? \[y/n\] "
PLAY = [sys.executable, "-m", "sapsam_client.terminal"]
PLAY_ENV = {"PYTHONUNBUFFERED": "1", "PATH": "/usr/bin:/bin", "TERM": "dumb"} | (
    {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
)


@pytest.fixture
def served(database_url: str) -> Iterator[ServedProcess]:
    server = ServedProcess(database_url)
    try:
        server.wait_until_serving()
        yield server
    finally:
        server.close()


def test_a_person_finishes_a_series_across_server_restarts(
    served: ServedProcess, tmp_path: Path
) -> None:
    bots = BotProcess(
        [
            *("--server", served.address, "--create", "--seat-count", "3", "--seats-here", "2"),
            *("--deals", "3", "--strategy", "random", "--seed", "3"),
        ],
        bot_env(tmp_path),
    )
    transcript = io.StringIO()
    try:
        table = bots.wait_for(r"^table: (tables/\S+)").group(1)
        command = [*PLAY, "--server", served.address, "--table", table, "--name", "Human"]
        command += ["--token-file", str(tmp_path / "human" / "tokens.json"), "--plain"]
        with pty_child(command, PLAY_ENV, timeout=120) as child:
            screen = child.terminal
            screen.logfile_read = transcript
            screen.expect("you sit at seat 2")

            # Deal 1: the server dies while the person chooses; the rows go to the new one.
            screen.expect(ROWS_PROMPT)
            served.restart()
            screen.sendline("")
            screen.expect(CONFIRM_PROMPT)
            screen.sendline("y")

            # Deal 2: the server dies right after the confirmation; the reveal comes after.
            screen.expect(ROWS_PROMPT)
            screen.sendline("")
            screen.expect(CONFIRM_PROMPT)
            screen.sendline("y")
            served.restart(down_seconds=2)

            screen.expect(ROWS_PROMPT)  # deal 3
            screen.sendline("")
            screen.expect(CONFIRM_PROMPT)
            screen.sendline("y")
            screen.expect("the series is over")
            try:
                assert child.exit_code(timeout=90) == 0, transcript.getvalue()
            except subprocess.TimeoutExpired:
                pytest.fail(f"sapsam-play did not exit:\n{transcript.getvalue()[-3000:]}")
        assert bots.finish() == 0, bots.output()
    finally:
        bots.kill()
    assert served.starts == 3
    screen_text = transcript.getvalue()
    assert "sapsam-play:" not in screen_text  # no error reached the person
    # The person is told when the server stops answering, and when it answers again.
    lost = screen_text.index("the server does not answer (")
    assert "trying again for up to 10 min 00 s" in screen_text
    assert screen_text.index("connected to the server again", lost) > lost
    final = connect(served.address, token=OPERATOR_TOKEN).get_table(table)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert [seat.display_name for seat in final.seats] == ["bot", "bot 2", "Human"]


def test_ctrl_c_says_how_to_resume_and_the_table_is_offered_again(
    address: str, tmp_path: Path
) -> None:
    host = connect(address)
    host.register("host")
    table = host.create_table(2, series_length=1).name
    host.create_table(2, series_length=1)  # an open table of somebody else's
    tokens = str(tmp_path / "my tokens" / "tokens.json")
    first = [*PLAY, "--server", address, "--table", table, "--name", "Ann", "--token-file", tokens]
    with contextlib.ExitStack() as running:
        playing = running.enter_context(pty_child(first, PLAY_ENV))
        child = playing.terminal
        child.expect("you sit at seat 0")
        child.expect("waiting for")
        playing.process.send_signal(signal.SIGINT)  # Ctrl-C (the pty is not its terminal's)
        child.expect(r"to resume: (sapsam-play [^\r\n]+)\r\n")
        resume = shlex.split(child.match.group(1))
        assert resume[resume.index("--table") + 1] == table
        assert resume[resume.index("--token-file") + 1] == tokens

        # The exact command takes the seat up again.
        assert playing.exit_code() == 130
        resumed = running.enter_context(pty_child([*PLAY, *resume[1:]], PLAY_ENV))
        resumed.terminal.expect("you sit at seat 0")
        resumed.terminal.expect("waiting for")
        resumed.process.send_signal(signal.SIGINT)
        resumed.terminal.expect("to resume: ")
        assert resumed.exit_code() == 130

        # Without --table, the unfinished table comes first, then the open ones.
        offered = running.enter_context(
            pty_child([*PLAY, "--server", address, "--token-file", tokens], PLAY_ENV)
        ).terminal
        offered.expect("your unfinished tables:\r\n")
        offered.expect(rf"  1\) {table}  your seat 0, waiting for players, 1/2 seated\r\n")
        offered.expect(r"open tables:\r\n  2\) tables/")
        offered.expect(r"Join which table \(number\), or Enter for a new one\? ")
        offered.sendline("1")
        offered.expect("you sit at seat 0")
    assert len(list(host.list_tables())) == 2  # nothing created on the way

"""Bots keep playing across a server restart: a real `sapsam serve` on a fixed port is SIGKILLed
and started again on the same port and database under a series, and the series finishes. A bot
killed too and run again with the same command takes up the same seat from its state file."""

from __future__ import annotations

import shlex
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bot_process import BotProcess, bot_env
from served_process import OPERATOR_TOKEN, ServedProcess

from sapsam_client import connect


@pytest.fixture
def served(database_url: str) -> Iterator[ServedProcess]:
    server = ServedProcess(database_url)
    try:
        server.wait_until_serving()
        yield server
    finally:
        server.close()


def test_bots_finish_a_series_across_server_restarts(served: ServedProcess, tmp_path: Path) -> None:
    env = bot_env(tmp_path)
    host = BotProcess(
        [
            *("--server", served.address, "--create", "--seat-count", "3", "--seats-here", "2"),
            *("--deals", "3", "--strategy", "random", "--seed", "5"),
        ],
        env,
    )
    bots = [host]
    try:
        table = host.wait_for(r"^table: (tables/\S+)").group(1)
        guest_command = ["--server", served.address, "--table", table, "--name", "guest"]
        guest = BotProcess(guest_command, env)
        bots.append(guest)
        guest.wait_for(r"deal 1 ")

        # The server dies under the series; so does one bot. Both come back.
        served.kill()
        guest.kill()
        served.restart()
        rerun = BotProcess(guest_command, env)
        bots.append(rerun)
        rerun.wait_for(r"deal 2 ")
        served.restart()  # once more, while every bot is connected

        for bot in (host, rerun):
            assert bot.finish() == 0, bot.output()
            assert "standings:" in bot.output()
            assert "TABLE_FULL" not in bot.output()
        assert "deal 3 " in rerun.output()
        seats = connect(served.address, token=OPERATOR_TOKEN).get_table(table).seats
        assert [seat.display_name for seat in seats] == ["bot", "bot 2", "guest"]
        states = list((tmp_path / "state" / "sapsam" / "bots").glob("*.json"))
        assert len(states) == 2  # the host's file and the guest's, reused by its rerun
        assert all(path.stat().st_mode & 0o777 == 0o600 for path in states)
    finally:
        for bot in bots:
            bot.kill()


def test_a_bot_stopped_with_ctrl_c_says_how_to_resume_and_that_resumes_it(
    address: str, tmp_path: Path
) -> None:
    env = bot_env(tmp_path)
    bot = BotProcess(["--server", address, "--create", "--seat-count", "2", "--deals", "1"], env)
    bots = [bot]
    try:
        table = bot.wait_for(r"^table: (tables/\S+)").group(1)
        # Seated (its token kept in its state file before it joins): the table waits for a
        # second player. Waited for: a fixed second could end first on a stalled machine, and a
        # bot stopped before it kept its token comes back as someone else.
        viewer = connect(address)
        viewer.token = viewer.register("viewer").token
        deadline = time.monotonic() + 60
        while not any(seat.display_name == "bot" for seat in viewer.get_table(table).seats):
            assert time.monotonic() < deadline, bot.output()
            time.sleep(0.05)
        bot.process.send_signal(signal.SIGINT)
        assert bot.finish(timeout=30) == 130
        resume = bot.wait_for(r"^to resume: (sapsam-bot .+)$").group(1)
        assert resume == f"sapsam-bot --server {address} --table {table}"
        again = BotProcess(shlex.split(resume)[1:], env)  # takes the same seat up again
        other = BotProcess(["--server", address, "--table", table, "--no-state"], env)
        bots += [again, other]
        for running in (again, other):
            assert running.finish() == 0, running.output()
        assert "seats/0: deal 1" in again.output() and "seats/1: deal 1" in other.output()
    finally:
        for running in bots:
            running.kill()


def test_a_bot_refused_a_seat_says_no_resume_command(address: str, tmp_path: Path) -> None:
    host = connect(address)
    host.token = host.register("host").token
    table = host.create_table(2, preset="pagat", series_length=1).name
    for name in ("ann", "bob"):
        player = connect(address)
        player.token = player.register(name).token
        player.join_table(table)
    bot = BotProcess(["--server", address, "--table", table, "--no-state"], bot_env(tmp_path))
    try:
        assert bot.finish(timeout=60) == 1
        assert "TABLE_FULL" in bot.output()
        assert "to resume" not in bot.output()  # the same command could only be refused again
    finally:
        bot.kill()


def test_a_damaged_pinned_key_file_is_a_clear_refusal(address: str, tmp_path: Path) -> None:
    receipts = tmp_path / "receipts"
    receipts.mkdir()
    (receipts / ".server-keys").write_text("not a key\n", encoding="utf-8")
    bot = BotProcess(
        ["--server", address, "--create", "--no-state", "--receipts", str(receipts)],
        bot_env(tmp_path),
    )
    try:
        assert bot.finish(timeout=60) == 2
        assert ".server-keys" in bot.output() and "Traceback" not in bot.output()
    finally:
        bot.kill()

"""`sapsam-bot --seats-here N`: a seat that fails ends the bot at once, with the error, rather than
leaving it waiting for ever on the seats that still play (their table waits for the failed one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sapsam_client import connect

BOT = [sys.executable, "-m", "sapsam_client.bot"]


def test_one_seat_failing_stops_the_bot_with_its_error(address: str, tmp_path: Path) -> None:
    host = connect(address)
    host.register("host")
    table = host.create_table(4, series_length=2).name
    # Seat 3 joins; the second seat here would be seat 4, which a 4-seat table does not have.
    # Seats 0 to 2 stay free, so seat 3's series can never start: without the fix the bot waits
    # for seat 3's thread for ever and never says what went wrong.
    completed = subprocess.run(
        [*BOT, "--server", address, "--table", table, "--seat", "3", "--seats-here", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "SAPSAM_TOKEN_FILE": str(tmp_path / "tokens.json")},
    )
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "sapsam-bot: " in completed.stderr
    assert f"to resume: sapsam-bot --server {address} --table {table}" in completed.stderr

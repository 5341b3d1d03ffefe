"""A pytest session removes only the embedded test servers whose owning session is gone: never
the folder of a live session, not even while that session stops its server (pgserver empties
its list of users first, and a second run on the machine took the folder for abandoned and
deleted it under the first, whose own delete then raised FileNotFoundError)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from server_folders import (
    OWNER_FILE,
    TEST_SERVER_PREFIX,
    UNCLAIMED_SECONDS,
    claim_test_server_folder,
    remove_abandoned_test_servers,
)


def _server_folder(where: Path, name: str, users: list[int]) -> Path:
    folder = where / f"{TEST_SERVER_PREFIX}{name}"
    (folder / "postgres").mkdir(parents=True)
    (folder / "postgres" / ".handle_pids.json").write_text(str(users))
    return folder


def _gone_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_only_folders_whose_owner_is_gone_are_removed(tmp_path: Path) -> None:
    gone = _gone_pid()
    # A live session stopping its server: pgserver's list of users already empty.
    stopping = _server_folder(tmp_path, "stopping", [])
    claim_test_server_folder(stopping)
    # A live session's server in use.
    running = _server_folder(tmp_path, "running", [os.getpid()])
    claim_test_server_folder(running)
    # A killed session's.
    killed = _server_folder(tmp_path, "killed", [gone])
    (killed / OWNER_FILE).write_text(f"{gone} 12345")
    # Its pid since reused by another process (this one): another start time.
    reused = _server_folder(tmp_path, "reused", [])
    (reused / OWNER_FILE).write_text(f"{os.getpid()} 1")
    # Made a moment ago by a session not yet claiming it.
    _server_folder(tmp_path, "unclaimed", [])
    # Left long ago by a session from before owner files.
    old = _server_folder(tmp_path, "old", [gone])
    long_ago = time.time() - UNCLAIMED_SECONDS - 60
    os.utime(old, (long_ago, long_ago))

    remove_abandoned_test_servers(tmp_path)

    left = {folder.name.removeprefix(TEST_SERVER_PREFIX) for folder in tmp_path.iterdir()}
    assert left == {"stopping", "running", "unclaimed"}

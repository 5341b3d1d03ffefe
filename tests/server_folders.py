"""The embedded PostgreSQL test servers' folders (``/tmp/sapsam-test-pg-*``): each pytest session
makes one and claims it (:func:`claim_test_server_folder`), and removes those whose session died
without cleaning up (:func:`remove_abandoned_test_servers`) before it starts its own. Two runs
on one machine (two worktrees, or CI beside a developer) must never remove each other's."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

TEST_SERVER_PREFIX = "sapsam-test-pg-"
OWNER_FILE = "owner"
"""In a test server's folder: the pid and start time of the pytest process that owns it."""


def process_start_time(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), or None where that
    cannot be read (no /proc, or no such process). With the pid, it names one process: a pid
    alone may be reused by an unrelated process once its owner is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count from the last ")".
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[19]  # field 22, starttime


def claim_test_server_folder(folder: Path) -> None:
    """Mark ``folder`` as this process's, so another session's clean-up leaves it alone."""
    pid = os.getpid()
    (folder / OWNER_FILE).write_text(f"{pid} {process_start_time(pid) or ''}".strip())


def owner_alive(folder: Path) -> bool | None:
    """Whether the process that made ``folder`` still runs; None when the folder names no owner
    (yet: another session may be between creating the folder and claiming it)."""
    try:
        words = (folder / OWNER_FILE).read_text().split()
        pid = int(words[0])
    except (OSError, ValueError, IndexError):
        return None
    if not process_alive(pid):
        return False
    started = words[1] if len(words) > 1 else None
    return started is None or process_start_time(pid) in (None, started)


UNCLAIMED_SECONDS = 3 * 3600


def unclaimed_and_abandoned(folder: Path) -> bool:
    """Whether a folder with no owner file is old, and pgserver's list of the processes using
    its server names none still running."""
    try:
        old = time.time() - folder.stat().st_mtime > UNCLAIMED_SECONDS
        users = json.loads((folder / "postgres" / ".handle_pids.json").read_text())
    except (OSError, ValueError):
        return False
    return old and not any(process_alive(int(pid)) for pid in users)


def remove_abandoned_test_servers(where: Path | None = None) -> None:
    """Stop and delete embedded test servers whose pytest sessions died without cleaning up.

    Only a folder whose owner (:data:`OWNER_FILE`, written by the session that made it) is gone
    is removed. Not pgserver's ``.handle_pids.json``: a session stopping its own server empties
    that list first, then stops the server and deletes the folder, and a session starting then
    took the folder for abandoned and deleted it under the stopping one (whose own delete then
    raised FileNotFoundError). A folder without an owner file is a session's about to claim it,
    or one made before owner files: that is judged by pgserver's list, once the folder is
    :data:`UNCLAIMED_SECONDS` old (no session runs that long, so none is stopping then).
    ``where``: the folder they are in (default: the temporary folder).
    """
    for folder in (where or Path(tempfile.gettempdir())).glob(TEST_SERVER_PREFIX + "*"):
        alive = owner_alive(folder)
        if alive is None:
            alive = not unclaimed_and_abandoned(folder)
        if alive:
            continue
        pgdata = folder / "postgres"
        try:
            server_pid = int((pgdata / "postmaster.pid").read_text().split()[0])
            os.kill(server_pid, signal.SIGINT)  # fast shutdown
            for _ in range(100):
                if not process_alive(server_pid):
                    break
                time.sleep(0.1)
        except (OSError, ValueError, IndexError):
            pass
        shutil.rmtree(folder, ignore_errors=True)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

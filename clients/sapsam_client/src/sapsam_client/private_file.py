"""The small JSON files a user's client processes share: the token file, ``commitments.json``,
``player-keys.json``. Each is readable by its owner only (tokens are passwords, nonces and private
keys are secrets) and replaced whole, never written in place.

Several processes of one user may change one file at a time (two ``sapsam-play`` sessions at two
tables, bots of one machine): a change reads the file, edits it and replaces it under
:func:`locked` (an exclusive ``flock`` on ``<file>.lock`` across processes, a lock of this
process between its threads), and :func:`write_private` writes through a temporary file of the
writer's own, so no process loses another's entry or finds its temporary file moved away.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

_THREADS: Final = threading.Lock()  # the threads of this process take turns


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; empty when there is none (no file, or not a JSON object)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Exclusive use of ``path`` while the block runs: across threads, and across processes
    through ``<path>.lock`` (``flock``; where there is none, one process at a time is the
    caller's to arrange)."""
    with _THREADS:
        try:
            import fcntl
        except ImportError:  # not POSIX
            yield
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # closing releases the lock


def write_private(path: Path, data: object) -> None:
    """Write ``data`` as JSON to ``path``, readable by its owner only, replacing it whole (a
    reader never sees half a file), through a temporary file of this process and thread."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    if hasattr(os, "fchmod"):
        os.fchmod(descriptor, 0o600)  # a temporary file left by a crash keeps its old mode
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
    temporary.replace(path)

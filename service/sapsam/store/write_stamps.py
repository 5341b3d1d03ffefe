"""Write stamps: a machine-wide counter per stream slot, bumped by every append before it returns.

A process that holds a stream's state in memory may answer a read from it only if no write was
acknowledged since its copy was made. The stamps tell it so without a statement: every append made
through the store (``sapsam.store.appends.append``, whichever process and server runs it) bumps
its stream's slot after its commit and before it returns, so before the caller can acknowledge
anything; a copy remembers the slot's value read *before* the log read that made it (or, for the
writer's own copy, the value its own bump produced when no other bump came in between). The copy
is current while the slot still holds that value: any acknowledged write since would have bumped
it. Slots are shared by many streams (a hash of the stream id): a bump for another stream only
makes a copy look stale, which costs a read of the log, never a wrong answer.

The counters live in one small shared file (``/dev/shm`` when it exists), one per operating-system
user, mapped by every process on the machine that uses the store; increments take an exclusive
``flock`` (a read is one aligned 8-byte load). So the guarantee covers every writer on this
machine running as the same user: the workers of a ``sapsam serve``, other servers, the CLI.
Writers elsewhere (another machine, another user, plain SQL) are not seen: memory reads assume
they do not exist. If the file cannot be opened, every stamp is fresh on every read: nothing is
ever current and every read goes to the log, as before.
"""

from __future__ import annotations

import fcntl
import itertools
import mmap
import os
import tempfile
import threading
import weakref
import zlib
from pathlib import Path
from typing import Any, Final

SLOTS: Final = 1 << 16
_SIZE: Final = SLOTS * 8


def default_path() -> Path:
    """The stamps file of this user: in ``/dev/shm`` (memory) if there is one."""
    folder = Path("/dev/shm")
    if not folder.is_dir():
        folder = Path(tempfile.gettempdir())
    return folder / f"sapsam-write-stamps-{os.getuid()}"


def slot_of(stream_id: str) -> int:
    """The slot of a stream: the same in every process (crc32, not Python's salted hash)."""
    return zlib.crc32(stream_id.encode()) & (SLOTS - 1)


class WriteStamps:
    """The shared counters (or, if they could not be mapped, a source of never-current stamps)."""

    def __init__(self, path: Path | None = None) -> None:
        self._fd: int | None = None
        self._thread_lock = threading.Lock()  # flock does not exclude this process's threads
        self._view: memoryview | None = None
        # Never-current stamps, for when the file is out of reach: negative, unique per call.
        self._fresh = itertools.count(-1, -1)
        try:
            fd = os.open(path or default_path(), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return
        try:
            if os.fstat(fd).st_size < _SIZE:
                with _Locked(fd):
                    if os.fstat(fd).st_size < _SIZE:
                        os.ftruncate(fd, _SIZE)  # zero-filled: every slot starts at 0
            mapped = mmap.mmap(fd, _SIZE)
        except OSError:
            os.close(fd)
            return
        self._fd = fd
        self._view = memoryview(mapped).cast("q")

    @property
    def shared(self) -> bool:
        """True when the counters are mapped (stamps can be current)."""
        return self._view is not None

    def current(self, stream_id: str) -> int:
        """The stream's slot now (read it before the log read a copy is made from)."""
        if self._view is None:
            return next(self._fresh)
        return int(self._view[slot_of(stream_id)])

    def bump(self, stream_id: str) -> int:
        """Count a write to the stream (after its commit, before it is acknowledged); the slot's
        new value."""
        if self._view is None or self._fd is None:
            return next(self._fresh)
        slot = slot_of(stream_id)
        with self._thread_lock, _Locked(self._fd):
            value = int(self._view[slot]) + 1
            self._view[slot] = value
        return value

    def after_own_write(self, stream_id: str, before: int) -> int | None:
        """The stamp of a writer's own copy: the slot now if its bump was the only one since
        ``before`` (read before the write), else None (another write may be missing from it)."""
        now = self.current(stream_id)
        return now if now == before + 1 and before >= 0 else None


class _Locked:
    """An exclusive ``flock`` on the stamps file for the increments' read-modify-write."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def __enter__(self) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)


_stamps: WriteStamps | None = None


def stamps() -> WriteStamps:
    """This process's view of the machine's stamps (mapped on first use)."""
    global _stamps
    if _stamps is None:
        _stamps = WriteStamps()
    return _stamps


# Streams appended to inside a caller's transaction, by connection: bumped again once it ends.
_pending: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def bump_after_transaction(connection: object, stream_id: str) -> None:
    """Note a write made inside ``connection``'s open transaction: ``transaction_ended`` bumps
    its stream again after the commit (or rollback)."""
    _pending.setdefault(connection, set()).add(stream_id)


def transaction_ended(connection: object) -> None:
    """Bump the streams written inside ``connection``'s transaction that just ended."""
    for stream_id in _pending.pop(connection, ()):
        stamps().bump(stream_id)

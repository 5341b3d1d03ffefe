"""One command of a table at a time in this process: a lock per table, held while deciding and
appending (``sapsam.app.table_runner``).

A command decides on this process's copy and the append checks it (optimistic); two at once (four
seats acting within a think time of each other) both decide on the same version and one loses: a
failed append, a look-up of its request id and a reload, then it decides again (up to five times,
then ABORTED). One at a time per table costs a wait of one append instead, taken before a pooled
connection is (bench/capacity.py at 30 tables: statements per call 3.46 -> 2.79;
docs/performance.md). ``asyncio.Lock`` serves its waiters first come, first served, so a table's
commands issued at once are decided in the order they were issued. Other processes stay
optimistic.
"""

from __future__ import annotations

import asyncio
import uuid
import weakref


class TableLocks:
    """The locks of the tables this process is running commands of.

    A lock lives while a command holds or awaits it (weak values): an idle table costs nothing.
    No lock guards the map itself: every use runs on the worker's one event loop.
    """

    def __init__(self) -> None:
        # By the id's integer: a UUID's hash and equality are Python code (every command).
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()

    def of(self, table_id: uuid.UUID) -> asyncio.Lock:
        """The table's lock (a new one if no command of it holds or awaits one)."""
        key = table_id.int
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

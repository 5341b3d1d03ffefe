"""Reads that may lag, served by a streaming standby while it is current enough
(``sapsam serve --read-database-url URL``, ``--read-max-lag-seconds``).

The reads that may lag are those whose answer a caller cannot act on at once: ListTables,
GetLeaderboard and the audit's ExportDeal, VerifyDeal and ReplayDeal (docs/operations.md,
"Reads on a standby"). Everything else (every command, GetTable, WatchTable, a seat's hand) reads
the primary: a move must see the table as it is.

**The staleness bound.** Every ``MEASURE_SECONDS`` the router takes the time ``t``, then reads
the primary's WAL insert position ``L`` (``pg_current_wal_insert_lsn()``: past every
transaction committed before ``t``), and reads how far the standby has replayed
(``pg_last_wal_replay_lsn()``). Once the standby has replayed ``L``, every transaction the
primary committed before ``t`` is visible there: the standby is *current as of* ``t``. A read
goes to the standby only while it is current as of a moment at most ``max_lag_seconds`` ago;
otherwise (the standby lags, cannot be reached, or the primary cannot be measured) it goes to the
primary; a standby that cannot be reached at a measurement loses the reads at once. So a read
routed to the standby at time ``T`` sees every write the primary acknowledged before
``T - max_lag_seconds``. The bound holds whatever the standby's state: disconnected from
its primary, paused, or promoted (a promoted server replays nothing: ``pg_last_wal_replay_lsn()``
is NULL, and the reads go to the primary's URL, which then leads to it; docs/operations.md,
"Promoting the standby").
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from sapsam.store.background import BackgroundLoop
from sapsam.store.event_store import EventStore, ServicePool

MEASURE_SECONDS: Final = 0.5
DEFAULT_MAX_LAG_SECONDS: Final = 5.0
MAX_MARKS: Final = 1_000
"""Primary positions kept while the standby has not replayed them (dropping the oldest only
makes the router more careful)."""
STANDBY_POOL_SIZE: Final = 8
STANDBY_TIMEOUT_SECONDS: Final = 1.0
"""How long a measurement waits for a standby connection before sending the reads to the
primary."""

_logger = logging.getLogger("sapsam.store.standby_reads")


@dataclass
class StandbyReads:
    """Chooses, per read, the standby or the primary (``store``, ``pool``), and measures the
    standby every ``interval`` seconds (``measurer``)."""

    primary: EventStore
    standby: EventStore
    max_lag_seconds: float = DEFAULT_MAX_LAG_SECONDS
    clock: Callable[[], float] = time.monotonic
    current_as_of: float | None = None
    """The latest moment (``clock``) before which every commit on the primary is visible on the
    standby, as last measured; None before the first measurement."""
    reads_on_standby: int = 0
    reads_on_primary: int = 0
    _marks: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=MAX_MARKS))

    @classmethod
    def unopened(
        cls, primary: EventStore, standby_url: str, max_lag_seconds: float
    ) -> StandbyReads:
        """On ``standby_url`` (its pool opens on the server's loop: ``open``)."""
        standby = EventStore.unopened(standby_url, max_size=STANDBY_POOL_SIZE, group_commit=False)
        return cls(primary, standby, max_lag_seconds)

    async def open(self) -> None:
        """Open the standby's pool without waiting for it: an unreachable standby sends the
        reads to the primary, it does not stop the server."""
        await self.standby.pool.open(wait=False)

    async def close(self) -> None:
        """Close the standby's pool."""
        await self.standby.pool.close()

    def lag_seconds(self) -> float | None:
        """How far behind the standby is known to be at most (None: not known)."""
        if self.current_as_of is None:
            return None
        return max(0.0, self.clock() - self.current_as_of)

    def use_standby(self) -> bool:
        """Whether a read now may go to the standby."""
        lag = self.lag_seconds()
        return lag is not None and lag <= self.max_lag_seconds

    def store(self) -> EventStore:
        """Where a read that may lag goes now."""
        if self.use_standby():
            self.reads_on_standby += 1
            return self.standby
        self.reads_on_primary += 1
        return self.primary

    def pool(self) -> ServicePool:
        """The pool of ``store()``."""
        return self.store().pool

    async def measure(self) -> None:
        """One measurement (see the module's docstring)."""
        taken = self.clock()
        async with self.primary.pool.connection() as connection:
            row = await (
                await connection.execute("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")
            ).fetchone()
        assert row is not None
        self._marks.append((taken, int(row[0])))
        try:
            async with self.standby.pool.connection(timeout=STANDBY_TIMEOUT_SECONDS) as connection:
                row = await (
                    await connection.execute("SELECT pg_last_wal_replay_lsn() - '0/0'::pg_lsn")
                ).fetchone()
        except BaseException:
            # Out of reach (or too slow to say): the reads go to the primary from now on,
            # not once the bound has run out.
            self.current_as_of = None
            raise
        replayed = None if row is None or row[0] is None else int(row[0])
        if replayed is None:
            # Not (or no longer) a standby: its position says nothing about the primary's.
            self.current_as_of = None
            self._marks.clear()
            return
        while self._marks and self._marks[0][1] <= replayed:
            self.current_as_of = self._marks.popleft()[0]

    def measurer(self, interval: float = MEASURE_SECONDS) -> BackgroundLoop:
        """The background loop that measures; a failed measurement is logged and retried (the
        bound ages meanwhile, and the reads go back to the primary)."""

        async def step(should_stop: object) -> None:
            await self.measure()

        return BackgroundLoop(
            "sapsam-standby-lag", step, interval, _logger, max_pause=max(interval, 2.0)
        )

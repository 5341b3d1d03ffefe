"""The serving record: when some server was serving, so deadlines can be fair across outages.

Each serving process writes a heartbeat every ``BEAT_SECONDS`` into ``serving_intervals``
(revision 0005): one row per uninterrupted stretch of serving, ``started_ms`` when it began,
``beat_ms`` its latest heartbeat. A process whose previous beat is more than ``TOLERANCE_MS``
old (it was cut off from the database) starts a new row; a new process starts its own. So the
rows, merged, are the time some server was serving, and the gaps between them are the time none
was: *unserved windows*, from the last heartbeat before the gap to the moment serving began
again. A gap's reason is ``server_restart`` when a new process ended it, ``database_outage``
when a process that served before it resumed.

Why heartbeats in the database: the database is the one thing every process shares and outlives
every process; a killed server cannot write that it stopped, but it stops beating, and the next
server to serve sees the gap. The deadline sweeper passes the windows to the table's decision
(``sapsam.domain.table_deadlines``), which extends the deadlines they make unfair to enforce.

Before the first row ever recorded (a database just migrated to 0005), no server is known to
have served: that time counts as unserved, so deadlines that passed while an older version was
stopped for the upgrade are extended too.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import psycopg
from psycopg_pool import AsyncConnectionPool

from sapsam.domain.table_deadlines import DATABASE_OUTAGE, SERVER_RESTART, UnservedWindow
from sapsam.store.queries import query

Connection = psycopg.AsyncConnection[Any]

BEAT_SECONDS: Final = 1.0
TOLERANCE_MS: Final = 5_000
"""A beat this much later than the process's previous one starts a new interval: the process was
not serving (or not reachable) in between."""

_logger = logging.getLogger("sapsam.store.serving")


def wall_clock_ms() -> int:
    """Unix time in milliseconds (the same clock the table service reads)."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class ServingInterval:
    """A stretch of time ``server_id`` was serving: ``started_ms`` to ``beat_ms``."""

    server_id: str
    started_ms: int
    beat_ms: int


def unserved_windows(
    intervals: Sequence[ServingInterval], known_before: bool
) -> tuple[UnservedWindow, ...]:
    """The gaps between serving intervals (pure).

    ``intervals`` are every interval that overlaps the time from the start of interest on, plus
    the one that ended last before it (``serving.intervals_since``: the start of interest is at or
    before every interval given, so the ones left out end by that last one; docs/reliability.md,
    finding 6); ``known_before`` says whether any interval precedes them all. If none does,
    the time before the first is a window from 0 (nothing is known to have served then).
    """
    ordered = sorted(intervals, key=lambda interval: (interval.started_ms, interval.beat_ms))
    windows: list[UnservedWindow] = []
    covered_until: int | None = None
    seen: set[str] = set()
    for interval in ordered:
        if covered_until is None:
            if not known_before:
                windows.append(UnservedWindow(0, interval.started_ms, SERVER_RESTART))
        elif interval.started_ms > covered_until:
            reason = DATABASE_OUTAGE if interval.server_id in seen else SERVER_RESTART
            windows.append(UnservedWindow(covered_until, interval.started_ms, reason))
        covered_until = (
            interval.beat_ms if covered_until is None else max(covered_until, interval.beat_ms)
        )
        seen.add(interval.server_id)
    return tuple(windows)


class ServingRecord:
    """This process's heartbeat, and the windows no server served (from every process's)."""

    def __init__(
        self,
        pool: AsyncConnectionPool[Any],
        clock: Callable[[], int] = wall_clock_ms,
        server_id: uuid.UUID | None = None,
    ) -> None:
        self._pool = pool
        self._clock = clock
        self.server_id = server_id or uuid.uuid4()
        self._started_ms: int | None = None
        self._last_beat_ms = 0

    @property
    def serving(self) -> bool:
        """Whether this process's last beat is recent: only then may it judge deadlines."""
        return self._started_ms is not None and self._clock() - self._last_beat_ms <= TOLERANCE_MS

    async def beat(self) -> None:
        """Record that this process is serving now (a new interval after a missed stretch)."""
        now = self._clock()
        async with self._pool.connection() as connection:
            if self._started_ms is None or now - self._last_beat_ms > TOLERANCE_MS:
                await connection.execute(
                    query("serving.start_interval"), {"server": self.server_id, "now": now}
                )
                if self._started_ms is not None:
                    _logger.warning(
                        "serving again after %d ms without a heartbeat", now - self._last_beat_ms
                    )
                self._started_ms = now
            else:
                await connection.execute(
                    query("serving.beat"),
                    {"now": now, "server": self.server_id, "started": self._started_ms},
                )
        self._last_beat_ms = now

    async def unserved_since(self, since_ms: int) -> tuple[UnservedWindow, ...]:
        """The windows no server served that end after ``since_ms`` (or contain it)."""
        async with self._pool.connection() as connection:
            return await read_unserved_windows(connection, since_ms)


async def read_unserved_windows(
    connection: Connection, since_ms: int
) -> tuple[UnservedWindow, ...]:
    """The unserved windows that matter for deadlines at or after ``since_ms``."""
    rows = await (
        await connection.execute(query("serving.intervals_since"), {"since": since_ms})
    ).fetchall()
    intervals = [ServingInterval(str(row[0]), int(row[1]), int(row[2])) for row in rows]
    if not intervals:
        return ()
    first = min(interval.started_ms for interval in intervals)
    row = await (
        await connection.execute(query("serving.known_before"), {"first": first})
    ).fetchone()
    known_before = bool(row and row[0])
    return unserved_windows(intervals, known_before)

"""Tables the background work keeps failing on: recorded, backed off, and listed for the operator.

The deadline sweeper and the tournament results process act on many tables. One table that makes
them fail (a bug, a corrupt row) must not stop them for every other table, nor be retried in a
tight loop: each failure is recorded here (``background_failures``, revision 0005) with its count,
the error's type and when to try again, ``FIRST_RETRY_MS`` doubled at every failure up to
``MAX_RETRY_MS``. The row is deleted when the table succeeds again. The record is in the database,
not in a process's memory, so the back-off holds across processes and restarts, and
``sapsam tables stuck`` shows it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import psycopg

from sapsam.app.store_interface import DEADLINES_PROCESS as DEADLINES_PROCESS  # re-exported
from sapsam.app.store_interface import RESULTS_PROCESS as RESULTS_PROCESS  # re-exported
from sapsam.store.queries import query

Connection = psycopg.AsyncConnection[Any]

FIRST_RETRY_MS: Final = 1_000
MAX_RETRY_MS: Final = 300_000


@dataclass(frozen=True)
class TableFailure:
    """A table a background process keeps failing on."""

    process: str
    table_id: str
    failures: int
    first_failed_ms: int
    last_failed_ms: int
    retry_at_ms: int
    last_error: str
    pending_positions: tuple[int, ...] = ()


def _failure(row: Sequence[Any]) -> TableFailure:
    return TableFailure(
        process=str(row[0]),
        table_id=str(row[1]),
        failures=int(row[2]),
        first_failed_ms=int(row[3]),
        last_failed_ms=int(row[4]),
        retry_at_ms=int(row[5]),
        last_error=str(row[6]),
        pending_positions=tuple(int(position) for position in row[7]),
    )


async def record_failure(
    connection: Connection,
    process: str,
    table_id: uuid.UUID | str,
    error: BaseException,
    now_ms: int,
    pending_positions: Sequence[int] = (),
) -> TableFailure:
    """Count one more failure of ``process`` at ``table_id`` and set when to try it next.

    Only the error's type is kept: its message might hold what must not be stored (a seed).
    ``pending_positions`` are appended to the row's (the results process's events still due).
    """
    row = await (
        await connection.execute(
            query("table_failures.record"),
            {
                "process": process,
                "table": str(table_id),
                "now": now_ms,
                "first": FIRST_RETRY_MS,
                "cap": MAX_RETRY_MS,
                "error": type(error).__name__,
                "pending": list(pending_positions),
            },
        )
    ).fetchone()
    assert row is not None
    return _failure(row)


async def clear_failure(connection: Connection, process: str, table_id: uuid.UUID | str) -> None:
    """The table succeeded: forget its failures."""
    await connection.execute(
        query("table_failures.clear"), {"process": process, "table": str(table_id)}
    )


async def failing_tables(connection: Connection, process: str | None = None) -> list[TableFailure]:
    """Every recorded failure (of one process, or of all), longest failing first."""
    rows = await (
        await connection.execute(query("table_failures.failing"), {"process": process})
    ).fetchall()
    return [_failure(row) for row in rows]


async def add_pending_position(
    connection: Connection, process: str, table_id: str, position: int
) -> None:
    """Park one more log position behind the table's earlier ones."""
    await connection.execute(
        query("table_failures.add_pending"),
        {"process": process, "table": table_id, "position": position},
    )


async def remove_pending_position(
    connection: Connection, process: str, table_id: str, position: int
) -> None:
    """A parked position was handled: take it off the table's list."""
    await connection.execute(
        query("table_failures.remove_pending"),
        {"process": process, "table": table_id, "position": position},
    )


async def pending_count(connection: Connection, process: str, table_id: str) -> int | None:
    """How many positions the table still has parked, locking its row (None: not failing)."""
    row = await (
        await connection.execute(
            query("table_failures.pending_count"), {"process": process, "table": table_id}
        )
    ).fetchone()
    return None if row is None else int(row[0])


@dataclass(frozen=True)
class OverdueTable:
    """A table still waiting for seats long after its deadline passed."""

    table_id: str
    phase: str
    deadline_ms: int


async def overdue_tables(
    connection: Connection, before_ms: int, limit: int = 1000
) -> list[OverdueTable]:
    """Tables in play whose deadline passed before ``before_ms``: past all deadlines, yet nobody
    timed their seats out (no sweeper running, or one failing on them)."""
    rows = await (
        await connection.execute(
            query("table_failures.overdue"), {"before": before_ms, "limit": limit}
        )
    ).fetchall()
    return [OverdueTable(str(row[0]), str(row[1]), int(row[2])) for row in rows]

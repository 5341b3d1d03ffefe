"""The database-wide gauges of the metrics endpoint, read in one short transaction
(``store/sql/metrics.sql``): deadlines pending and overdue, tables failing in background work,
the log's last position, and how far the signed checkpoints lag behind the log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from psycopg_pool import AsyncConnectionPool

from sapsam.store.queries import query

CHECKPOINT_LAG_CAP: Final = 1_000_000
"""The most events the checkpoint lag counts (the statement stays short however far behind)."""


@dataclass(frozen=True)
class DatabaseGauges:
    """One reading."""

    deadlines_pending: int
    deadlines_overdue: int
    failing_tables: tuple[tuple[str, int], ...]  # per background process
    log_position: int
    checkpoint_age_seconds: float | None  # None: no checkpoint signed yet
    checkpoint_lag_events: int | None


async def read_database_gauges(
    pool: AsyncConnectionPool[Any], now_ms: int, checkpoints: bool = True
) -> DatabaseGauges:
    """Read the gauges at ``now_ms``; ``checkpoints`` False (a server that signs none) skips
    the checkpoint lag."""
    async with pool.connection() as connection, connection.transaction():
        deadlines = await connection.execute(query("metrics.deadlines"), {"now": now_ms})
        row = await deadlines.fetchone()
        pending, overdue = (int(row[0]), int(row[1])) if row else (0, 0)
        failing = await (await connection.execute(query("metrics.failing_tables"))).fetchall()
        position = await (await connection.execute(query("metrics.log_position"))).fetchone()
        lag = None
        if checkpoints:
            lag = await (
                await connection.execute(
                    query("metrics.checkpoint_lag"), {"cap": CHECKPOINT_LAG_CAP}
                )
            ).fetchone()
    return DatabaseGauges(
        deadlines_pending=pending,
        deadlines_overdue=overdue,
        failing_tables=tuple((str(name), int(count)) for name, count in failing),
        log_position=int(position[0]) if position else 0,
        checkpoint_age_seconds=float(lag[0]) if lag else None,
        checkpoint_lag_events=int(lag[1]) if lag else None,
    )

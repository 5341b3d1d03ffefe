"""Named queries over the tables' read model (``table_state``), for the application's queries
and the deadline sweeper's (``tables_past_deadline``).

The statements are in ``store/sql/tables.sql``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from sapsam.store.queries import query
from sapsam.store.table_failures import DEADLINES_PROCESS

Connection = psycopg.AsyncConnection[Any]


@dataclass(frozen=True)
class TableListing:
    """One line of a page of tables: its id and the facts of its creation."""

    table_id: uuid.UUID
    created_at: str
    created_by: str


async def table_page(
    connection: Connection,
    phases: Sequence[str] | None,
    after: tuple[str, uuid.UUID] | None,
    limit: int,
) -> list[TableListing]:
    """Up to ``limit`` tables newest first, in ``phases`` (None: any), after ``after``'s
    (created_at, table_id)."""
    rows = await (
        await connection.execute(
            query("tables.page"),
            {
                "phases": None if phases is None else list(phases),
                "after_created": None if after is None else after[0],
                "after_id": None if after is None else after[1],
                "limit": limit,
            },
        )
    ).fetchall()
    return [TableListing(uuid.UUID(str(row[0])), str(row[1]), str(row[2])) for row in rows]


@dataclass(frozen=True)
class WaitingTable:
    """A table as the operator's list shows it: the read model's row and when its last event was
    recorded (``waiting_since``, the store's ``recorded_at`` text)."""

    table_id: uuid.UUID
    phase: str
    seat_count: int
    players: tuple[str | None, ...]
    dealer: int | None
    deal_number: int
    seat_status: tuple[dict[str, Any], ...]
    deadline_ms: int | None
    waiting_since: str


async def waiting_tables(
    connection: Connection, phases: Sequence[str] | None, limit: int
) -> list[WaitingTable]:
    """Up to ``limit`` tables in ``phases`` (None: every one not complete), longest waiting
    first."""
    rows = await (
        await connection.execute(
            query("tables.waiting"),
            {"phases": None if phases is None else list(phases), "limit": limit},
        )
    ).fetchall()
    return _waiting(rows)


async def waiting_past_deadline(
    connection: Connection, now_ms: int, limit: int
) -> list[WaitingTable]:
    """Up to ``limit`` tables not complete whose deadline passed by ``now_ms``, longest waiting
    first (found by their deadline, however many tables have waited longer)."""
    rows = await (
        await connection.execute(
            query("tables.waiting_past_deadline"), {"now": now_ms, "limit": limit}
        )
    ).fetchall()
    return _waiting(rows)


def _waiting(rows: Sequence[Any]) -> list[WaitingTable]:
    return [
        WaitingTable(
            table_id=uuid.UUID(str(row[0])),
            phase=str(row[1]),
            seat_count=int(row[2]),
            players=tuple(row[3]),
            dealer=None if row[4] is None else int(row[4]),
            deal_number=int(row[5]),
            seat_status=tuple(row[6]),
            deadline_ms=None if row[7] is None else int(row[7]),
            waiting_since=str(row[8]),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class DueTable:
    """A table whose deadline has passed; ``failing``: the sweeper has failed on it before."""

    table_id: str
    deadline_ms: int
    failing: bool


async def tables_past_deadline(
    connection: psycopg.AsyncConnection[Any], now_ms: int, limit: int = 100
) -> list[DueTable]:
    """Tables whose arranging or reveal deadline has passed by ``now_ms``, earliest first.

    A table the sweeper keeps failing on waits out its back-off (``background_failures``) and is
    left out meanwhile, so however many tables fail, the batch is filled with the others.
    """
    cursor = await connection.execute(
        query("tables.past_deadline"),
        {"process": DEADLINES_PROCESS, "now": now_ms, "limit": limit},
    )
    rows = await cursor.fetchall()
    return [DueTable(str(row[0]), int(row[1]), bool(row[2])) for row in rows]

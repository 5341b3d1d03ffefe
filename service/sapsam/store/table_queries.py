"""Named queries over the tables' read model (``table_state``), for the application's queries.

The statements are in ``store/sql/tables.sql``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from sapsam.store.queries import query

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

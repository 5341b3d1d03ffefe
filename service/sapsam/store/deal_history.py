"""A player's hand history from the read models (``seat_scores`` with ``table_state``).

The statement is ``store/sql/deal_history.sql``; the application's query (``sapsam.app``) pages
through it with a token of the last line's sort key.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import psycopg

from sapsam.store.queries import query

Connection = psycopg.AsyncConnection[Any]


@dataclass(frozen=True)
class PlayedDealLine:
    """One scored deal of a player, from one seat it held."""

    table_id: uuid.UUID
    deal_number: int
    seat: int
    delta: int
    series_total: int
    fouled: bool
    table_created_at: str
    rule_set_name: str
    seat_count: int
    scored_at: str | None
    """DealScored's recorded time (ISO 8601, UTC); None if the log has no such event."""

    @property
    def sort_key(self) -> tuple[str, uuid.UUID, int, int]:
        """Where this line sits in the history's order (what a page token carries)."""
        return (self.table_created_at, self.table_id, self.deal_number, self.seat)


async def deal_history_page(
    connection: Connection,
    player_id: str,
    after: tuple[str, uuid.UUID, int, int] | None,
    limit: int,
) -> list[PlayedDealLine]:
    """Up to ``limit`` of ``player_id``'s scored deals, newest table first, after ``after``."""
    rows = await (
        await connection.execute(
            query("deal_history.page"),
            {
                "player": player_id,
                "after_created": None if after is None else after[0],
                "after_id": None if after is None else after[1],
                "after_deal": None if after is None else after[2],
                "after_seat": None if after is None else after[3],
                "limit": limit,
            },
        )
    ).fetchall()
    return [
        PlayedDealLine(
            table_id=uuid.UUID(str(row[0])),
            deal_number=int(row[1]),
            seat=int(row[2]),
            delta=int(row[3]),
            series_total=int(row[4]),
            fouled=bool(row[5]),
            table_created_at=str(row[6]),
            rule_set_name=str(row[7]),
            seat_count=int(row[8]),
            scored_at=None if row[9] is None else str(row[9]),
        )
        for row in rows
    ]

"""The secret seed of each running deal, kept out of the log.

The log holds only the seed's commitment (``DealStarted``) until ``SeedRevealed``; the seed itself
sits in ``deal_secrets`` for the service alone to read. Delete it in the same statement that
appends ``SeedRevealed`` (``append_statement.secret_companions`` with ``appends.append``;
``delete_deal_seed`` in the append's transaction otherwise), so there is never a moment with the
seed in both places or in neither.
docs/store.md explains what an operator with database access can and cannot learn.
"""

from __future__ import annotations

from typing import Any

import psycopg

from sapsam.store.queries import query

Connection = psycopg.AsyncConnection[Any]


async def store_deal_seed(
    connection: Connection, stream_id: str, deal_number: int, seed: bytes
) -> None:
    """Keep a deal's secret seed; a second seed for the same deal is refused (UniqueViolation)."""
    await connection.execute(
        query("deal_secrets.keep"), {"stream": stream_id, "number": deal_number, "seed": seed}
    )


async def load_deal_seed(connection: Connection, stream_id: str, deal_number: int) -> bytes | None:
    """The deal's secret seed, or None when it was never stored or already revealed."""
    row = await (
        await connection.execute(
            query("deal_secrets.load"), {"stream": stream_id, "number": deal_number}
        )
    ).fetchone()
    return bytes(row[0]) if row else None


async def delete_deal_seed(connection: Connection, stream_id: str, deal_number: int) -> bool:
    """Forget a deal's seed (once revealed in the log); True if there was one to delete."""
    cursor = await connection.execute(
        query("deal_secrets.forget"), {"stream": stream_id, "number": deal_number}
    )
    return cursor.rowcount == 1

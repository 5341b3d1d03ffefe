"""Checkpoints of the processes that follow the log: how far each has handled it.

A checkpoint is process state, not a read model: it is never rebuilt from the log, and it moves
only forward (``save_checkpoint`` keeps the greater position, whoever writes it). The statements
are in ``store/sql/checkpoints.sql``.
"""

from __future__ import annotations

from typing import Any

import psycopg

from sapsam.store.queries import query

Connection = psycopg.AsyncConnection[Any]


async def ensure_checkpoint_table(connection: Connection) -> None:
    """Create the checkpoint table if it is missing."""
    await connection.execute(query("checkpoints.create_table"))


async def read_checkpoint(connection: Connection, name: str) -> int:
    """The last log position process ``name`` has fully handled (0 if it never ran)."""
    await ensure_checkpoint_table(connection)
    row = await (await connection.execute(query("checkpoints.read"), {"name": name})).fetchone()
    return int(row[0]) if row else 0


async def save_checkpoint(connection: Connection, name: str, position: int) -> None:
    """Move process ``name``'s checkpoint to ``position``, never back."""
    await connection.execute(query("checkpoints.save"), {"name": name, "position": position})

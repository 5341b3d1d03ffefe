"""Checkpoints of the processes that follow the log: how far each has handled it.

A checkpoint is process state, not a read model: it is never rebuilt from the log, and it moves
only forward (``save_checkpoint`` keeps the greater position, whoever writes it).
"""

from __future__ import annotations

from typing import Any, Final

import psycopg

Connection = psycopg.Connection[Any]

CHECKPOINTS_SQL: Final = """
CREATE TABLE IF NOT EXISTS tournament_checkpoints (
    name text PRIMARY KEY,
    position bigint NOT NULL
)
"""


def ensure_checkpoint_table(connection: Connection) -> None:
    """Create the checkpoint table if it is missing."""
    connection.execute(CHECKPOINTS_SQL)


def read_checkpoint(connection: Connection, name: str) -> int:
    """The last log position process ``name`` has fully handled (0 if it never ran)."""
    ensure_checkpoint_table(connection)
    row = connection.execute(
        "SELECT position FROM tournament_checkpoints WHERE name = %s", [name]
    ).fetchone()
    return int(row[0]) if row else 0


def save_checkpoint(connection: Connection, name: str, position: int) -> None:
    """Move process ``name``'s checkpoint to ``position``, never back."""
    connection.execute(
        """
        INSERT INTO tournament_checkpoints (name, position) VALUES (%s, %s)
        ON CONFLICT (name) DO UPDATE
        SET position = GREATEST(tournament_checkpoints.position, excluded.position)
        """,
        [name, position],
    )

"""Registered players: display names and the SHA-256 hashes of their bearer tokens.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

Players are not event-sourced: a player is an account, not a game fact, and the game's events
name players only by id. The token itself is never stored, only its hash, so a database reader
cannot act as a player. ``request_id`` makes RegisterPlayer idempotent (a retry finds the player
it created, and is told the token was already issued).
"""

from __future__ import annotations

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None

UPGRADE_STATEMENTS = (
    """
    CREATE TABLE players (
        player_id uuid PRIMARY KEY,
        display_name text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 64),
        token_hash bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
        request_id text UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now()
    )
    """,
)

DOWNGRADE_STATEMENTS = ("DROP TABLE players",)


def upgrade() -> None:
    """Create the players table."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Drop the players table."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

"""Players' Ed25519 public keys, with which they sign their commitments and reveals.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02

One row per key (issue #15 item 5, docs/fairness.md §19): the key, the player it belongs to, the
proof of possession the player sent (the key's signature of the registration message), the request
that registered it and when. A key belongs to one player (its primary key); a player may have
several (rotation adds one). Rows are never changed or deleted: a signature recorded in the log
names the key that made it, and that key must stay on record.
"""

from __future__ import annotations

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None

UPGRADE_STATEMENTS = (
    """
    CREATE TABLE player_keys (
        public_key bytea PRIMARY KEY CHECK (length(public_key) = 32),
        player_id uuid NOT NULL REFERENCES players (player_id),
        proof bytea NOT NULL CHECK (length(proof) = 64),
        request_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX player_keys_by_player ON player_keys (player_id, created_at)",
)

DOWNGRADE_STATEMENTS = ("DROP TABLE player_keys",)


def upgrade() -> None:
    """Create the player_keys table."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Drop it."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

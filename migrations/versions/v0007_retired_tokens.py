"""Retired tokens by when they were retired: each server process asks every second which tokens
were rotated or revoked since it last asked, and drops them from its token cache.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02

A partial index (only retired tokens) on ``player_tokens.revoked_at``: the question reads the few
entries at its end instead of the whole table (sapsam.api.players, ``forget_retired``).
"""

from __future__ import annotations

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None

UPGRADE_STATEMENTS = (
    "CREATE INDEX player_tokens_retired ON player_tokens (revoked_at) WHERE revoked_at IS NOT NULL",
)

DOWNGRADE_STATEMENTS = ("DROP INDEX player_tokens_retired",)


def upgrade() -> None:
    """Create the index of retired tokens."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Drop it."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

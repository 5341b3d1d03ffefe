"""The digest of the request a request id was first used with.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

A request id is an idempotency key: a retry with the same id and the same request is answered
with the first answer, and the same id with a different request is refused (REQUEST_ID_REUSED)
instead of being answered with the result of another request. ``fingerprint`` (0001) covers the
events an append wrote, which a different request can produce too (a reveal with a new nonce
that fails the same way, a rebuilt request that decides alike), so the API layer's digest of the
request as the client sent it is kept beside it: SHA-256 of the method and the deterministic
serialization of the request message with its request_id cleared
(``sapsam.api.request_digest``). Rows written before this revision, and appends made by the
service itself, have none (NULL), and are compared by their fingerprint as before.
"""

from __future__ import annotations

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None

UPGRADE_STATEMENTS = (
    """
    ALTER TABLE processed_requests ADD COLUMN request_digest bytea
        CHECK (request_digest IS NULL OR length(request_digest) = 32)
    """,
    """
    ALTER TABLE players ADD COLUMN request_digest bytea
        CHECK (request_digest IS NULL OR length(request_digest) = 32)
    """,
)

DOWNGRADE_STATEMENTS = (
    "ALTER TABLE players DROP COLUMN request_digest",
    "ALTER TABLE processed_requests DROP COLUMN request_digest",
)


def upgrade() -> None:
    """Add the request digest columns."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Drop the request digest columns."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

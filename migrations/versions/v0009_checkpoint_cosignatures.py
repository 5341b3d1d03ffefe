"""Witness cosignatures of the transparency log's checkpoints.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02

docs/transparency.md §5.5. ``checkpoint_cosignatures`` keeps each cosignature a listed witness
sent for a checkpoint the server issued (``AddCheckpointCosignature``): the witness's verifier
key, the signature line as sent and the time it carries (no foreign key to ``log_checkpoints``:
the service checks the checkpoint exists, and a key would let a TRUNCATE fail on it before the
guard speaks). One per witness and checkpoint, never replaced; append-only for every role,
owner included, as ``events`` is (the statement-level trigger function of migration 0008 refuses
UPDATE, DELETE and TRUNCATE).
"""

from __future__ import annotations

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None

UPGRADE_STATEMENTS = (
    """
    CREATE TABLE checkpoint_cosignatures (
        size bigint NOT NULL CHECK (size >= 1),
        witness_key text NOT NULL CHECK (octet_length(witness_key) BETWEEN 1 AND 400),
        line text NOT NULL CHECK (octet_length(line) BETWEEN 1 AND 512),
        cosigned_at bigint NOT NULL CHECK (cosigned_at >= 0),
        received_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (size, witness_key)
    )
    """,
    """
    CREATE TRIGGER checkpoint_cosignatures_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON checkpoint_cosignatures
    FOR EACH STATEMENT EXECUTE FUNCTION sapsam_refuse_log_change()
    """,
)

DOWNGRADE_STATEMENTS = ("DROP TABLE checkpoint_cosignatures",)


def upgrade() -> None:
    """Create the table and its guard."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Drop it: for tests and fresh installs only."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

"""The transparency log over the event log: stored Merkle subtrees, leaves, signed checkpoints.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02

docs/transparency.md §7. ``merkle_nodes`` holds only perfect subtrees, whose hash never changes
once their last leaf is in; ``merkle_leaves`` maps the dense leaf index to the event's position;
``log_checkpoints`` holds every signed checkpoint (named so to stay apart from the followers'
``tournament_checkpoints``). All three are append-only for every role, owner included, as
``events`` is: a statement-level trigger refuses UPDATE, DELETE and TRUNCATE.
"""

from __future__ import annotations

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None

GUARDED_TABLES = ("merkle_nodes", "merkle_leaves", "log_checkpoints")

UPGRADE_STATEMENTS = (
    """
    CREATE TABLE merkle_nodes (
        level smallint NOT NULL CHECK (level BETWEEN 0 AND 63),
        index bigint NOT NULL CHECK (index >= 0),
        hash bytea NOT NULL CHECK (length(hash) = 32),
        PRIMARY KEY (level, index)
    )
    """,
    """
    CREATE TABLE merkle_leaves (
        leaf_index bigint PRIMARY KEY CHECK (leaf_index >= 0),
        position bigint NOT NULL UNIQUE
    )
    """,
    """
    CREATE TABLE log_checkpoints (
        size bigint PRIMARY KEY CHECK (size >= 1),
        root bytea NOT NULL CHECK (length(root) = 32),
        issued_at timestamptz NOT NULL,
        note text NOT NULL
    )
    """,
    """
    CREATE FUNCTION sapsam_refuse_log_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'sapsam: the % table is append-only; % refused', TG_TABLE_NAME, TG_OP
            USING ERRCODE = 'restrict_violation';
    END
    $$
    """,
    *(
        f"""
    CREATE TRIGGER {table}_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION sapsam_refuse_log_change()
    """
        for table in GUARDED_TABLES
    ),
)

DOWNGRADE_STATEMENTS = (
    "DROP TABLE log_checkpoints",
    "DROP TABLE merkle_leaves",
    "DROP TABLE merkle_nodes",
    "DROP FUNCTION sapsam_refuse_log_change()",
)


def upgrade() -> None:
    """Create the tree's tables and their guards."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Drop them: for tests and fresh installs only."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

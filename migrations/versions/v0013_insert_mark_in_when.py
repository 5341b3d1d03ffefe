"""The events' insert mark taken by the trigger's WHEN condition, without a PL/pgSQL call.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03

Every insert into ``events`` holds a shared transaction-scoped advisory lock from before its rows
draw positions until it ends (migration 0001; ``sapsam_safe_position`` relies on it). Until now
the ``events_mark_inserts`` statement trigger took it in PL/pgSQL (``PERFORM
pg_advisory_xact_lock_shared(...)``): each insert statement paid a PL/pgSQL call, which runs the
``PERFORM`` as a query of its own (~10-14 us of backend CPU per statement, bench/append_cost.py's
``no_insert_trigger``). Now the trigger's WHEN condition takes the lock: the condition is an
expression evaluated where the trigger fires (before any row of the statement is built, so
before any position is drawn, as before), for every insert statement by any writer, and it is
false (``void``'s text is never NULL), so the function never runs. The lock, its key, its mode
and its lifetime are unchanged; only who takes it changed. The function stays (a no-op) because
a trigger must name one.

Nothing in the log changes.
"""

from __future__ import annotations

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None

# The key of migration 0001's insert mark (classid 1752392027, objid 2093268333 in pg_locks).
_MARK = "7526466447829417325"

UPGRADE_STATEMENTS = (
    "DROP TRIGGER events_mark_inserts ON events",
    """
    CREATE OR REPLACE FUNCTION sapsam_mark_event_insert() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        -- Never runs: events_mark_inserts takes the insert mark in its WHEN condition.
        RETURN NULL;
    END
    $$
    """,
    f"""
    CREATE TRIGGER events_mark_inserts
    BEFORE INSERT ON events
    FOR EACH STATEMENT
    WHEN (pg_advisory_xact_lock_shared({_MARK})::text IS NULL)
    EXECUTE FUNCTION sapsam_mark_event_insert()
    """,
)

DOWNGRADE_STATEMENTS = (
    "DROP TRIGGER events_mark_inserts ON events",
    f"""
    CREATE OR REPLACE FUNCTION sapsam_mark_event_insert() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock_shared({_MARK});
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER events_mark_inserts
    BEFORE INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION sapsam_mark_event_insert()
    """,
)


def upgrade() -> None:
    """Take the insert mark in the trigger's WHEN condition."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Take it in the trigger's PL/pgSQL function again, as migration 0001 did."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

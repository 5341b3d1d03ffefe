"""Wake-ups per stream: the event feed says which streams it watches, and appends by its own
process do not wake it.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02

``wakeup_streams``: one row per stream a listener (a row of ``wakeup_listeners``, migration 0006)
wants the wake-ups of. The server's event feed registers itself with no event types (``{}``) and
one row here per stream it has watchers for; an append wants a wake-up if a live listener wants
its event types (as before) or a live listener other than the one its caller hands the events to
itself (``sapsam.store.appends``: the writing process's own feed) wants its stream. A row goes
with its listener's row (``ON DELETE CASCADE``): a feed that stops listening, or a lapsed
listener deleted by another feed's renewal, takes its streams with it. UNLOGGED like
``wakeup_listeners``: after a crash every feed registers again.

Roles that may write ``wakeup_listeners`` (the service role, ``sapsam.store.schema``) are given the
same rights on ``wakeup_streams``.
"""

from __future__ import annotations

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None

UPGRADE_STATEMENTS = (
    """
    CREATE UNLOGGED TABLE wakeup_streams (
        stream_id text NOT NULL,
        listener text NOT NULL REFERENCES wakeup_listeners (listener) ON DELETE CASCADE,
        PRIMARY KEY (stream_id, listener)
    )
    """,
    # The cascade and a feed's own deletes find a listener's rows by this index.
    "CREATE INDEX wakeup_streams_listener ON wakeup_streams (listener)",
    # Whoever may write the listeners' table (besides its owner) may write this one.
    """
    DO $$
    DECLARE
        writer oid;
    BEGIN
        FOR writer IN
            SELECT DISTINCT grant_row.grantee
            FROM pg_class AS listeners,
                LATERAL aclexplode(listeners.relacl) AS grant_row
            WHERE listeners.oid = 'wakeup_listeners'::regclass
                AND grant_row.privilege_type = 'INSERT'
                AND grant_row.grantee <> listeners.relowner
        LOOP
            IF writer = 0 THEN
                EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON wakeup_streams TO PUBLIC';
            ELSE
                EXECUTE format(
                    'GRANT SELECT, INSERT, UPDATE, DELETE ON wakeup_streams TO %I',
                    pg_get_userbyid(writer)
                );
            END IF;
        END LOOP;
    END
    $$
    """,
)

DOWNGRADE_STATEMENTS = ("DROP TABLE wakeup_streams",)


def upgrade() -> None:
    """Create the streams' table."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Drop the streams' table."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

"""Who wants wake-ups: an append sends its NOTIFY only when some listener wants it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02

``wakeup_listeners``: one row per LISTENing session (``listener``: its backend pid), with the event
types it wants to hear of (NULL: every append) and how long the row holds (``expires_at``). A
listener writes its row with its LISTEN, before its first read, and renews it while it listens
(the server's event feed at every poll, the others once half its time is gone); the event feed
deletes it when it stops listening, and any other row lapses at ``expires_at``. An append reads
the table inside its own statement and has its wake-up sent only if some live row wants one of
its event types (``sapsam.store.subscriptions``). UNLOGGED: the rows are worth nothing after a
crash (the listeners write them again at their next poll), so renewals write no WAL.
"""

from __future__ import annotations

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None

UPGRADE_STATEMENTS = (
    """
    CREATE UNLOGGED TABLE wakeup_listeners (
        listener text PRIMARY KEY,
        event_types text[],
        expires_at timestamptz NOT NULL
    )
    """,
)

DOWNGRADE_STATEMENTS = ("DROP TABLE wakeup_listeners",)


def upgrade() -> None:
    """Create the listeners' table."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Drop the listeners' table."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

"""When servers served, and which tables the background work keeps failing on.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

``serving_intervals``: each serving process records the interval it has been serving, one row per
interval, its ``beat_ms`` moved forward every second (a heartbeat). A process that misses its
beats for longer than the tolerance (killed, or cut off from the database) starts a new row
when it comes back. The time no interval covers is time no server served: a deadline that
fell in it (or in the grace window after) is extended, not enforced (sapsam.store.serving,
docs/events.md ``DeadlinesExtended``).

``background_failures``: a table the deadline sweeper or the tournament results process failed
on, with how often, since when, the error's type and when it is tried next (backed off
exponentially). The others go on meanwhile; ``sapsam tables stuck`` lists these rows. For the
results process, ``pending_positions`` holds the log positions of the table's events it still
has to handle, in order.
"""

from __future__ import annotations

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None

UPGRADE_STATEMENTS = (
    """
    CREATE TABLE serving_intervals (
        server_id uuid NOT NULL,
        started_ms bigint NOT NULL,
        beat_ms bigint NOT NULL,
        PRIMARY KEY (server_id, started_ms),
        CHECK (beat_ms >= started_ms)
    )
    """,
    "CREATE INDEX serving_intervals_beat ON serving_intervals (beat_ms)",
    """
    CREATE TABLE background_failures (
        process text NOT NULL,
        table_id uuid NOT NULL,
        failures integer NOT NULL CHECK (failures >= 1),
        first_failed_ms bigint NOT NULL,
        last_failed_ms bigint NOT NULL,
        retry_at_ms bigint NOT NULL,
        last_error text NOT NULL,
        pending_positions bigint[] NOT NULL DEFAULT '{}',
        PRIMARY KEY (process, table_id)
    )
    """,
)

DOWNGRADE_STATEMENTS = ("DROP TABLE background_failures", "DROP TABLE serving_intervals")


def upgrade() -> None:
    """Create the serving record and the background failures table."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Drop both tables."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

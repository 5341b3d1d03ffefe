"""The append-only event log, processed request ids, deal secrets and projection bookkeeping.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

UPGRADE_STATEMENTS = (
    # The log. position is the global order; (stream_id, version) is the optimistic-concurrency
    # key: a lost race hits this unique constraint instead of overwriting anything.
    """
    CREATE TABLE events (
        position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        stream_id text NOT NULL,
        version integer NOT NULL CHECK (version >= 1),
        type text NOT NULL,
        schema_version integer NOT NULL CHECK (schema_version >= 1),
        data jsonb NOT NULL,
        metadata jsonb NOT NULL,
        hash bytea NOT NULL CHECK (length(hash) = 32),
        CONSTRAINT events_stream_version_key UNIQUE (stream_id, version)
    )
    """,
    # Append-only, enforced by the database for every role, owner included: a statement-level
    # trigger refuses UPDATE, DELETE and TRUNCATE even when no row matches.
    """
    CREATE FUNCTION sapsam_refuse_event_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'sapsam: the events table is append-only; % refused', TG_OP
            USING ERRCODE = 'restrict_violation';
    END
    $$
    """,
    """
    CREATE TRIGGER events_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION sapsam_refuse_event_change()
    """,
    # Readers of the global order must never skip an event that commits late with a lower
    # position. Every insert therefore holds a SHARED transaction-scoped advisory lock from before
    # its rows draw positions (a statement-level BEFORE trigger fires before any identity value is
    # drawn) until it ends. Inserts do not block each other (they still share disk flushes), and
    # a reader can prove a high-water mark safe: see sapsam_safe_position below.
    """
    CREATE FUNCTION sapsam_mark_event_insert() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock_shared(7526466447829417325);
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER events_mark_inserts
    BEFORE INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION sapsam_mark_event_insert()
    """,
    # The proven high-water mark. Read the last position drawn (W), then the transactions holding
    # the insert lock, then wait until each of those has ended. Every position <= W was drawn
    # before W was read, by a transaction that held the lock from before its draw to its end: it
    # has ended (committed or rolled back) or was holding the lock when we looked, and we waited
    # for it. So once this returns, every position <= W is settled, and a read in a NEW statement
    # (a fresh snapshot) of positions <= W sees all that will ever exist there. The caller's own
    # open transaction is not waited for (its rows are visible to it already).
    """
    CREATE FUNCTION sapsam_safe_position() RETURNS bigint
    LANGUAGE plpgsql AS $$
    DECLARE
        high_water bigint;
        in_flight text[];
    BEGIN
        high_water := coalesce(
            pg_sequence_last_value(pg_get_serial_sequence('events', 'position')::regclass), 0);
        SELECT array_agg(virtualtransaction) INTO in_flight FROM pg_locks
        WHERE locktype = 'advisory' AND database = (
                SELECT oid FROM pg_database WHERE datname = current_database())
            AND classid = 1752392027 AND objid = 2093268333 AND objsubid = 1
            AND mode = 'ShareLock' AND granted AND pid <> pg_backend_pid();
        WHILE in_flight IS NOT NULL AND EXISTS (
            SELECT 1 FROM pg_locks
            WHERE locktype = 'advisory' AND classid = 1752392027 AND objid = 2093268333
                AND objsubid = 1 AND mode = 'ShareLock' AND granted
                AND virtualtransaction = ANY (in_flight)
        ) LOOP
            PERFORM pg_sleep(0.0005);
        END LOOP;
        RETURN high_water;
    END
    $$
    """,
    # Idempotency, durably: one row per processed request id, written in the append's transaction.
    """
    CREATE TABLE processed_requests (
        request_id text PRIMARY KEY,
        stream_id text NOT NULL,
        fingerprint bytea NOT NULL,
        first_version integer NOT NULL,
        last_version integer NOT NULL,
        first_position bigint NOT NULL,
        last_position bigint NOT NULL,
        response jsonb,
        processed_at timestamptz NOT NULL DEFAULT now()
    )
    """,
    # Secret seeds of running deals: never in the log, deleted once SeedRevealed is appended.
    """
    CREATE TABLE deal_secrets (
        stream_id text NOT NULL,
        deal_number integer NOT NULL,
        seed bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (stream_id, deal_number)
    )
    """,
    # One row per read model: the hash of its table definitions (a change triggers a rebuild) and
    # the log position its last rebuild replayed to.
    """
    CREATE TABLE projections (
        name text PRIMARY KEY,
        definition_hash bytea NOT NULL,
        position bigint NOT NULL DEFAULT 0,
        rebuilt_at timestamptz NOT NULL DEFAULT now()
    )
    """,
)

DOWNGRADE_STATEMENTS = (
    "DROP TABLE projections",
    "DROP TABLE deal_secrets",
    "DROP TABLE processed_requests",
    "DROP TABLE events",
    "DROP FUNCTION sapsam_safe_position()",
    "DROP FUNCTION sapsam_mark_event_insert()",
    "DROP FUNCTION sapsam_refuse_event_change()",
)


def upgrade() -> None:
    """Create the log and its companions."""
    for statement in UPGRADE_STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    """Drop everything 0001 created, the log included: for tests and fresh installs only."""
    for statement in DOWNGRADE_STATEMENTS:
        op.execute(statement)

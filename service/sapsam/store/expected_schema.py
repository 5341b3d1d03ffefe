"""The schema the code expects the migrations to produce, and a database's schema described alike.

Why apart: applying the migrations (``sapsam.store.schema``) is alembic's; this is the check on
their result, kept as comparable sets (``SchemaDescription``) of the columns, indexes and
triggers the store relies on, so a test can migrate up, down and up again (or write the SQL
offline) and compare the database with ``EXPECTED_SCHEMA`` line by line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg


@dataclass(frozen=True)
class SchemaDescription:
    """The parts of a schema the store relies on, as comparable sets of tuples."""

    columns: frozenset[tuple[str, str, str, bool]]  # table, column, data type, nullable
    indexes: frozenset[tuple[str, str]]  # table, index definition (as pg_indexes prints it)
    triggers: frozenset[tuple[str, str, str, str]]  # table, trigger, timing, event

    def difference(self, other: SchemaDescription) -> list[str]:
        """Readable lines for everything that differs between two descriptions."""
        lines: list[str] = []
        for label, mine, theirs in (
            ("column", self.columns, other.columns),
            ("index", self.indexes, other.indexes),
            ("trigger", self.triggers, other.triggers),
        ):
            lines += [f"only in first: {label} {item}" for item in sorted(mine - theirs)]
            lines += [f"only in second: {label} {item}" for item in sorted(theirs - mine)]
        return lines


# Every table the migrations create (read models are created by the service itself, see
# sapsam.store.projections, and alembic keeps its own alembic_version).
MIGRATED_TABLES = (
    "events",
    "processed_requests",
    "deal_secrets",
    "projections",
    "players",
    "player_tokens",
    "serving_intervals",
    "background_failures",
    "wakeup_listeners",
    "wakeup_streams",
    "merkle_nodes",
    "merkle_leaves",
    "log_checkpoints",
    "checkpoint_cosignatures",
    "player_keys",
)

EXPECTED_SCHEMA = SchemaDescription(
    columns=frozenset(
        {
            ("events", "position", "bigint", False),
            ("events", "stream_id", "text", False),
            ("events", "version", "integer", False),
            ("events", "type", "text", False),
            ("events", "schema_version", "integer", False),
            ("events", "data", "jsonb", False),
            ("events", "metadata", "jsonb", False),
            ("events", "hash", "bytea", False),
            ("processed_requests", "request_id", "text", False),
            ("processed_requests", "stream_id", "text", False),
            ("processed_requests", "fingerprint", "bytea", False),
            ("processed_requests", "first_version", "integer", False),
            ("processed_requests", "last_version", "integer", False),
            ("processed_requests", "first_position", "bigint", False),
            ("processed_requests", "last_position", "bigint", False),
            ("processed_requests", "response", "jsonb", True),
            ("processed_requests", "request_digest", "bytea", True),
            ("processed_requests", "processed_at", "timestamp with time zone", False),
            ("deal_secrets", "stream_id", "text", False),
            ("deal_secrets", "deal_number", "integer", False),
            ("deal_secrets", "seed", "bytea", False),
            ("deal_secrets", "created_at", "timestamp with time zone", False),
            ("projections", "name", "text", False),
            ("projections", "definition_hash", "bytea", False),
            ("projections", "position", "bigint", False),
            ("projections", "rebuilt_at", "timestamp with time zone", False),
            ("players", "player_id", "uuid", False),
            ("players", "display_name", "text", False),
            ("players", "request_id", "text", True),
            ("players", "request_digest", "bytea", True),
            ("players", "created_at", "timestamp with time zone", False),
            ("player_tokens", "token_hash", "bytea", False),
            ("player_tokens", "player_id", "uuid", False),
            ("player_tokens", "issued_at", "timestamp with time zone", False),
            ("player_tokens", "rotated_from", "bytea", True),
            ("player_tokens", "rotation_salt", "bytea", True),
            ("player_tokens", "rotation_request_id", "text", True),
            ("player_tokens", "revoked_at", "timestamp with time zone", True),
            ("player_tokens", "revoked_because", "text", True),
            ("player_tokens", "revocation_request_id", "text", True),
            ("serving_intervals", "server_id", "uuid", False),
            ("serving_intervals", "started_ms", "bigint", False),
            ("serving_intervals", "beat_ms", "bigint", False),
            ("background_failures", "process", "text", False),
            ("background_failures", "table_id", "uuid", False),
            ("background_failures", "failures", "integer", False),
            ("background_failures", "first_failed_ms", "bigint", False),
            ("background_failures", "last_failed_ms", "bigint", False),
            ("background_failures", "retry_at_ms", "bigint", False),
            ("background_failures", "last_error", "text", False),
            ("background_failures", "pending_positions", "ARRAY", False),
            ("wakeup_listeners", "listener", "text", False),
            ("wakeup_listeners", "event_types", "ARRAY", True),
            ("wakeup_listeners", "expires_at", "timestamp with time zone", False),
            ("wakeup_streams", "stream_id", "text", False),
            ("wakeup_streams", "listener", "text", False),
            ("merkle_nodes", "level", "smallint", False),
            ("merkle_nodes", "index", "bigint", False),
            ("merkle_nodes", "hash", "bytea", False),
            ("merkle_leaves", "leaf_index", "bigint", False),
            ("merkle_leaves", "position", "bigint", False),
            ("log_checkpoints", "size", "bigint", False),
            ("log_checkpoints", "root", "bytea", False),
            ("log_checkpoints", "issued_at", "timestamp with time zone", False),
            ("log_checkpoints", "note", "text", False),
            ("checkpoint_cosignatures", "size", "bigint", False),
            ("checkpoint_cosignatures", "witness_key", "text", False),
            ("checkpoint_cosignatures", "line", "text", False),
            ("checkpoint_cosignatures", "cosigned_at", "bigint", False),
            ("checkpoint_cosignatures", "received_at", "timestamp with time zone", False),
            ("player_keys", "public_key", "bytea", False),
            ("player_keys", "player_id", "uuid", False),
            ("player_keys", "proof", "bytea", False),
            ("player_keys", "request_id", "text", False),
            ("player_keys", "created_at", "timestamp with time zone", False),
        }
    ),
    indexes=frozenset(
        {
            ("events", 'CREATE UNIQUE INDEX events_pkey ON public.events USING btree ("position")'),
            (
                "events",
                "CREATE UNIQUE INDEX events_stream_version_key ON public.events "
                "USING btree (stream_id, version)",
            ),
            (
                "processed_requests",
                "CREATE UNIQUE INDEX processed_requests_pkey ON public.processed_requests "
                "USING btree (request_id)",
            ),
            (
                "deal_secrets",
                "CREATE UNIQUE INDEX deal_secrets_pkey ON public.deal_secrets "
                "USING btree (stream_id, deal_number)",
            ),
            (
                "projections",
                "CREATE UNIQUE INDEX projections_pkey ON public.projections USING btree (name)",
            ),
            (
                "players",
                "CREATE UNIQUE INDEX players_pkey ON public.players USING btree (player_id)",
            ),
            (
                "player_tokens",
                "CREATE UNIQUE INDEX player_tokens_pkey ON public.player_tokens "
                "USING btree (token_hash)",
            ),
            (
                "player_tokens",
                "CREATE UNIQUE INDEX player_tokens_player_id_rotation_request_id_key"
                " ON public.player_tokens USING btree (player_id, rotation_request_id)",
            ),
            (
                "player_tokens",
                "CREATE UNIQUE INDEX player_tokens_live_key ON public.player_tokens "
                "USING btree (player_id) WHERE (revoked_at IS NULL)",
            ),
            (
                "players",
                "CREATE UNIQUE INDEX players_request_id_key ON public.players "
                "USING btree (request_id)",
            ),
            (
                "serving_intervals",
                "CREATE UNIQUE INDEX serving_intervals_pkey ON public.serving_intervals "
                "USING btree (server_id, started_ms)",
            ),
            (
                "serving_intervals",
                "CREATE INDEX serving_intervals_beat ON public.serving_intervals "
                "USING btree (beat_ms)",
            ),
            (
                "background_failures",
                "CREATE UNIQUE INDEX background_failures_pkey ON public.background_failures "
                "USING btree (process, table_id)",
            ),
            (
                "player_tokens",
                "CREATE INDEX player_tokens_retired ON public.player_tokens "
                "USING btree (revoked_at) WHERE (revoked_at IS NOT NULL)",
            ),
            (
                "wakeup_listeners",
                "CREATE UNIQUE INDEX wakeup_listeners_pkey ON public.wakeup_listeners "
                "USING btree (listener)",
            ),
            (
                "wakeup_streams",
                "CREATE UNIQUE INDEX wakeup_streams_pkey ON public.wakeup_streams "
                "USING btree (stream_id, listener)",
            ),
            (
                "wakeup_streams",
                "CREATE INDEX wakeup_streams_listener ON public.wakeup_streams "
                "USING btree (listener)",
            ),
            (
                "merkle_nodes",
                "CREATE UNIQUE INDEX merkle_nodes_pkey ON public.merkle_nodes "
                "USING btree (level, index)",
            ),
            (
                "merkle_leaves",
                "CREATE UNIQUE INDEX merkle_leaves_pkey ON public.merkle_leaves "
                "USING btree (leaf_index)",
            ),
            (
                "merkle_leaves",
                "CREATE UNIQUE INDEX merkle_leaves_position_key ON public.merkle_leaves "
                'USING btree ("position")',
            ),
            (
                "log_checkpoints",
                "CREATE UNIQUE INDEX log_checkpoints_pkey ON public.log_checkpoints "
                "USING btree (size)",
            ),
            (
                "checkpoint_cosignatures",
                "CREATE UNIQUE INDEX checkpoint_cosignatures_pkey"
                " ON public.checkpoint_cosignatures USING btree (size, witness_key)",
            ),
            (
                "player_keys",
                "CREATE UNIQUE INDEX player_keys_pkey ON public.player_keys"
                " USING btree (public_key)",
            ),
            (
                "player_keys",
                "CREATE INDEX player_keys_by_player ON public.player_keys"
                " USING btree (player_id, created_at)",
            ),
        }
    ),
    triggers=frozenset(
        {
            ("events", "events_append_only", "BEFORE", "UPDATE"),
            ("events", "events_append_only", "BEFORE", "DELETE"),
            ("events", "events_append_only", "BEFORE", "TRUNCATE"),
            ("events", "events_mark_inserts", "BEFORE", "INSERT"),
            *(
                (table, f"{table}_append_only", "BEFORE", operation)
                for table in (
                    "merkle_nodes",
                    "merkle_leaves",
                    "log_checkpoints",
                    "checkpoint_cosignatures",
                )
                for operation in ("UPDATE", "DELETE", "TRUNCATE")
            ),
        }
    ),
)


def inspect_schema(
    connection: psycopg.Connection[Any], tables: tuple[str, ...] = MIGRATED_TABLES
) -> SchemaDescription:
    """Describe the named tables of the ``public`` schema as the database has them."""
    columns = connection.execute(
        """
        SELECT table_name, column_name, data_type, is_nullable = 'YES'
        FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name = ANY(%s)
        """,
        [list(tables)],
    ).fetchall()
    indexes = connection.execute(
        """
        SELECT tablename, indexdef FROM pg_indexes
        WHERE schemaname = 'public' AND tablename = ANY(%s)
        """,
        [list(tables)],
    ).fetchall()
    # information_schema.triggers omits TRUNCATE triggers, so read pg_trigger directly: tgtype's
    # bits say BEFORE (2) and which of INSERT (4), DELETE (8), UPDATE (16), TRUNCATE (32).
    trigger_rows = connection.execute(
        """
        SELECT c.relname, t.tgname, t.tgtype
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relname = ANY(%s) AND NOT t.tgisinternal
        """,
        [list(tables)],
    ).fetchall()
    triggers: set[tuple[str, str, str, str]] = set()
    for table, name, trigger_type in trigger_rows:
        timing = "BEFORE" if trigger_type & 2 else ("INSTEAD OF" if trigger_type & 64 else "AFTER")
        for bit, event in ((4, "INSERT"), (8, "DELETE"), (16, "UPDATE"), (32, "TRUNCATE")):
            if trigger_type & bit:
                triggers.add((table, name, timing, event))
    return SchemaDescription(
        columns=frozenset((str(t), str(c), str(d), bool(n)) for t, c, d, n in columns),
        indexes=frozenset((str(t), str(d)) for t, d in indexes),
        triggers=frozenset(triggers),
    )

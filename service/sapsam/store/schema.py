"""Applying the alembic migrations, and the schema the code expects them to produce.

The migrations live in the repository's top-level ``migrations/`` (``env.py``, ``versions/``) and
ship inside the wheel as ``sapsam/migrations`` (``service/sapsam/migrations`` is a symbolic link to
them, which the build follows), so an installed sapsam can migrate a database without a source
checkout; ``alembic.ini`` at the repository root points at the same folder for developers who run
``alembic`` by hand.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import psycopg
from psycopg import errors, sql

from sapsam.log.records import DatabaseOpenError

if TYPE_CHECKING:
    from alembic.config import Config

# alembic and SQLAlchemy take ~0.4 s to import: they are imported where a migration runs, so a
# command that only checks the revision (``upgrade_unless_current`` on a current database) does
# without them.

# service/sapsam/migrations links to the top-level migrations/ in a checkout; a wheel holds the
# files themselves there.
MIGRATIONS_FOLDER = Path(__file__).resolve().parents[1] / "migrations"
HEAD = "head"
BASE = "base"


def alembic_config(database_url: str, output: TextIO | None = None) -> Config:
    """An alembic configuration for the packaged migrations and this database (offline mode
    writes its SQL to ``output``)."""
    from alembic.config import Config

    config = Config(output_buffer=output)
    config.set_main_option("script_location", str(MIGRATIONS_FOLDER))
    config.attributes["database_url"] = database_url
    return config


class SchemaAccessError(DatabaseOpenError):
    """The connecting role may not read the schema's revision, or may not migrate it."""


def upgrade(database_url: str, revision: str = HEAD) -> None:
    """Apply migrations up to ``revision`` (default: the latest).

    Raises ``SchemaAccessError`` when the role may not change the schema.
    """
    from alembic import command

    with _migrating(database_url):
        command.upgrade(alembic_config(database_url), revision)


def upgrade_sql(output: TextIO, revision: str = HEAD, start: str | None = None) -> None:
    """Write the SQL that upgrades a database at ``start`` (default: an empty one) to
    ``revision``, without contacting any database: alembic's offline mode, for review or for a
    migration job that runs ``psql``. The text is one transaction that first takes the lock
    every migration run holds (``migrations/env.py``)."""
    from alembic import command

    target = revision if start is None else f"{start}:{revision}"
    command.upgrade(alembic_config("", output), target, sql=True)


def downgrade(database_url: str, revision: str = BASE) -> None:
    """Undo migrations down to ``revision`` (default: an empty schema; for tests)."""
    from alembic import command

    with _migrating(database_url):
        command.downgrade(alembic_config(database_url), revision)


@contextmanager
def _migrating(database_url: str) -> Iterator[None]:
    """Turn a refused privilege during a migration into a ``SchemaAccessError`` that says what
    to do; the migration's transaction is rolled back, so nothing is half done."""
    try:
        yield
    except Exception as error:
        # alembic runs on SQLAlchemy, which wraps the driver's error as ``orig``.
        if not isinstance(getattr(error, "orig", error), errors.InsufficientPrivilege):
            raise
        raise SchemaAccessError(
            f"the database is at schema revision {_revision_or_none(database_url)} and this role"
            " may not migrate it: run `sapsam migrate` as the schema owner"
        ) from error


def _revision_or_none(database_url: str) -> str:
    try:
        return current_revision(database_url) or "none"
    except psycopg.Error:
        return "unknown"


def upgrade_unless_current(database_url: str) -> None:
    """Apply the migrations unless the database is already at the latest revision.

    What ``sapsam serve`` runs at start. A database at the latest revision is left alone, so the
    least-privilege service role (``grant_service_role``), which may read the revision but not
    change the schema, can start the server; an older one is upgraded. Raises
    ``SchemaAccessError`` saying what to do when the role may not read or upgrade the schema.
    """
    try:
        current = current_revision(database_url)
    except errors.InsufficientPrivilege as error:
        raise SchemaAccessError(
            "this role may not read the schema revision (table alembic_version): grant it SELECT"
            " there (sapsam.store.schema.grant_service_role does), or connect as the schema owner"
        ) from error
    if current != head_revision():
        upgrade(database_url)


def head_revision() -> str:
    """The latest revision the packaged migrations define: the one no other revision follows.

    Read from the revision files' ``revision`` and ``down_revision`` assignments rather than with
    alembic's ``ScriptDirectory``, which would cost the import of alembic and SQLAlchemy;
    tests/store/test_store_schema.py checks that both agree. A linear history is assumed (one
    head), as alembic's ``upgrade head`` needs too.
    """
    revisions: dict[str, str | None] = {}
    for path in sorted((MIGRATIONS_FOLDER / "versions").glob("*.py")):
        assigned = _module_assignments(path)
        if "revision" in assigned:
            revisions[str(assigned["revision"])] = assigned.get("down_revision")
    followed = set(revisions.values())
    heads = [revision for revision in revisions if revision not in followed]
    if len(heads) != 1:
        raise RuntimeError(f"expected one head revision in {MIGRATIONS_FOLDER}, found {heads}")
    return heads[0]


def _module_assignments(path: Path) -> dict[str, str | None]:
    """The module-level ``name = "literal"`` (or ``name: str = "literal"``) string assignments."""
    found: dict[str, str | None] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target, value = node.target.id, node.value
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            target, value = node.targets[0].id, node.value
        else:
            continue
        literal = value.value if isinstance(value, ast.Constant) else ...
        if literal is None or isinstance(literal, str):
            found[target] = literal
    return found


def current_revision(database_url: str) -> str | None:
    """The revision the database is at, or None when it was never migrated."""
    with psycopg.connect(database_url) as connection:
        exists = connection.execute("SELECT to_regclass('alembic_version') IS NOT NULL").fetchone()
        if not exists or not exists[0]:
            return None
        row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
        return str(row[0]) if row else None


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


def grant_service_role(connection: psycopg.Connection[Any], role: str) -> None:
    """Give ``role`` what the service needs and nothing that could rewrite history.

    The role may read and append events (never UPDATE, DELETE or TRUNCATE them: privileges refuse
    what the triggers also refuse, and as a non-owner it cannot disable the triggers), record
    request ids, keep and delete deal secrets, register and look up players, their tokens
    (rotate and revoke them, never delete them) and their public keys (never changed), read the
    schema revision, and maintain its read models. Run it as the owner of the schema after
    ``sapsam migrate``; docs/store.md shows the whole role setup.
    """
    name = sql.Identifier(role)
    statements = (
        sql.SQL(
            "REVOKE ALL ON events, processed_requests, deal_secrets, projections, players,"
            " player_tokens, serving_intervals, background_failures, wakeup_listeners,"
            " wakeup_streams, merkle_nodes, merkle_leaves, log_checkpoints,"
            " checkpoint_cosignatures, player_keys, alembic_version FROM {}"
        ),
        sql.SQL("GRANT SELECT, INSERT ON events, processed_requests TO {}"),
        # The server checks the schema revision at start (it migrates nothing when current).
        sql.SQL("GRANT SELECT ON alembic_version TO {}"),
        # Players register (a row each, never changed) and are looked up by their token's hash.
        sql.SQL("GRANT SELECT, INSERT ON players TO {}"),
        # Their tokens: issued, looked up, and marked rotated or revoked (never deleted).
        sql.SQL("GRANT SELECT, INSERT, UPDATE ON player_tokens TO {}"),
        # Their public keys: registered (a row each, never changed) and looked up.
        sql.SQL("GRANT SELECT, INSERT ON player_keys TO {}"),
        # Global readers prove their high-water mark from the identity sequence's last value.
        sql.SQL("GRANT SELECT ON SEQUENCE events_position_seq TO {}"),
        sql.SQL("GRANT SELECT, INSERT, DELETE ON deal_secrets TO {}"),
        sql.SQL("GRANT SELECT, INSERT, UPDATE ON projections TO {}"),
        # Heartbeats of the serving processes, and the tables background work fails on.
        sql.SQL("GRANT SELECT, INSERT, UPDATE ON serving_intervals TO {}"),
        sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON background_failures TO {}"),
        # Listeners say which wake-ups they want; appends read it (sapsam.store.subscriptions).
        sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON wakeup_listeners, wakeup_streams TO {}"),
        # The transparency log's tree and checkpoints: appended by the checkpointer, never changed.
        sql.SQL("GRANT SELECT, INSERT ON merkle_nodes, merkle_leaves, log_checkpoints TO {}"),
        # Witnesses' cosignatures of checkpoints: kept as sent, never changed.
        sql.SQL("GRANT SELECT, INSERT ON checkpoint_cosignatures TO {}"),
        # Read models are created and rebuilt by the service (see sapsam.store.projections).
        sql.SQL("GRANT CREATE ON SCHEMA public TO {}"),
    )
    for statement in statements:
        connection.execute(statement.format(name))

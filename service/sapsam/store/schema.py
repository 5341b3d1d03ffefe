"""Applying the alembic migrations, and the grants of the role the service runs as.

The migrations live in the repository's top-level ``migrations/`` (``env.py``, ``versions/``) and
ship inside the wheel as ``sapsam/migrations`` (``service/sapsam/migrations`` is a symbolic link to
them, which the build follows), so an installed sapsam can migrate a database without a source
checkout; ``alembic.ini`` at the repository root points at the same folder for developers who run
``alembic`` by hand. The schema the code expects them to produce, and the description of a
database's to compare with it, are ``sapsam.store.expected_schema``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
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

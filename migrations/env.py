"""Alembic environment for sapsam: migrations over a psycopg 3 connection, or as SQL text.

The database is taken from, in order: ``config.attributes["database_url"]`` (set by
``sapsam.store.schema``), the ``sqlalchemy.url`` option, or the ``DATABASE_URL`` environment
variable. Any libpq connection string works (URL or ``key=value``), including the Unix-socket URLs
of the embedded server, because the connection is opened by psycopg itself rather than parsed by
SQLAlchemy.

Several processes may migrate at once (every replica of ``sapsam serve`` migrates at start, and a
migration Job may run beside them): each run takes a transaction-scoped advisory lock
(:data:`MIGRATION_LOCK`) before alembic reads the database's revision, so the runs queue, and a
run that waited finds the schema current and does nothing. Offline mode (``sapsam migrate
--sql``) prints the same statements, the lock included, for review or for ``psql``.
"""

from __future__ import annotations

import os

import psycopg
from alembic import context
from sqlalchemy import create_engine, pool

MIGRATION_LOCK = 7526466447829417340
"""The advisory lock key every migration run holds; sapsam's other keys: ...325 (appends),
...326 (the transparency checkpointer), ...399 (the tournament follower)."""
LOCK_STATEMENT = f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})"

config = context.config


def _database_url() -> str:
    url = config.attributes.get("database_url") or config.get_main_option("sqlalchemy.url")
    url = url or os.environ.get("DATABASE_URL")
    if not url:
        raise RuntimeError("no database to migrate: set DATABASE_URL or pass a database url")
    return str(url)


def run_migrations_online() -> None:
    """Run every pending revision in one transaction, under the migration lock."""
    url = _database_url()
    engine = create_engine(
        "postgresql+psycopg://",
        creator=lambda: psycopg.connect(url),
        poolclass=pool.NullPool,
    )
    with engine.connect() as connection:
        context.configure(connection=connection, transactional_ddl=True)
        with context.begin_transaction():
            # Before run_migrations reads alembic_version: a run that waited here reads the
            # revision its predecessor committed (READ COMMITTED: each statement a new snapshot).
            connection.exec_driver_sql(LOCK_STATEMENT)
            context.run_migrations()
    engine.dispose()


def run_migrations_offline() -> None:
    """Print the pending revisions' SQL (no database is contacted), in one transaction."""
    context.configure(
        url="postgresql+psycopg://",
        transactional_ddl=True,
        literal_binds=True,
        # pyformat (psycopg's) would print every % of a statement as %%.
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.execute(LOCK_STATEMENT)
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

"""Alembic environment for sapsam: online migrations only, over a psycopg 3 connection.

The database is taken from, in order: ``config.attributes["database_url"]`` (set by
``sapsam.store.schema``), the ``sqlalchemy.url`` option, or the ``DATABASE_URL`` environment
variable. Any libpq connection string works (URL or ``key=value``), including the Unix-socket URLs
of the embedded server, because the connection is opened by psycopg itself rather than parsed by
SQLAlchemy.
"""

from __future__ import annotations

import os

import psycopg
from alembic import context
from sqlalchemy import create_engine, pool

config = context.config


def _database_url() -> str:
    url = config.attributes.get("database_url") or config.get_main_option("sqlalchemy.url")
    url = url or os.environ.get("DATABASE_URL")
    if not url:
        raise RuntimeError("no database to migrate: set DATABASE_URL or pass a database url")
    return str(url)


def run_migrations_online() -> None:
    """Run every pending revision in one transaction per migration run."""
    url = _database_url()
    engine = create_engine(
        "postgresql+psycopg://",
        creator=lambda: psycopg.connect(url),
        poolclass=pool.NullPool,
    )
    with engine.connect() as connection:
        context.configure(connection=connection, transactional_ddl=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    raise RuntimeError("sapsam migrations run online only")
run_migrations_online()

"""A migrated scratch database for a benchmark: DATABASE_URL's server, or a private embedded one.

Shared by the benchmark scripts (run as ``python bench/<name>.py``, so this folder is on the path).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg import sql

from sapsam.store import schema
from sapsam.store.embedded import database_in, start_embedded


@contextmanager
def scratch_database(prefix: str) -> Iterator[tuple[str, str]]:
    """A fresh migrated database, dropped afterwards: (URL, what server it is on)."""
    external = os.environ.get("DATABASE_URL")
    folder: Path | None = None
    server = None
    if external:
        server_url, label = external, "DATABASE_URL"
    else:
        folder = Path(tempfile.mkdtemp(prefix=f"{prefix}-"))
        folder.chmod(0o755)
        server = start_embedded(folder, delete_on_stop=True)
        server_url, label = server.server_url, f"embedded ({server.backend})"
    name = f"{prefix.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = database_in(server_url, name)
    try:
        schema.upgrade(url)
        with psycopg.connect(url, autocommit=True) as connection:
            version = connection.execute("SHOW server_version").fetchone()
            fsync = connection.execute("SHOW fsync").fetchone()
        server_version = version[0] if version else "?"
        yield url, f"{label}, PostgreSQL {server_version}, fsync {fsync[0] if fsync else '?'}"
    finally:
        with psycopg.connect(server_url, autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
        if server is not None:
            server.stop()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

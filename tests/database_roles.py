"""Test databases seen through another PostgreSQL role, the way an operator would set one up."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

Grant = Callable[[psycopg.Connection[Any], str], None]


@contextmanager
def new_role(database_url: str, grant: Grant | None = None) -> Iterator[tuple[str, str]]:
    """A fresh role given what ``grant(admin_connection, role)`` grants, and a URL on the same
    database whose every connection acts as that role; the role and what it owns are dropped
    afterwards."""
    role = f"sapsam_role_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {}").format(sql.Identifier(role)))
        if grant is not None:
            grant(admin, role)
    try:
        yield role, make_conninfo(database_url, options=f"-c role={role}")
    finally:
        with psycopg.connect(database_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def read_only(connection: psycopg.Connection[Any], role: str) -> None:
    """docs/store.md's read-only role: the log and its sequence."""
    name = sql.Identifier(role)
    connection.execute(sql.SQL("GRANT SELECT ON events TO {}").format(name))
    connection.execute(sql.SQL("GRANT SELECT ON SEQUENCE events_position_seq TO {}").format(name))

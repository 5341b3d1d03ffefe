"""Migration 0012 on a database already in service: the role that serves it, granted what it
needed at revision 0011, still appends (each append reads ``wakeup_streams``) and lists its
streams afterwards; a role that could not write the listeners' table gets nothing; the downgrade
takes the table away and leaves revision 0011."""

from __future__ import annotations

from typing import Any

import psycopg
from database_roles import new_role
from psycopg import sql

from sapsam.log.records import NewEvent
from sapsam.store import schema
from sapsam.store.appends import append
from sapsam.store.subscriptions import listen_for_streams, unlisten, watch_streams


def _service_at_0011(connection: psycopg.Connection[Any], role: str) -> None:
    """What ``grant_service_role`` gave at revision 0011 that appends and listeners use."""
    name = sql.Identifier(role)
    for statement in (
        "GRANT SELECT, INSERT ON events, processed_requests TO {}",
        "GRANT SELECT ON SEQUENCE events_position_seq TO {}",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON wakeup_listeners TO {}",
    ):
        connection.execute(sql.SQL(statement).format(name))


def _privileges(url: str, role: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(
            "SELECT privilege FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE'])"
            " AS privilege WHERE has_table_privilege(%s, 'wakeup_streams', privilege)",
            [role],
        )
        return {str(row[0]) for row in cursor.fetchall()}


async def test_the_serving_role_keeps_appending_across_migration_0012(
    empty_database_url: str,
) -> None:
    schema.upgrade(empty_database_url, "0011")
    with (
        new_role(empty_database_url, _service_at_0011) as (service, service_url),
        new_role(empty_database_url) as (stranger, _),
    ):
        schema.upgrade(empty_database_url)
        assert _privileges(empty_database_url, service) == {"SELECT", "INSERT", "UPDATE", "DELETE"}
        assert _privileges(empty_database_url, stranger) == set()
        async with (
            await psycopg.AsyncConnection.connect(service_url, autocommit=True) as feed,
            await psycopg.AsyncConnection.connect(service_url, autocommit=True) as writer,
        ):
            await listen_for_streams(feed)
            assert await watch_streams(feed, ["table-x"], []) == {"table-x": 0}
            await append(writer, "table-x", 0, [NewEvent("Tick", {})], "r1")
            await unlisten(feed)
        schema.downgrade(empty_database_url, "0011")
        assert schema.current_revision(empty_database_url) == "0011"
        with psycopg.connect(empty_database_url, autocommit=True) as connection:
            cursor = connection.execute("SELECT to_regclass('wakeup_streams') IS NULL")
            assert cursor.fetchone() == (True,)

"""The log is append-only, and an edit made behind the database's back is caught by the chain."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from database_roles import new_role
from psycopg import errors

from sapsam.log.chain import GENESIS_HASH, event_hash, verify_stream_chain
from sapsam.log.records import NewEvent
from sapsam.store.appends import append
from sapsam.store.reads import read_all, read_stream
from sapsam.store.schema import grant_service_role


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        await append(
            opened,
            "table-1",
            0,
            [
                NewEvent("TableCreated", {"seats": 4}),
                NewEvent("PlayerSeated", {"seat": 0, "player": "ann"}),
                NewEvent("PlayerSeated", {"seat": 1, "player": "bob"}),
            ],
            "r1",
        )
        await append(opened, "table-2", 0, [NewEvent("TableCreated", {"seats": 2})], "r2")
        yield opened


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET data = '{\"seats\": 3}' WHERE stream_id = 'table-1' AND version = 1",
        "UPDATE events SET type = type WHERE false",
        "DELETE FROM events WHERE stream_id = 'table-2'",
        "DELETE FROM events",
        "TRUNCATE events",
    ],
)
async def test_update_delete_and_truncate_are_refused_by_the_database(
    connection: psycopg.AsyncConnection[Any], statement: str
) -> None:
    before = await read_all(connection)
    with pytest.raises(errors.RestrictViolation, match="append-only"):
        await connection.execute(statement)
    assert await read_all(connection) == before


async def test_the_stored_chain_verifies(connection: psycopg.AsyncConnection[Any]) -> None:
    report = verify_stream_chain(await read_stream(connection, "table-1"))
    assert report.intact
    assert report.events_checked == 3
    assert report.first_broken_version is None


async def test_an_edit_with_the_triggers_disabled_is_caught_by_the_chain(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    # What a superuser could do: switch the guard off, edit a row, switch it back on.
    async with connection.transaction():
        await connection.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        await connection.execute(
            "UPDATE events SET data = jsonb_set(data, '{player}', '\"eve\"')"
            " WHERE stream_id = 'table-1' AND version = 2"
        )
        await connection.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")
    stored = await read_stream(connection, "table-1")
    assert stored[1].data["player"] == "eve"
    report = verify_stream_chain(stored)
    assert not report.intact
    assert report.first_broken_version == 2
    assert verify_stream_chain(await read_stream(connection, "table-2")).intact


async def test_an_edit_that_also_rewrites_its_hash_breaks_the_next_link(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    stored = await read_stream(connection, "table-1")
    forged = event_hash(stored[0].hash, dataclasses.replace(stored[1], data={}))
    async with connection.transaction():
        await connection.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        await connection.execute(
            "UPDATE events SET data = '{}', hash = %s WHERE stream_id = 'table-1' AND version = 2",
            [forged],
        )
        await connection.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")
    report = verify_stream_chain(await read_stream(connection, "table-1"))
    assert report.first_broken_version == 3


async def test_a_deleted_event_shows_as_a_gap(connection: psycopg.AsyncConnection[Any]) -> None:
    async with connection.transaction():
        await connection.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        await connection.execute("DELETE FROM events WHERE stream_id = 'table-1' AND version = 2")
        await connection.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")
    report = verify_stream_chain(await read_stream(connection, "table-1"))
    assert report.first_broken_version == 3
    assert any("where 2 was expected" in problem.reason for problem in report.problems)


async def test_the_first_event_chains_from_the_genesis_hash(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    first = (await read_stream(connection, "table-2"))[0]
    assert first.hash == event_hash(GENESIS_HASH, first)


async def test_the_service_role_appends_but_cannot_rewrite_or_unguard_the_log(
    connection: psycopg.AsyncConnection[Any], database_url: str
) -> None:
    with (
        new_role(database_url, grant_service_role) as (_, service_url),
    ):
        service = await psycopg.AsyncConnection.connect(service_url, autocommit=True)
        result = await append(service, "table-1", 3, [NewEvent("PlayerSeated", {"seat": 2})], "r9")
        assert result.last_version == 4
        assert len(await read_all(service)) == 5
        for statement in (
            "UPDATE events SET data = '{}'",
            "DELETE FROM events",
            "TRUNCATE events",
            "ALTER TABLE events DISABLE TRIGGER events_append_only",
        ):
            with pytest.raises(errors.InsufficientPrivilege):
                await service.execute(statement)
        await service.close()
    assert verify_stream_chain(await read_stream(connection, "table-1")).intact

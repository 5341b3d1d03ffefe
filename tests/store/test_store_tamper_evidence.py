"""The log is append-only, and an edit made behind the database's back is caught by the chain."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

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
def connection(database_url: str) -> Iterator[psycopg.Connection[object]]:
    with psycopg.connect(database_url, autocommit=True) as opened:
        append(
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
        append(opened, "table-2", 0, [NewEvent("TableCreated", {"seats": 2})], "r2")
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
def test_update_delete_and_truncate_are_refused_by_the_database(
    connection: psycopg.Connection[object], statement: str
) -> None:
    before = read_all(connection)
    with pytest.raises(errors.RestrictViolation, match="append-only"):
        connection.execute(statement)  # type: ignore[arg-type]
    assert read_all(connection) == before


def test_the_stored_chain_verifies(connection: psycopg.Connection[object]) -> None:
    report = verify_stream_chain(read_stream(connection, "table-1"))
    assert report.intact
    assert report.events_checked == 3
    assert report.first_broken_version is None


def test_an_edit_with_the_triggers_disabled_is_caught_by_the_chain(
    connection: psycopg.Connection[object],
) -> None:
    # What a superuser could do: switch the guard off, edit a row, switch it back on.
    with connection.transaction():
        connection.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        connection.execute(
            "UPDATE events SET data = jsonb_set(data, '{player}', '\"eve\"')"
            " WHERE stream_id = 'table-1' AND version = 2"
        )
        connection.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")
    stored = read_stream(connection, "table-1")
    assert stored[1].data["player"] == "eve"
    report = verify_stream_chain(stored)
    assert not report.intact
    assert report.first_broken_version == 2
    assert verify_stream_chain(read_stream(connection, "table-2")).intact


def test_an_edit_that_also_rewrites_its_hash_breaks_the_next_link(
    connection: psycopg.Connection[object],
) -> None:
    stored = read_stream(connection, "table-1")
    forged = event_hash(stored[0].hash, dataclasses.replace(stored[1], data={}))
    with connection.transaction():
        connection.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        connection.execute(
            "UPDATE events SET data = '{}', hash = %s WHERE stream_id = 'table-1' AND version = 2",
            [forged],
        )
        connection.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")
    report = verify_stream_chain(read_stream(connection, "table-1"))
    assert report.first_broken_version == 3


def test_a_deleted_event_shows_as_a_gap(connection: psycopg.Connection[object]) -> None:
    with connection.transaction():
        connection.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        connection.execute("DELETE FROM events WHERE stream_id = 'table-1' AND version = 2")
        connection.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")
    report = verify_stream_chain(read_stream(connection, "table-1"))
    assert report.first_broken_version == 3
    assert any("where 2 was expected" in problem.reason for problem in report.problems)


def test_the_first_event_chains_from_the_genesis_hash(
    connection: psycopg.Connection[object],
) -> None:
    first = read_stream(connection, "table-2")[0]
    assert first.hash == event_hash(GENESIS_HASH, first)


def test_the_service_role_appends_but_cannot_rewrite_or_unguard_the_log(
    connection: psycopg.Connection[object], database_url: str
) -> None:
    with (
        new_role(database_url, grant_service_role) as (_, service_url),
        psycopg.connect(service_url, autocommit=True) as service,
    ):
        result = append(service, "table-1", 3, [NewEvent("PlayerSeated", {"seat": 2})], "r9")
        assert result.last_version == 4
        assert len(read_all(service)) == 5
        for statement in (
            "UPDATE events SET data = '{}'",
            "DELETE FROM events",
            "TRUNCATE events",
            "ALTER TABLE events DISABLE TRIGGER events_append_only",
        ):
            with pytest.raises(errors.InsufficientPrivilege):
                service.execute(statement)  # type: ignore[arg-type]
    assert verify_stream_chain(read_stream(connection, "table-1")).intact

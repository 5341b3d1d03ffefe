"""Read models: updated in the append's transaction, rebuilt from the log identical row for row."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from store_sample_projectors import PROJECTORS, STREAM_SUMMARY, TYPE_COUNTS, apply_type_count

from sapsam.log.records import NewEvent, RecordedEvent
from sapsam.store.appends import append
from sapsam.store.event_store import EventStore
from sapsam.store.projections import (
    SqlProjector,
    definition_hash,
    prepare_projections,
    rebuild_projections,
)

Connection = psycopg.Connection[object]


def dump(connection: Connection) -> dict[str, list[tuple[object, ...]]]:
    return {
        "stream_summaries": connection.execute(
            "SELECT * FROM stream_summaries ORDER BY stream_id"
        ).fetchall(),
        "type_counts": connection.execute("SELECT * FROM type_counts ORDER BY type").fetchall(),
    }


def positions(connection: Connection) -> dict[str, int]:
    rows = connection.execute("SELECT name, position FROM projections").fetchall()
    return {str(name): int(position) for name, position in rows}


@pytest.fixture
def connection(database_url: str) -> Iterator[Connection]:
    """A synchronous connection: the rebuild's (the projectors prepared)."""
    with psycopg.connect(database_url, autocommit=True) as opened:
        prepare_projections(opened, PROJECTORS)
        yield opened


@pytest.fixture
async def writer(
    database_url: str, connection: Connection
) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """An asynchronous connection: the appends' (after the projectors were prepared)."""
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        yield opened


async def fill(writer: psycopg.AsyncConnection[Any]) -> None:
    for index in range(5):
        stream = f"s{index % 3}"
        cursor = await writer.execute(
            "SELECT coalesce(max(version), 0) FROM events WHERE stream_id = %s", [stream]
        )
        version = await cursor.fetchone()
        assert version is not None
        await append(
            writer,
            stream,
            int(version[0]),
            [NewEvent("Scored", {"value": index * 7}), NewEvent("Noted", {"text": "x"})],
            f"fill-{index}",
            projectors=PROJECTORS,
        )


async def test_read_models_change_in_the_same_transaction_as_the_append(
    connection: Connection, writer: psycopg.AsyncConnection[Any]
) -> None:
    await append(writer, "s", 0, [NewEvent("Scored", {"value": 5})], "r1", projectors=PROJECTORS)
    assert dump(connection)["stream_summaries"] == [("s", 1, 1, "Scored", 5)]


async def test_a_failing_projector_rolls_the_append_back(
    connection: Connection, writer: psycopg.AsyncConnection[Any]
) -> None:
    def broken(_connection: object, _event: RecordedEvent) -> None:
        raise RuntimeError("read model bug")

    broken_projector = SqlProjector("broken", (), (), broken)
    with pytest.raises(RuntimeError):
        await append(
            writer,
            "s",
            0,
            [NewEvent("Scored", {"value": 5})],
            "r1",
            projectors=(*PROJECTORS, broken_projector),
        )
    assert dump(connection)["stream_summaries"] == []
    assert connection.execute("SELECT count(*) FROM events").fetchone() == (0,)


async def test_rebuilding_gives_identical_rows(
    connection: Connection, writer: psycopg.AsyncConnection[Any]
) -> None:
    await fill(writer)
    before = dump(connection)
    assert len(before["stream_summaries"]) == 3
    reports = rebuild_projections(connection, PROJECTORS)
    assert [report.events_applied for report in reports] == [10, 10]
    assert dump(connection) == before
    assert set(positions(connection).values()) == {reports[0].position}


async def test_rebuild_repairs_a_damaged_read_model(
    connection: Connection, writer: psycopg.AsyncConnection[Any]
) -> None:
    await fill(writer)
    before = dump(connection)
    connection.execute("DELETE FROM stream_summaries WHERE stream_id = 's1'")
    connection.execute("UPDATE type_counts SET count = 0")
    rebuild_projections(connection, PROJECTORS)
    assert dump(connection) == before


async def test_prepare_leaves_current_projectors_alone_and_builds_new_ones(
    connection: Connection, writer: psycopg.AsyncConnection[Any]
) -> None:
    await fill(writer)
    before = dump(connection)
    reports = {report.name: report for report in prepare_projections(connection, PROJECTORS)}
    assert {report.action for report in reports.values()} == {"current"}
    assert dump(connection) == before
    extra = SqlProjector(
        "type_counts_copy",
        ("type_counts_copy",),
        (
            "CREATE TABLE type_counts_copy (type text PRIMARY KEY, count integer NOT NULL,"
            " last_position bigint NOT NULL)",
        ),
        lambda inner, event: inner.execute(
            "INSERT INTO type_counts_copy VALUES (%s, 1, %s) ON CONFLICT (type) DO UPDATE"
            " SET count = type_counts_copy.count + 1, last_position = excluded.last_position",
            [event.type, event.position],
        ),
    )
    reports = {r.name: r for r in prepare_projections(connection, (*PROJECTORS, extra))}
    assert reports["type_counts_copy"].action == "rebuilt"
    assert reports["type_counts_copy"].events_applied == 10
    copied = connection.execute("SELECT * FROM type_counts_copy ORDER BY type").fetchall()
    assert copied == before["type_counts"]


async def test_prepare_rebuilds_a_projector_whose_definition_changed(
    connection: Connection, writer: psycopg.AsyncConnection[Any]
) -> None:
    await fill(writer)
    changed = SqlProjector(
        name="type_counts",
        tables=("type_counts",),
        create_statements=(
            "CREATE TABLE type_counts (type text PRIMARY KEY, count integer NOT NULL,"
            " last_position bigint NOT NULL, note text)",
        ),
        apply_event=apply_type_count,
    )
    assert definition_hash(changed) != definition_hash(TYPE_COUNTS)
    reports = {r.name: r for r in prepare_projections(connection, (STREAM_SUMMARY, changed))}
    assert reports["type_counts"].action == "rebuilt"
    assert reports["stream_summary"].action == "current"
    columns = connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'type_counts'"
    ).fetchall()
    assert ("note",) in columns
    assert connection.execute("SELECT sum(count) FROM type_counts").fetchone() == (10,)


def test_projectors_may_not_own_the_log(connection: Connection) -> None:
    hostile = SqlProjector("hostile", ("events",), (), apply_type_count)
    with pytest.raises(ValueError, match="store's own tables"):
        rebuild_projections(connection, [hostile])
    assert connection.execute("SELECT to_regclass('events') IS NOT NULL").fetchone() == (True,)


async def test_the_event_store_applies_its_registered_projectors(database_url: str) -> None:
    store = await EventStore.connect(database_url, projectors=PROJECTORS)
    try:
        assert {report.action for report in store.prepare()} == {"rebuilt"}
        await store.append("s", 0, [NewEvent("Scored", {"value": 3})], "r1")
        with psycopg.connect(database_url) as connection:
            assert dump(connection)["type_counts"][0][:2] == ("Scored", 1)
    finally:
        await store.close()


async def test_the_rebuild_command_replays_the_log_into_registered_read_models(
    connection: Connection, writer: psycopg.AsyncConnection[Any], database_url: str
) -> None:
    await fill(writer)
    before = dump(connection)
    connection.execute("TRUNCATE stream_summaries, type_counts")
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "sapsam.cli",
            "projections",
            "rebuild",
            "--database-url",
            database_url,
            "--module",
            "store_sample_projectors",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                filter(None, (str(Path(__file__).parent), os.environ.get("PYTHONPATH")))
            ),
        },
    )
    report = json.loads(completed.stdout)
    # The game's own read models are registered too; the sample ones come from --module.
    ours = [e for e in report["projections"] if e["name"] in ("stream_summary", "type_counts")]
    assert [entry["name"] for entry in ours] == ["stream_summary", "type_counts"]
    assert {entry["events"] for entry in ours} == {10}
    assert dump(connection) == before

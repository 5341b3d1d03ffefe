"""Appending and reading: versions, positions, metadata, optimistic concurrency, idempotency."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import timedelta

import psycopg
import pytest

from sapsam.log.chain import verify_stream_chain
from sapsam.log.records import AppendResult, ConcurrencyConflict, NewEvent, RequestIdReused
from sapsam.store import stream_heads
from sapsam.store.appends import append
from sapsam.store.event_store import EventStore
from sapsam.store.processed_requests import find_processed_request, prune_processed_requests
from sapsam.store.reads import (
    last_position,
    read_all,
    read_stream,
    read_stream_tails,
    stream_version,
)


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[psycopg.AsyncConnection[object]]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        yield opened


def events(*names: str) -> list[NewEvent]:
    return [NewEvent(name, {"name": name, "n": index}) for index, name in enumerate(names)]


async def test_a_new_stream_starts_at_version_one_and_reads_back_what_was_written(
    connection: psycopg.AsyncConnection[object],
) -> None:
    result = await append(
        connection, "table-a", 0, events("Created", "Seated"), "r1", actor="alice"
    )
    assert (result.first_version, result.last_version, result.replayed) == (1, 2, False)
    stored = await read_stream(connection, "table-a")
    assert [(e.version, e.type, e.data) for e in stored] == [
        (1, "Created", {"name": "Created", "n": 0}),
        (2, "Seated", {"name": "Seated", "n": 1}),
    ]
    assert stored[0].metadata["request_id"] == "r1"
    assert stored[0].metadata["actor"] == "alice"
    assert str(stored[0].metadata["recorded_at"]).endswith("Z")
    assert [e.position for e in stored] == [result.first_position, result.last_position]
    assert stored == list(result.events)
    assert await stream_version(connection, "table-a") == 2
    assert await stream_version(connection, "table-none") == 0


async def test_reading_a_stream_from_a_version(connection: psycopg.AsyncConnection[object]) -> None:
    await append(connection, "s", 0, events("A", "B", "C", "D"), "r1")
    assert [e.type for e in await read_stream(connection, "s", from_version=3)] == ["C", "D"]
    assert [e.type for e in await read_stream(connection, "s", 2, to_version=3)] == ["B", "C"]


async def test_many_streams_tails_are_read_in_one_statement_each_from_its_own_version(
    connection: psycopg.AsyncConnection[object],
) -> None:
    await append(connection, "s1", 0, events("A", "B", "C"), "r1")
    await append(connection, "s2", 0, events("D", "E"), "r2")
    await append(connection, "s1", 3, events("F"), "r3")
    tails = await read_stream_tails(connection, [("s2", 1), ("s1", 3), ("s3", 1), ("s1x", 9)])
    assert {stream: [e.type for e in tail] for stream, tail in tails.items()} == {
        "s2": ["D", "E"],
        "s1": ["C", "F"],
        "s3": [],
        "s1x": [],
    }
    assert tails["s1"] == await read_stream(connection, "s1", 3)
    assert await read_stream_tails(connection, []) == {}


async def test_read_all_runs_in_global_order_from_a_checkpoint(
    connection: psycopg.AsyncConnection[object],
) -> None:
    await append(connection, "s1", 0, events("A"), "r1")
    await append(connection, "s2", 0, events("B", "C"), "r2")
    await append(connection, "s1", 1, events("D"), "r3")
    everything = await read_all(connection)
    assert [e.type for e in everything] == ["A", "B", "C", "D"]
    positions = [e.position for e in everything]
    assert positions == sorted(positions)
    assert [e.type for e in await read_all(connection, positions[1])] == ["C", "D"]
    assert [e.type for e in await read_all(connection, 0, limit=2)] == ["A", "B"]
    assert [e.type for e in await read_all(connection, 0, stream_id="s1")] == ["A", "D"]
    assert await last_position(connection) == positions[-1]


async def test_a_stale_expected_version_is_a_conflict_carrying_the_current_version(
    connection: psycopg.AsyncConnection[object],
) -> None:
    await append(connection, "s", 0, events("A", "B"), "r1")
    with pytest.raises(ConcurrencyConflict) as raised:
        await append(connection, "s", 1, events("C"), "r2")
    assert raised.value.current_version == 2
    assert raised.value.expected_version == 1
    assert await stream_version(connection, "s") == 2
    assert await find_processed_request(connection, "r2") is None


async def test_a_batch_is_atomic_when_the_transaction_fails(
    connection: psycopg.AsyncConnection[object],
) -> None:
    async def fail(_connection: psycopg.AsyncConnection[object], _events: object) -> None:
        raise RuntimeError("projection failed")

    with pytest.raises(RuntimeError):
        await append(connection, "s", 0, events("A", "B", "C"), "r1", project=fail)
    assert await read_all(connection) == []
    assert await find_processed_request(connection, "r1") is None
    # The request id was not burnt: the same request can run once the fault is gone.
    assert (await append(connection, "s", 0, events("A", "B", "C"), "r1")).last_version == 3


async def test_a_retried_request_returns_the_original_result_and_appends_nothing(
    connection: psycopg.AsyncConnection[object],
) -> None:
    first = await append(
        connection, "s", 0, events("A", "B"), "r1", response={"table": "s", "ok": True}
    )
    again = await append(connection, "s", 0, events("A", "B"), "r1", response={"ignored": 1})
    assert again.replayed and not first.replayed
    assert again.response == {"table": "s", "ok": True}
    assert (again.first_position, again.last_position, again.last_version) == (
        first.first_position,
        first.last_position,
        first.last_version,
    )
    assert again.events == first.events
    assert len(await read_all(connection)) == 2


async def test_a_retry_after_the_stream_moved_on_is_still_the_same_request(
    connection: psycopg.AsyncConnection[object],
) -> None:
    first = await append(connection, "s", 0, events("A"), "r1")
    await append(connection, "s", 1, events("B"), "r2")
    again = await append(connection, "s", 2, events("A"), "r1")
    assert again.replayed and again.last_version == first.last_version
    assert await stream_version(connection, "s") == 2


async def test_a_request_id_reused_for_another_stream_or_payload_is_refused(
    connection: psycopg.AsyncConnection[object],
) -> None:
    await append(connection, "s", 0, events("A"), "r1")
    with pytest.raises(RequestIdReused, match="stream 's'"):
        await append(connection, "other", 0, events("A"), "r1")
    with pytest.raises(RequestIdReused, match="different events"):
        await append(connection, "s", 1, events("B"), "r1")
    assert len(await read_all(connection)) == 1


async def test_a_retry_is_answered_from_the_database_after_a_reconnect(database_url: str) -> None:
    first_store = await EventStore.connect(database_url)
    try:
        first = await first_store.append("s", 0, events("A", "B"), "r1", response={"v": 2})
    finally:
        await first_store.close()
    second_store = await EventStore.connect(database_url)
    try:
        again = await second_store.append("s", 0, events("A", "B"), "r1")
        assert again.replayed
        assert again.response == {"v": 2}
        assert again.last_position == first.last_position
        assert len(await second_store.read_all()) == 2
    finally:
        await second_store.close()


async def test_empty_batches_floats_and_reserved_metadata_are_refused(
    connection: psycopg.AsyncConnection[object],
) -> None:
    with pytest.raises(ValueError):
        await append(connection, "s", 0, [], "r1")
    with pytest.raises(ValueError, match="float"):
        await append(connection, "s", 0, [NewEvent("A", {"x": 1.5})], "r2")
    with pytest.raises(ValueError, match="set by the store"):
        await append(connection, "s", 0, events("A"), "r3", metadata={"actor": "mallory"})
    with pytest.raises(ValueError, match="float"):
        await append(connection, "s", 0, events("A"), "r4", response={"score": 0.5})
    # RFC 8785: JSON numbers are doubles, exact only within ±(2^53 - 1) (docs/fairness.md §18).
    with pytest.raises(ValueError, match=r"outside ±\(2\^53 - 1\)"):
        await append(connection, "s", 0, [NewEvent("A", {"big": 2**53})], "r5")
    assert await read_all(connection) == []
    assert await (
        await connection.execute("SELECT count(*) FROM processed_requests")
    ).fetchone() == (0,)


async def test_extra_metadata_is_recorded_and_the_chain_holds(
    connection: psycopg.AsyncConnection[object],
) -> None:
    await append(connection, "s", 0, events("A", "B"), "r1", metadata={"correlation": "c-9"})
    await append(connection, "s", 2, [NewEvent("C", {"text": "ünïcødé ♠", "big": 2**53 - 1})], "r2")
    stored = await read_stream(connection, "s")
    assert stored[0].metadata["correlation"] == "c-9"
    assert verify_stream_chain(stored).intact


async def test_append_inside_a_callers_transaction_commits_with_it(
    connection: psycopg.AsyncConnection[object],
) -> None:
    with pytest.raises(RuntimeError):
        async with connection.transaction():
            await append(connection, "s", 0, events("A"), "r1")
            raise RuntimeError("caller changed its mind")
    assert await read_all(connection) == []
    async with connection.transaction():
        await append(connection, "s", 0, events("A"), "r1")
    assert len(await read_all(connection)) == 1


async def test_a_writer_taking_the_version_between_our_check_and_our_insert_makes_a_conflict(
    connection: psycopg.AsyncConnection[object], database_url: str
) -> None:
    # Another writer holds version 1 uncommitted: our append sees version 0, inserts version 1,
    # waits on the unique index, and once the other commits must end as a conflict.
    outcome: list[BaseException | None] = []
    async with await psycopg.AsyncConnection.connect(database_url) as raw_writer:
        await raw_writer.execute(
            "INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)"
            " VALUES ('s', 1, 'Raw', 1, '{}', '{}', %s)",
            [bytes(32)],
        )

        async def racing_append() -> None:
            async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as own:
                try:
                    await append(own, "s", 0, events("A"), "r1")
                    outcome.append(None)
                except BaseException as error:  # reported to the test below
                    outcome.append(error)

        racer = asyncio.create_task(racing_append())
        await wait_until_blocked_on_a_lock(connection)
        await raw_writer.commit()
        await asyncio.wait_for(racer, 60)
    assert len(outcome) == 1
    assert isinstance(outcome[0], ConcurrencyConflict)
    assert outcome[0].current_version == 1
    assert [e.type for e in await read_stream(connection, "s")] == ["Raw"]


async def wait_until_blocked_on_a_lock(connection: psycopg.AsyncConnection[object]) -> None:
    """Wait until some other session of this database waits on a lock."""
    for _ in range(6000):
        row = await (
            await connection.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        ).fetchone()
        if row and row[0]:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no session ever waited on a lock")


async def test_a_wrong_remembered_head_costs_a_retry_never_a_bad_chain(
    connection: psycopg.AsyncConnection[object],
) -> None:
    await append(connection, "s", 0, events("A"), "r1")
    # As if the database had been emptied and refilled under the same name: a wrong hint.
    stream_heads.forget(connection, "s")
    stream_heads.remember(connection, "s", 1, b"\x01" * 32)
    result = await append(connection, "s", 1, events("B"), "r2")
    assert result.last_version == 2
    assert verify_stream_chain(await read_stream(connection, "s")).intact


async def test_a_remembered_head_that_another_writer_moved_past_is_a_conflict(
    connection: psycopg.AsyncConnection[object],
) -> None:
    first = await append(connection, "s", 0, events("A"), "r1")
    await append(connection, "s", 1, events("B"), "r2")
    # This process last saw version 1 (another process appended version 2).
    stream_heads.forget(connection, "s")
    stream_heads.remember(connection, "s", 1, first.events[0].hash)
    with pytest.raises(ConcurrencyConflict) as raised:
        await append(connection, "s", 1, events("C"), "r3")
    assert raised.value.current_version == 2
    assert [e.type for e in await read_stream(connection, "s")] == ["A", "B"]


async def test_a_retry_racing_its_original_gets_the_original_result(database_url: str) -> None:
    # Both copies of one request start from version 0; exactly one appends, the other answers
    # with its result, whichever wins.
    connections = [
        await psycopg.AsyncConnection.connect(database_url, autocommit=True) for _ in range(2)
    ]
    try:
        results: list[object] = list(
            await asyncio.gather(
                *(append(own, "s", 0, events("A", "B"), "same-request") for own in connections)
            )
        )
    finally:
        for own in connections:
            await own.close()
    assert len(results) == 2
    first, second = results
    assert isinstance(first, AppendResult) and isinstance(second, AppendResult)
    assert {first.replayed, second.replayed} == {False, True}
    assert first.last_position == second.last_position
    async with await psycopg.AsyncConnection.connect(database_url) as check:
        assert len(await read_all(check)) == 2


async def test_the_appended_events_equal_what_a_read_returns(
    connection: psycopg.AsyncConnection[object],
) -> None:
    class Seat(int):
        """An int subclass, as the game's Card is."""

    result = await append(
        connection,
        "s",
        0,
        [NewEvent("Dealt", {"seats": (Seat(1), Seat(2)), "nested": {"b": [True, None], "a": "x"}})],
        "r1",
        metadata={"path": ("a", "b")},
    )
    assert list(result.events) == await read_stream(connection, "s")
    assert result.events[0].data == {"seats": [1, 2], "nested": {"a": "x", "b": [True, None]}}


async def test_pruning_forgets_only_request_ids_older_than_the_window(
    connection: psycopg.AsyncConnection[object], database_url: str
) -> None:
    await append(connection, "table-old", 0, [NewEvent("Happened", {"n": 1})], "old-request")
    await append(connection, "table-new", 0, [NewEvent("Happened", {"n": 1})], "new-request")
    await connection.execute(
        "UPDATE processed_requests SET processed_at = now() - interval '31 days'"
        " WHERE request_id = 'old-request'"
    )
    with pytest.raises(ValueError):
        await prune_processed_requests(connection, timedelta(0))

    completed = subprocess.run(
        [
            *(sys.executable, "-m", "sapsam.cli", "requests", "prune"),
            *("--older-than-days", "30", "--database-url", database_url),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(completed.stdout) == {"deleted": 1, "older_than_days": 30}
    assert await find_processed_request(connection, "old-request") is None
    assert await find_processed_request(connection, "new-request") is not None
    # The log is untouched, and a retry of the forgotten request is decided anew: refused here,
    # since its stream has moved on.
    assert len(await read_all(connection)) == 2
    with pytest.raises(ConcurrencyConflict):
        await append(connection, "table-old", 0, [NewEvent("Happened", {"n": 1})], "old-request")

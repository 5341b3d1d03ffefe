"""Concurrent writers: no lost or duplicated event, and a global reader that never skips one."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import psycopg

from sapsam.log.records import ConcurrencyConflict, NewEvent, RecordedEvent
from sapsam.store.appends import append
from sapsam.store.reads import read_all, read_stream, stream_version

WRITERS = 8
Result = TypeVar("Result")


@dataclass
class WriterLog:
    """What one writer thread saw."""

    appended_versions: list[int] = field(default_factory=list)
    conflicts: list[ConcurrencyConflict] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)


def on_new_connection(
    database_url: str, work: Callable[[psycopg.AsyncConnection[Any]], Awaitable[Result]]
) -> Result:
    """``work`` on a connection of its own, on an event loop of its own (this thread's)."""

    async def run() -> Result:
        async with await psycopg.AsyncConnection.connect(
            database_url, autocommit=True
        ) as connection:
            return await work(connection)

    return asyncio.run(run())


def in_thread(work: Coroutine[Any, Any, None]) -> threading.Thread:
    """A thread running ``work`` on an event loop of its own: each writer truly concurrent."""
    return threading.Thread(target=asyncio.run, args=(work,))


def run_threads(targets: Sequence[threading.Thread]) -> None:
    for thread in targets:
        thread.start()
    for thread in targets:
        thread.join(timeout=120)
        assert not thread.is_alive()


def test_eight_writers_racing_for_the_first_version_one_wins_seven_conflict(
    database_url: str,
) -> None:
    barrier = threading.Barrier(WRITERS)
    logs = [WriterLog() for _ in range(WRITERS)]

    async def writer(index: int) -> None:
        async with await psycopg.AsyncConnection.connect(
            database_url, autocommit=True
        ) as connection:
            barrier.wait()
            try:
                result = await append(
                    connection, "race", 0, [NewEvent("Wrote", {"writer": index})], f"r{index}"
                )
                logs[index].appended_versions.append(result.last_version)
            except ConcurrencyConflict as conflict:
                logs[index].conflicts.append(conflict)
            except BaseException as error:
                logs[index].errors.append(error)

    run_threads([in_thread(writer(i)) for i in range(WRITERS)])
    assert [log.errors for log in logs] == [[]] * WRITERS
    winners = [i for i, log in enumerate(logs) if log.appended_versions]
    assert len(winners) == 1
    losers = [log.conflicts[0] for log in logs if log.conflicts]
    assert len(losers) == WRITERS - 1
    assert all(c.current_version == 1 and c.expected_version == 0 for c in losers)
    stored = on_new_connection(database_url, lambda connection: read_stream(connection, "race"))
    assert [(e.version, e.data) for e in stored] == [(1, {"writer": winners[0]})]


def test_eight_writers_retrying_on_one_stream_lose_and_duplicate_nothing(
    database_url: str,
) -> None:
    appends_each = 12
    barrier = threading.Barrier(WRITERS + 1)
    logs = [WriterLog() for _ in range(WRITERS)]
    seen_by_reader: list[RecordedEvent] = []
    writers_done = threading.Event()

    async def writer(index: int) -> None:
        async with await psycopg.AsyncConnection.connect(
            database_url, autocommit=True
        ) as connection:
            barrier.wait()
            try:
                sequence = 0
                while sequence < appends_each:
                    expected = await stream_version(connection, "race")
                    try:
                        result = await append(
                            connection,
                            "race",
                            expected,
                            [NewEvent("Wrote", {"writer": index, "sequence": sequence})],
                            f"w{index}-{sequence}",
                        )
                    except ConcurrencyConflict as conflict:
                        assert conflict.current_version > expected
                        logs[index].conflicts.append(conflict)
                        continue
                    assert result.last_version == expected + 1
                    logs[index].appended_versions.append(result.last_version)
                    sequence += 1
            except BaseException as error:
                logs[index].errors.append(error)

    async def reader() -> None:
        async with await psycopg.AsyncConnection.connect(
            database_url, autocommit=True
        ) as connection:
            barrier.wait()
            checkpoint = 0
            while True:
                finished = writers_done.is_set()
                batch = await read_all(connection, checkpoint, limit=7)
                seen_by_reader.extend(batch)
                if batch:
                    checkpoint = batch[-1].position
                elif finished:
                    return

    threads = [in_thread(writer(i)) for i in range(WRITERS)]
    reading = in_thread(reader())
    reading.start()
    run_threads(threads)
    writers_done.set()
    reading.join(timeout=120)

    assert [log.errors for log in logs] == [[]] * WRITERS
    total = WRITERS * appends_each
    stored = on_new_connection(database_url, lambda connection: read_stream(connection, "race"))
    everything = on_new_connection(
        database_url, lambda connection: read_all(connection, 0, limit=10 * total)
    )
    assert [e.version for e in stored] == list(range(1, total + 1))
    payloads = [(e.data["writer"], e.data["sequence"]) for e in stored]
    assert sorted(payloads) == [(w, s) for w in range(WRITERS) for s in range(appends_each)]
    won = sorted(v for log in logs for v in log.appended_versions)
    assert won == list(range(1, total + 1))
    # The reader, reading while the race ran, saw exactly the log, in order, nothing skipped.
    assert seen_by_reader == everything


def test_a_global_reader_never_skips_an_event_committed_late_across_streams(
    database_url: str,
) -> None:
    # Each writer owns a stream, so nobody conflicts; a random pause between insert and commit
    # (inside the append's transaction) gives late commits every chance to overtake.
    appends_each = 15
    barrier = threading.Barrier(WRITERS + 1)
    errors: list[BaseException] = []
    seen_by_reader: list[RecordedEvent] = []
    writers_done = threading.Event()

    async def pause(_connection: psycopg.AsyncConnection[Any], _events: object) -> None:
        await asyncio.sleep(random.uniform(0, 0.003))

    async def writer(index: int) -> None:
        async with await psycopg.AsyncConnection.connect(
            database_url, autocommit=True
        ) as connection:
            barrier.wait()
            try:
                for sequence in range(appends_each):
                    await append(
                        connection,
                        f"stream-{index}",
                        2 * sequence,
                        [NewEvent("Wrote", {"n": sequence}), NewEvent("Wrote", {"n": -sequence})],
                        f"w{index}-{sequence}",
                        project=pause,
                    )
            except BaseException as error:
                errors.append(error)

    async def reader() -> None:
        async with await psycopg.AsyncConnection.connect(
            database_url, autocommit=True
        ) as connection:
            barrier.wait()
            checkpoint = 0
            while True:
                finished = writers_done.is_set()
                batch = await read_all(connection, checkpoint, limit=5)
                for event in batch:
                    assert event.position > checkpoint
                    checkpoint = event.position
                seen_by_reader.extend(batch)
                if not batch and finished:
                    return

    reading = in_thread(reader())
    reading.start()
    run_threads([in_thread(writer(i)) for i in range(WRITERS)])
    writers_done.set()
    reading.join(timeout=120)
    assert not reading.is_alive()
    assert errors == []
    everything = on_new_connection(
        database_url, lambda connection: read_all(connection, 0, limit=10_000)
    )
    assert len(everything) == WRITERS * appends_each * 2
    assert seen_by_reader == everything


async def test_a_reader_waits_for_an_append_in_flight_below_a_committed_one(
    database_url: str,
) -> None:
    # The race the high-water mark exists for, made deterministic: append A draws a position and
    # stays open; append B draws a higher one and commits. A reader must not return B alone.
    connect = psycopg.AsyncConnection.connect
    async with (
        await connect(database_url) as slow,
        await connect(database_url, autocommit=True) as fast,
        await connect(database_url, autocommit=True) as observer,
    ):
        seen: list[list[RecordedEvent]] = []

        async def read() -> None:
            async with await connect(database_url, autocommit=True) as reader:
                seen.append(await read_all(reader, 0))

        async with slow.transaction():
            slow_result = await append(slow, "slow", 0, [NewEvent("Slow", {})], "r-slow")
            fast_result = await append(fast, "fast", 0, [NewEvent("Fast", {})], "r-fast")
            assert fast_result.first_position > slow_result.first_position
            reading = asyncio.create_task(read())
            await wait_until_a_reader_waits(observer)
            assert seen == []  # still waiting for the slow append
        await asyncio.wait_for(reading, 60)
    assert [[event.type for event in batch] for batch in seen] == [["Slow", "Fast"]]


async def test_a_page_without_a_hole_is_read_without_waiting_for_appends_above_it(
    database_url: str,
) -> None:
    # Position 1 committed, position 2 drawn by an append still open: a read from 0 gets 1 at
    # once (no high-water proof, which would wait for that append: here for ever, as the same
    # task holds it, so the statement timeout would end the read).
    connect = psycopg.AsyncConnection.connect
    async with (
        await connect(database_url, autocommit=True) as writer,
        await connect(database_url) as open_append,
        await connect(database_url, autocommit=True) as reader,
    ):
        await append(writer, "done", 0, [NewEvent("Done", {})], "r-done")
        await reader.execute("SET statement_timeout = '5s'")
        async with open_append.transaction():
            await append(open_append, "open", 0, [NewEvent("Open", {})], "r-open")
            assert [event.type for event in await read_all(reader, 0)] == ["Done"]
            assert await read_all(reader, 1) == []
            cursor = await reader.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event = 'PgSleep'"
            )
            assert await cursor.fetchone() == (0,)
        assert [event.type for event in await read_all(reader, 1)] == ["Open"]


async def test_a_hole_left_by_a_rolled_back_append_is_proven_and_passed(database_url: str) -> None:
    connect = psycopg.AsyncConnection.connect
    async with (
        await connect(database_url, autocommit=True) as writer,
        await connect(database_url) as failing,
    ):
        await append(writer, "s", 0, [NewEvent("First", {})], "r1")
        async with failing.transaction(force_rollback=True):
            await append(failing, "t", 0, [NewEvent("Lost", {}), NewEvent("Lost", {})], "r-lost")
        await append(writer, "s", 1, [NewEvent("Second", {})], "r2")
        events = await read_all(writer, 0)
        assert [(event.position, event.type) for event in events] == [
            (1, "First"),
            (4, "Second"),
        ]
        assert [event.type for event in await read_all(writer, 1)] == ["Second"]


async def test_a_reader_does_not_wait_for_its_own_open_append(database_url: str) -> None:
    async with (
        await psycopg.AsyncConnection.connect(database_url) as connection,
        connection.transaction(),
    ):
        await append(connection, "s", 0, [NewEvent("Mine", {})], "r1")
        assert [event.type for event in await read_all(connection)] == ["Mine"]


async def test_read_all_refuses_a_snapshot_that_would_hide_late_commits(database_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(database_url) as connection:
        await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        try:
            await read_all(connection)
        except RuntimeError as error:
            assert "READ COMMITTED" in str(error)
        else:
            raise AssertionError("read_all ran under REPEATABLE READ")


async def wait_until_a_reader_waits(observer: psycopg.AsyncConnection[Any]) -> None:
    """Wait until some session sleeps inside sapsam_safe_position (pg_sleep shows as PgSleep)."""
    for _ in range(6000):
        cursor = await observer.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event = 'PgSleep'"
        )
        row = await cursor.fetchone()
        if row and row[0]:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no reader ever waited")


def test_any_insert_into_the_log_holds_the_insert_mark_until_its_transaction_ends(
    database_url: str,
) -> None:
    # Migration 0013: the statement trigger's WHEN condition takes the shared mark that
    # sapsam_safe_position waits on, for a plain INSERT too, not only for append's statement.
    mark = (
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1752392027"
        " AND objid = 2093268333 AND objsubid = 1 AND mode = 'ShareLock' AND granted"
        " AND pid = pg_backend_pid()"
    )
    with psycopg.connect(database_url) as connection:
        assert connection.execute(mark).fetchone() == (0,)
        connection.execute(
            "INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)"
            " VALUES ('plain', 1, 'Plain', 1, '{}', '{}', sha256(''::bytea))"
        )
        assert connection.execute(mark).fetchone() == (1,)
        connection.rollback()
        assert connection.execute(mark).fetchone() == (0,)

"""Concurrent writers: no lost or duplicated event, and a global reader that never skips one."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import psycopg

from sapsam.log.records import ConcurrencyConflict, NewEvent, RecordedEvent
from sapsam.store.appends import append
from sapsam.store.reads import read_all, read_stream, stream_version

WRITERS = 8


@dataclass
class WriterLog:
    """What one writer thread saw."""

    appended_versions: list[int] = field(default_factory=list)
    conflicts: list[ConcurrencyConflict] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)


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

    def writer(index: int) -> None:
        with psycopg.connect(database_url, autocommit=True) as connection:
            barrier.wait()
            try:
                result = append(
                    connection, "race", 0, [NewEvent("Wrote", {"writer": index})], f"r{index}"
                )
                logs[index].appended_versions.append(result.last_version)
            except ConcurrencyConflict as conflict:
                logs[index].conflicts.append(conflict)
            except BaseException as error:
                logs[index].errors.append(error)

    run_threads([threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)])
    assert [log.errors for log in logs] == [[]] * WRITERS
    winners = [i for i, log in enumerate(logs) if log.appended_versions]
    assert len(winners) == 1
    losers = [log.conflicts[0] for log in logs if log.conflicts]
    assert len(losers) == WRITERS - 1
    assert all(c.current_version == 1 and c.expected_version == 0 for c in losers)
    with psycopg.connect(database_url) as connection:
        stored = read_stream(connection, "race")
    assert [(e.version, e.data) for e in stored] == [(1, {"writer": winners[0]})]


def test_eight_writers_retrying_on_one_stream_lose_and_duplicate_nothing(
    database_url: str,
) -> None:
    appends_each = 12
    barrier = threading.Barrier(WRITERS + 1)
    logs = [WriterLog() for _ in range(WRITERS)]
    seen_by_reader: list[RecordedEvent] = []
    writers_done = threading.Event()

    def writer(index: int) -> None:
        with psycopg.connect(database_url, autocommit=True) as connection:
            barrier.wait()
            try:
                sequence = 0
                while sequence < appends_each:
                    expected = stream_version(connection, "race")
                    try:
                        result = append(
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

    def reader() -> None:
        with psycopg.connect(database_url, autocommit=True) as connection:
            barrier.wait()
            checkpoint = 0
            while True:
                finished = writers_done.is_set()
                batch = read_all(connection, checkpoint, limit=7)
                seen_by_reader.extend(batch)
                if batch:
                    checkpoint = batch[-1].position
                elif finished:
                    return

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    reading = threading.Thread(target=reader)
    reading.start()
    run_threads(threads)
    writers_done.set()
    reading.join(timeout=120)

    assert [log.errors for log in logs] == [[]] * WRITERS
    total = WRITERS * appends_each
    with psycopg.connect(database_url) as connection:
        stored = read_stream(connection, "race")
        everything = read_all(connection, 0, limit=10 * total)
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

    def pause(_connection: psycopg.Connection[object], _events: object) -> None:
        threading.Event().wait(random.uniform(0, 0.003))

    def writer(index: int) -> None:
        with psycopg.connect(database_url, autocommit=True) as connection:
            barrier.wait()
            try:
                for sequence in range(appends_each):
                    append(
                        connection,
                        f"stream-{index}",
                        2 * sequence,
                        [NewEvent("Wrote", {"n": sequence}), NewEvent("Wrote", {"n": -sequence})],
                        f"w{index}-{sequence}",
                        project=pause,
                    )
            except BaseException as error:
                errors.append(error)

    def reader() -> None:
        with psycopg.connect(database_url, autocommit=True) as connection:
            barrier.wait()
            checkpoint = 0
            while True:
                finished = writers_done.is_set()
                batch = read_all(connection, checkpoint, limit=5)
                for event in batch:
                    assert event.position > checkpoint
                    checkpoint = event.position
                seen_by_reader.extend(batch)
                if not batch and finished:
                    return

    reading = threading.Thread(target=reader)
    reading.start()
    run_threads([threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)])
    writers_done.set()
    reading.join(timeout=120)
    assert not reading.is_alive()
    assert errors == []
    with psycopg.connect(database_url) as connection:
        everything = read_all(connection, 0, limit=10_000)
    assert len(everything) == WRITERS * appends_each * 2
    assert seen_by_reader == everything


def test_a_reader_waits_for_an_append_in_flight_below_a_committed_one(database_url: str) -> None:
    # The race the high-water mark exists for, made deterministic: append A draws a position and
    # stays open; append B draws a higher one and commits. A reader must not return B alone.
    with (
        psycopg.connect(database_url) as slow,
        psycopg.connect(database_url, autocommit=True) as fast,
        psycopg.connect(database_url, autocommit=True) as observer,
    ):
        with slow.transaction():
            slow_result = append(slow, "slow", 0, [NewEvent("Slow", {})], "r-slow")
            fast_result = append(fast, "fast", 0, [NewEvent("Fast", {})], "r-fast")
            assert fast_result.first_position > slow_result.first_position
            seen: list[list[RecordedEvent]] = []

            def read() -> None:
                with psycopg.connect(database_url, autocommit=True) as reader:
                    seen.append(read_all(reader, 0))

            reading = threading.Thread(target=read)
            reading.start()
            wait_until_a_reader_waits(observer)
            assert seen == []  # still waiting for the slow append
        reading.join(timeout=60)
    assert [[event.type for event in batch] for batch in seen] == [["Slow", "Fast"]]


def test_a_page_without_a_hole_is_read_without_waiting_for_appends_above_it(
    database_url: str,
) -> None:
    # Position 1 committed, position 2 drawn by an append still open: a read from 0 gets 1 at
    # once (no high-water proof, which would wait for that append: here for ever, as the same
    # thread holds it, so the statement timeout would end the read).
    with (
        psycopg.connect(database_url, autocommit=True) as writer,
        psycopg.connect(database_url) as open_append,
        psycopg.connect(database_url, autocommit=True) as reader,
    ):
        append(writer, "done", 0, [NewEvent("Done", {})], "r-done")
        reader.execute("SET statement_timeout = '5s'")
        with open_append.transaction():
            append(open_append, "open", 0, [NewEvent("Open", {})], "r-open")
            assert [event.type for event in read_all(reader, 0)] == ["Done"]
            assert read_all(reader, 1) == []
            calls = reader.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
            ).fetchone()
            assert calls == (0,)
        assert [event.type for event in read_all(reader, 1)] == ["Open"]


def test_a_hole_left_by_a_rolled_back_append_is_proven_and_passed(database_url: str) -> None:
    with (
        psycopg.connect(database_url, autocommit=True) as writer,
        psycopg.connect(database_url) as failing,
    ):
        append(writer, "s", 0, [NewEvent("First", {})], "r1")
        with failing.transaction(force_rollback=True):
            append(failing, "t", 0, [NewEvent("Lost", {}), NewEvent("Lost", {})], "r-lost")
        append(writer, "s", 1, [NewEvent("Second", {})], "r2")
        events = read_all(writer, 0)
        assert [(event.position, event.type) for event in events] == [
            (1, "First"),
            (4, "Second"),
        ]
        assert [event.type for event in read_all(writer, 1)] == ["Second"]


def test_a_reader_does_not_wait_for_its_own_open_append(database_url: str) -> None:
    with psycopg.connect(database_url) as connection, connection.transaction():
        append(connection, "s", 0, [NewEvent("Mine", {})], "r1")
        assert [event.type for event in read_all(connection)] == ["Mine"]


def test_read_all_refuses_a_snapshot_that_would_hide_late_commits(database_url: str) -> None:
    with psycopg.connect(database_url) as connection:
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        try:
            read_all(connection)
        except RuntimeError as error:
            assert "READ COMMITTED" in str(error)
        else:
            raise AssertionError("read_all ran under REPEATABLE READ")


def wait_until_a_reader_waits(observer: psycopg.Connection[object]) -> None:
    """Wait until some session sleeps inside sapsam_safe_position (pg_sleep shows as PgSleep)."""
    for _ in range(6000):
        row = observer.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event = 'PgSleep'"
        ).fetchone()
        if row and row[0]:
            return
        threading.Event().wait(0.01)
    raise AssertionError("no reader ever waited")

"""The serving record: heartbeats of serving processes, and the windows when none served."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from deadline_tables import FakeClock, confirm_solved, dealt_table

from sapsam.app.tables import TableService
from sapsam.cli.bootstrap import build_services
from sapsam.domain.events import DeadlinesExtended, SeatTimedOut
from sapsam.domain.table_deadlines import DATABASE_OUTAGE, SERVER_RESTART, UnservedWindow
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.event_store import EventStore
from sapsam.store.serving import (
    ServingInterval,
    ServingRecord,
    read_unserved_windows,
    unserved_windows,
    wall_clock_ms,
)
from sapsam.store.table_projections import projectors

A, B = "a", "b"


def test_windows_are_the_gaps_between_merged_intervals() -> None:
    intervals = [
        ServingInterval(A, 1_000, 9_000),
        ServingInterval(B, 5_000, 12_000),  # overlaps A: no gap
        ServingInterval(A, 20_000, 30_000),  # A back after a gap with B gone: A served before
        ServingInterval("c", 40_000, 41_000),  # a new process after a gap
    ]
    assert unserved_windows(intervals, known_before=True) == (
        UnservedWindow(12_000, 20_000, DATABASE_OUTAGE),
        UnservedWindow(30_000, 40_000, SERVER_RESTART),
    )
    # Nothing recorded before the first interval: no server is known to have served then.
    assert unserved_windows(intervals[:1], known_before=False) == (
        UnservedWindow(0, 1_000, SERVER_RESTART),
    )


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[EventStore]:
    opened = await EventStore.connect(database_url, projectors=projectors())
    opened.prepare()
    try:
        yield opened
    finally:
        await opened.close()


async def test_a_killed_server_leaves_a_window_the_next_one_extends_deadlines_for(
    store: EventStore,
) -> None:
    clock = FakeClock(1_000_000)
    service = TableService(store, clock=clock)
    first = ServingRecord(store.pool, clock)
    await first.beat()
    rules = DEFAULT_RULE_SET.with_changes(arrange_seconds=60)
    table_id = await dealt_table(service, rules, ("ann", "bob"), "t")  # deadline: 1,060,000
    await confirm_solved(service, table_id, "ann")
    for _ in range(10):
        clock.now_ms += 1_000
        await first.beat()  # last beat at 1,010,000; then the process is killed
    clock.now_ms = 1_090_000
    second = ServingRecord(store.pool, clock)
    await second.beat()
    assert second.serving and not first.serving
    # Before the first heartbeat ever recorded, too, no server is known to have served.
    assert await second.unserved_since(1_060_000) == (
        UnservedWindow(0, 1_000_000, SERVER_RESTART),
        UnservedWindow(1_010_000, 1_090_000, SERVER_RESTART),
    )
    clock.now_ms += 500
    assert await service.sweep_deadlines(unserved=second.unserved_since, grace_ms=30_000) == 1
    events = [service.decode(recorded) for recorded in await service.events(table_id)]
    extended = events[-1]
    assert isinstance(extended, DeadlinesExtended) and extended.deadline_ms == 1_120_000
    assert not any(isinstance(event, SeatTimedOut) for event in events)
    # The read model follows: the table is not due again until the new deadline.
    clock.now_ms = 1_119_999
    assert await service.sweep_deadlines(unserved=second.unserved_since, grace_ms=30_000) == 0
    clock.now_ms = 1_120_000
    assert await service.sweep_deadlines(unserved=second.unserved_since, grace_ms=30_000) == 1
    timed_out = [
        e
        for e in map(service.decode, await service.events(table_id))
        if isinstance(e, SeatTimedOut)
    ]
    assert [event.seat for event in timed_out] == [1]


async def test_a_process_cut_off_from_the_database_starts_a_new_interval(store: EventStore) -> None:
    clock = FakeClock(5_000_000)
    record = ServingRecord(store.pool, clock, server_id=uuid.uuid4())
    await record.beat()
    clock.now_ms += 1_000
    await record.beat()
    clock.now_ms += 20_000  # beats failed for 20 s: the database was out of reach
    await record.beat()
    assert (await record.unserved_since(5_000_000))[-1] == (
        UnservedWindow(5_001_000, 5_021_000, DATABASE_OUTAGE)
    )


async def _record_intervals(store: EventStore, intervals: list[tuple[uuid.UUID, int, int]]) -> None:
    async with store.pool.connection() as connection:
        for server, started_ms, beat_ms in intervals:
            await connection.execute(
                "INSERT INTO serving_intervals (server_id, started_ms, beat_ms)"
                " VALUES (%s, %s, %s)",
                (server, started_ms, beat_ms),
            )


async def test_a_restart_with_two_workers_still_leaves_the_window_of_the_killed_server(
    store: EventStore,
) -> None:
    # The torture run's shape (finding 6): the killed server beat last at 1,010,000; two new
    # workers started at 1,040,000 and 1,041,000, the second's first interval ended at 1,042,000
    # (it started another), before the deadline's time of interest, 1,045,000.
    killed, first_worker, second_worker = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    await _record_intervals(
        store,
        [
            (uuid.uuid4(), 500_000, 900_000),  # an older server: serving was known before
            (killed, 1_000_000, 1_010_000),
            (first_worker, 1_040_000, 1_100_000),
            (second_worker, 1_041_000, 1_042_000),
            (second_worker, 1_050_000, 1_100_000),
        ],
    )
    record = ServingRecord(store.pool, FakeClock(1_100_000))
    assert await record.unserved_since(1_045_000) == (
        UnservedWindow(1_010_000, 1_040_000, SERVER_RESTART),
    )


async def test_overlapping_intervals_reaching_far_back_are_all_seen(store: EventStore) -> None:
    # Each interval reaching the time of interest starts during an earlier one: the gap before
    # the earliest (1,010,000 to 1,020,000) is the one unserved window, and none is invented
    # between intervals that overlap.
    await _record_intervals(
        store,
        [
            (uuid.uuid4(), 500_000, 900_000),
            (uuid.uuid4(), 1_000_000, 1_010_000),
            (uuid.uuid4(), 1_020_000, 1_030_000),
            (uuid.uuid4(), 1_025_000, 1_060_000),
            (uuid.uuid4(), 1_050_000, 1_100_000),
        ],
    )
    record = ServingRecord(store.pool, FakeClock(1_100_000))
    assert await record.unserved_since(1_070_000) == (
        UnservedWindow(1_010_000, 1_020_000, SERVER_RESTART),
    )
    assert await record.unserved_since(1_200_000) == ()


async def test_a_server_beats_before_its_port_opens(store: EventStore, database_url: str) -> None:
    # A killed server beat last 10 s ago. The new one's first beat must come before its port
    # opens (Services.open): a deal dealt in between would otherwise fall in the unserved window
    # since the killed server's beat and have its deadline extended by the grace (finding 6).
    opened_ms = wall_clock_ms()
    killed = uuid.uuid4()
    await _record_intervals(
        store,
        [
            (killed, opened_ms - 90_000, opened_ms - 80_000),
            (killed, opened_ms - 20_000, opened_ms - 10_000),
        ],
    )
    services = build_services(database_url, pool_size=2)
    await services.open()  # on_serving (which starts the heartbeat loop) is not called
    try:
        async with store.pool.connection() as connection:
            windows = await read_unserved_windows(connection, opened_ms)
        # The window since the killed server's beat is closed already: serving began again.
        assert len(windows) == 1
        assert windows[0].start_ms == opened_ms - 10_000
        assert opened_ms <= windows[0].end_ms <= wall_clock_ms()
    finally:
        await services.on_stop()
        await services.close()

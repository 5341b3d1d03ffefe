"""Following the log: NOTIFY wakes a follower, polling catches what no notification announced."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from sapsam.log.chain import GENESIS_HASH
from sapsam.log.records import NewEvent, RecordedEvent
from sapsam.store.appends import append
from sapsam.store.subscriptions import NOTIFY_CHANNEL, follow, listen, parse_wakeup

# Long enough that, were the wake-up missing, the follower would still be asleep when the test
# gives up waiting; the test only waits for liveness, it asserts nothing about time.
NEVER = 600.0


class Follower:
    """Runs ``follow`` in a thread and hands over each event through a queue."""

    def __init__(self, url: str, poll_seconds: float, stream_id: str | None = None) -> None:
        self.received: queue.Queue[RecordedEvent] = queue.Queue()
        self.stopping = threading.Event()
        self.listening = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(url, poll_seconds, stream_id))
        self.thread.start()

    def _run(self, url: str, poll_seconds: float, stream_id: str | None) -> None:
        def should_stop() -> bool:
            self.listening.set()  # called only after LISTEN and a first read
            return self.stopping.is_set()

        for event in follow(url, 0, stream_id, poll_seconds=poll_seconds, should_stop=should_stop):
            self.received.put(event)

    async def next_event(self) -> RecordedEvent:
        # Awaited, not blocking: the test's appends send their wake-ups from this loop.
        return await asyncio.to_thread(self.received.get, timeout=60)

    def stop(self, url: str) -> None:
        self.stopping.set()
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute("SELECT pg_notify(%s, %s)", [NOTIFY_CHANNEL, "{}"])
        self.thread.join(timeout=60)
        assert not self.thread.is_alive()


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        yield opened


async def test_an_append_wakes_a_waiting_follower(
    database_url: str, connection: psycopg.AsyncConnection[Any]
) -> None:
    await append(connection, "s", 0, [NewEvent("Before", {})], "r0")
    follower = Follower(database_url, poll_seconds=NEVER)
    try:
        assert (await follower.next_event()).type == "Before"
        assert follower.listening.wait(timeout=60)
        result = await append(connection, "s", 1, [NewEvent("A", {}), NewEvent("B", {})], "r1")
        first, second = await follower.next_event(), await follower.next_event()
        assert [first.type, second.type] == ["A", "B"]
        assert second.position == result.last_position
    finally:
        follower.stop(database_url)


async def test_a_follower_of_one_stream_sees_only_that_stream(
    database_url: str, connection: psycopg.AsyncConnection[Any]
) -> None:
    follower = Follower(database_url, poll_seconds=NEVER, stream_id="mine")
    try:
        assert follower.listening.wait(timeout=60)
        await append(connection, "other", 0, [NewEvent("Theirs", {})], "r1")
        await append(connection, "mine", 0, [NewEvent("Mine", {})], "r2")
        assert (await follower.next_event()).type == "Mine"
        assert follower.received.empty()
    finally:
        follower.stop(database_url)


async def test_polling_finds_events_no_notification_announced(
    database_url: str, connection: psycopg.AsyncConnection[Any]
) -> None:
    follower = Follower(database_url, poll_seconds=0.05)
    try:
        assert follower.listening.wait(timeout=60)
        # A writer outside the store sends no NOTIFY; the poll still finds its event.
        await connection.execute(
            "INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)"
            " VALUES ('quiet', 1, 'Quiet', 1, '{}', '{}', %s)",
            [GENESIS_HASH],
        )
        assert (await follower.next_event()).type == "Quiet"
    finally:
        follower.stop(database_url)


async def test_the_notification_carries_the_stream_and_position_only(
    database_url: str, connection: psycopg.AsyncConnection[Any]
) -> None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as listener:
        await listen(listener)
        result = await append(connection, "s", 0, [NewEvent("Secret", {"hand": "As Ks"})], "r1")
        notification = await _first(listener)
    wakeup = parse_wakeup(notification.payload)
    assert (wakeup.stream_id, wakeup.position) == ("s", result.last_position)
    assert "hand" not in notification.payload


async def test_inside_a_callers_transaction_the_wake_up_goes_out_with_its_commit_only(
    database_url: str, connection: psycopg.AsyncConnection[Any]
) -> None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as listener:
        await listen(listener)
        with pytest.raises(RuntimeError):
            async with connection.transaction():
                await append(connection, "rolled-back", 0, [NewEvent("Never", {})], "r1")
                raise RuntimeError("caller rolls back")
        async with connection.transaction():
            result = await append(connection, "kept", 0, [NewEvent("Kept", {})], "r2")
        notification = await _first(listener)
    # The first wake-up to arrive is the committed one: the rolled-back append sent none.
    wakeup = parse_wakeup(notification.payload)
    assert (wakeup.stream_id, wakeup.position) == ("kept", result.last_position)


async def _first(listener: psycopg.AsyncConnection[Any]) -> psycopg.Notify:
    async for notification in listener.notifies(timeout=60, stop_after=1):
        return notification
    raise AssertionError("no notification arrived")

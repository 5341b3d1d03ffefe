"""WatchTable at its edges: an after_version past the table's head, a table whose reads keep
failing, a watcher that leaves while its channel opens, events this process appended handed to
the channel (no read unless one is missing)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import grpc
import psycopg
import pytest
from api_client import Api, Watcher, error_reason

from sapsam.api import watch as watching
from sapsam.api.live_feed import EventFeed
from sapsam.api.server import RunningServer
from sapsam.api.watch import Sent, StreamChannel, watch
from sapsam.app import tables as table_store
from sapsam.log.records import RecordedEvent, recorded_event
from sapsam.store import subscriptions
from sapsam_proto.v1 import table_service_pb2


@pytest.fixture(scope="module")
def api(module_running_server: RunningServer, module_database_url: str) -> Iterator[Api]:
    with grpc.insecure_channel(f"127.0.0.1:{module_running_server.port}") as channel:
        yield Api(channel, module_database_url)


def _open_table(api: Api, seat_count: int) -> str:
    creator = api.register("creator")
    request = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()), rule_set_preset="pagat", seat_count=seat_count
    )
    name: str = api.call("CreateTable", request, creator.token).table.name
    return name


def _join(api: Api, table: str) -> None:
    request = table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table)
    api.call("JoinTable", request, api.register("joiner").token)


def test_a_watch_after_a_version_past_the_head_sends_only_later_events(api: Api) -> None:
    table = _open_table(api, 3)  # version 1: created
    watcher = Watcher(api, table, api.register("watcher").token, after_version=2)
    try:
        for _ in range(3):  # versions 2, 3, 4
            _join(api, table)
        watcher.wait_for(lambda: any(m.event.version == 4 for m in watcher.messages))
        assert [m.event.version for m in watcher.messages] == [3, 4]
    finally:
        watcher.cancel()


def _append_unreadable_event(database_url: str, stream_id: str, version: int) -> None:
    """An event no server can decode (a type nobody knows), and its wake-up."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(
            "INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)"
            " VALUES (%s, %s, 'NobodyKnowsThis', 1, '{}', '{}', %s)",
            [stream_id, version, bytes(32)],
        )


def _wake(database_url: str, stream_id: str) -> None:
    payload = json.dumps({"stream": stream_id, "position": 1})
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("SELECT pg_notify(%s, %s)", [subscriptions.NOTIFY_CHANNEL, payload])


def test_a_table_that_cannot_be_read_ends_its_watchers_unavailable(api: Api) -> None:
    table = _open_table(api, 2)  # version 1
    watcher = Watcher(api, table, api.register("watcher").token)
    try:
        watcher.wait_for(lambda: len(watcher.messages) == 1)
        stream_id = table_store.stream_id_for(uuid.UUID(table.rsplit("/", 1)[1]))
        _append_unreadable_event(api.database_url, stream_id, 2)
        deadline = time.monotonic() + 30
        while watcher.error is None:  # each wake-up is one more failed read
            assert time.monotonic() < deadline, "the watcher was never let go"
            _wake(api.database_url, stream_id)
            time.sleep(0.05)
        assert isinstance(watcher.error, grpc.RpcError)
        code, reason, info, _ = error_reason(watcher.error)
        assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "STREAM_UNAVAILABLE")
        assert info.metadata["after_version"] == "1"
    finally:
        watcher.cancel()


class _SlowFirstRead(StreamChannel):
    """A channel whose first read waits (on its bridge thread) until the test lets it go, and
    that counts the reads running at once."""

    def __init__(self, feed: EventFeed) -> None:
        super().__init__("slow", feed, 16)
        self.go = threading.Event()
        self.entered = threading.Event()
        self.running = 0
        self.most_at_once = 0
        self.reads = 0

    async def read_after(self, version: int) -> list[Sent]:
        self.running += 1
        self.reads += 1
        self.most_at_once = max(self.most_at_once, self.running)
        self.entered.set()
        for _ in range(1000):  # a slow read: until the test lets it go (10 s at most)
            if self.go.is_set():
                break
            await asyncio.sleep(0.01)
        self.running -= 1
        return [Sent(1, "event 1")] if version == 0 else []

    async def history(self, after: int, through: int) -> list[Sent]:
        return []


def test_a_watcher_that_leaves_during_the_first_read_does_not_start_a_second() -> None:
    feed = EventFeed("postgresql://unused")  # never started: no wake-ups, only the test's calls
    channel = _SlowFirstRead(feed)

    async def first_event() -> Any:
        async for response in watch(feed, "slow", lambda: channel, 0):
            return response
        return None

    async def run() -> None:
        leaving = asyncio.create_task(first_event())
        while not channel.entered.is_set():
            await asyncio.sleep(0.01)
        leaving.cancel()  # its read goes on, in the channel's own task
        staying = asyncio.create_task(first_event())
        await asyncio.sleep(0.1)
        channel.go.set()
        assert await asyncio.wait_for(staying, 10) == "event 1"

    asyncio.run(run())
    assert (channel.reads, channel.most_at_once) == (1, 1)


class _CountingReads(StreamChannel):
    """A channel over a list of records, counting its reads."""

    def __init__(self, feed: EventFeed, log: list[RecordedEvent]) -> None:
        super().__init__("counting", feed, 16)
        self.log = log
        self.reads = 0

    async def read_after(self, version: int) -> list[Sent]:
        self.reads += 1
        sent = self.sent_for([record for record in self.log if record.version > version])
        assert sent is not None
        return sent

    def sent_for(self, records: Sequence[RecordedEvent]) -> list[Sent]:
        return [
            Sent(record.version, f"event {record.version}", position=record.position)
            for record in records
        ]

    async def history(self, after: int, through: int) -> list[Sent]:
        return []


def _ping(version: int) -> RecordedEvent:
    return recorded_event(100 + version, "counting", version, "Ping", 1, {}, {}, b"")


def test_events_this_process_appended_are_sent_without_a_read_unless_one_is_missing() -> None:
    feed = EventFeed("postgresql://unused")  # never started: the test hands events over itself
    log = [_ping(1)]
    channel = _CountingReads(feed, log)

    async def run() -> list[Any]:
        received: list[Any] = []

        async def follow() -> None:
            async for response in watch(feed, "counting", lambda: channel, 0):
                received.append(response)

        following = asyncio.create_task(follow())
        while len(received) < 1:
            await asyncio.sleep(0.01)
        assert channel.reads == 1  # opening it
        log.extend([_ping(2), _ping(3)])
        channel.take(log[1:3])  # follows the head: sent as they are
        while len(received) < 3:
            await asyncio.sleep(0.01)
        assert (channel.reads, channel.head_position) == (1, 103)
        channel.take(log[1:2])  # sent already: nothing
        log.extend([_ping(4), _ping(5)])
        channel.take(log[4:5])  # version 4 is missing: read, as on a wake-up
        while len(received) < 5:
            await asyncio.sleep(0.01)
        assert channel.reads == 2
        following.cancel()
        return received

    received = asyncio.run(run())
    assert received == [f"event {version}" for version in range(1, 6)]


def test_a_watcher_woken_before_it_waits_goes_on_and_one_woken_while_waiting_wakes() -> None:
    """A wake-up is never lost: before the wait it makes the next wait return at once (once),
    during the wait it ends it; a wait cancelled (the client left) takes no later wake-up."""

    async def run() -> None:
        watcher = watching.Watcher(4)
        watcher.wake()
        assert watcher.next_wake() is None  # woken already: go on
        waiter = watcher.next_wake()
        assert waiter is not None and not waiter.done()
        assert watcher.offer([Sent(1, "event 1")])
        assert waiter.done()
        await waiter
        assert [sent.version for sent in watcher.waiting] == [1]
        cancelled = watcher.next_wake()
        assert cancelled is not None
        cancelled.cancel()
        watcher.wake()  # after the stream left mid-wait: nothing raises
        assert watcher.next_wake() is not None  # that wake-up went to the cancelled wait
        assert not watcher.offer([Sent(2, "event 2")] * 5)  # beyond its buffer: behind
        assert watcher.behind and not watcher.waiting

    asyncio.run(run())


class _SeatSeesThree(_CountingReads):
    """Version 3 shows the player "seat" something the others are not sent."""

    def sent_for(self, records: Sequence[RecordedEvent]) -> list[Sent]:
        return [
            Sent(sent.version, sent.response, position=sent.position, variants={"seat": "mine"})
            if sent.version == 3
            else sent
            for sent in super().sent_for(records)
        ]


def test_watchers_sent_the_same_run_in_batches_share_one_message_but_a_seat_its_own() -> None:
    feed = EventFeed("postgresql://unused")  # never started: the test hands events over itself
    log = [_ping(1)]
    channel = _SeatSeesThree(feed, log)

    def batched(responses: list[Any]) -> tuple[Any, ...]:
        return tuple(responses)

    async def run() -> dict[str, list[Any]]:
        received: dict[str, list[Any]] = {"a": [], "b": [], "seat": []}

        async def follow(player: str) -> None:
            stream = watch(feed, "counting", lambda: channel, 0, player, batched)
            async for response in stream:
                received[player].append(response)

        following = [asyncio.create_task(follow(player)) for player in received]
        while any(len(messages) < 1 for messages in received.values()):
            await asyncio.sleep(0.01)
        log.extend([_ping(2), _ping(3)])
        channel.take(log[1:3])
        while any(len(messages) < 2 for messages in received.values()):
            await asyncio.sleep(0.01)
        for task in following:
            task.cancel()
        return received

    received = asyncio.run(run())
    assert received["a"][1] == ("event 2", "event 3")
    assert received["a"][1] is received["b"][1]  # one message for both
    assert received["seat"][1] == ("event 2", "mine")

"""The per-process event feed (one LISTEN connection) wakes the channel of the stream an append
names, without waiting for its poll, unless the channel has sent that position already; the poll
catches a wake-up that never came; events this process appended are handed to their channel
from any thread; and the feed listens only while it has channels."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Sequence

import psycopg

from sapsam.api.live_feed import APPLICATION_NAME, EventFeed
from sapsam.log.records import NewEvent, RecordedEvent, recorded_event
from sapsam.store import appends, subscriptions
from sapsam.store.event_store import EventStore


class RecordingChannel:
    """A channel that only counts its wake-ups (what ``sapsam.api.watch`` channels react to)."""

    def __init__(self, stream_id: str, head: int = 0) -> None:
        self.stream_id = stream_id
        self.head = head
        self.head_position = 0
        self.wakes = 0
        self.closed = False
        self.taken: list[tuple[int, list[int]]] = []  # (thread, versions) of each take

    def take(self, records: Sequence[RecordedEvent]) -> None:
        self.taken.append((threading.get_ident(), [record.version for record in records]))

    def wake(self) -> None:
        self.wakes += 1

    def close(self) -> None:
        self.closed = True


async def _eventually(check: Callable[[], bool], seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the feed never got there"
        await asyncio.sleep(0.02)


def _append(database_url: str, stream_id: str, count: int) -> None:
    """Appends from a store of their own, on an event loop of their own (this thread's)."""

    async def append() -> None:
        store = await EventStore.connect(database_url)
        try:
            for version in range(count):
                await store.append(
                    stream_id, version, [NewEvent("Ping", {"n": version})], f"{stream_id}{version}"
                )
        finally:
            await store.close()

    asyncio.run(append())


def _with_feed(feed: EventFeed, body: Callable[[], Awaitable[None]]) -> None:
    async def run() -> None:
        await feed.start()
        try:
            await body()
        finally:
            await feed.stop()

    asyncio.run(run())


def test_an_append_wakes_only_the_channel_of_its_stream(database_url: str) -> None:
    feed = EventFeed(database_url, poll_seconds=60)  # no poll in this test: wake-ups only
    watched = RecordingChannel("table-x")
    other = RecordingChannel("table-other")

    async def body() -> None:
        feed.channel(watched.stream_id, lambda: watched)
        feed.channel(other.stream_id, lambda: other)
        await _eventually(lambda: feed.listening and watched.wakes > 0)  # LISTEN wakes them all
        before_other = other.wakes
        before = watched.wakes
        await asyncio.to_thread(_append, database_url, "table-x", 1)
        await _eventually(lambda: watched.wakes > before)
        assert other.wakes == before_other

    _with_feed(feed, body)
    assert watched.closed and other.closed  # stopping the feed lets every channel go


def test_a_wakeup_for_a_position_the_channel_has_sent_is_skipped(database_url: str) -> None:
    feed = EventFeed(database_url, poll_seconds=60)
    ahead = RecordingChannel("table-ahead")
    behind = RecordingChannel("table-behind")

    async def body() -> None:
        feed.channel(ahead.stream_id, lambda: ahead)
        feed.channel(behind.stream_id, lambda: behind)
        await _eventually(lambda: feed.listening and ahead.wakes > 0 and behind.wakes > 0)
        ahead.head_position = 2**62  # as if it had sent the event (this process appended it)
        ahead.wakes = behind.wakes = 0
        await asyncio.to_thread(_append, database_url, "table-ahead", 1)
        await asyncio.to_thread(_append, database_url, "table-behind", 1)
        await _eventually(lambda: behind.wakes > 0)  # its wake-up came, and so did ahead's
        assert ahead.wakes == 0

    _with_feed(feed, body)


def _record(stream_id: str, version: int) -> RecordedEvent:
    return recorded_event(version, stream_id, version, "Ping", 1, {}, {}, b"")


def test_appended_events_reach_their_channel_on_the_loop_from_any_thread(
    database_url: str,
) -> None:
    feed = EventFeed(database_url, poll_seconds=60)
    watched = RecordingChannel("table-mine")

    async def body() -> None:
        feed.channel(watched.stream_id, lambda: watched)
        loop_thread = threading.get_ident()
        feed.appended("table-mine", [_record("table-mine", 1)])  # on the loop: at once
        await asyncio.to_thread(feed.appended, "table-mine", [_record("table-mine", 2)])
        feed.appended("table-unwatched", [_record("table-unwatched", 1)])
        await _eventually(lambda: len(watched.taken) == 2)
        assert watched.taken == [(loop_thread, [1]), (loop_thread, [2])]

    _with_feed(feed, body)


def test_the_poll_wakes_a_channel_whose_wakeup_never_came(database_url: str) -> None:
    _append(database_url, "table-quiet", 2)  # before anyone listens: no wake-up will come
    feed = EventFeed(database_url, poll_seconds=0.1)
    quiet = RecordingChannel("table-quiet", head=2)

    async def body() -> None:
        feed.channel(quiet.stream_id, lambda: quiet)
        await _eventually(lambda: feed.listening)
        await asyncio.sleep(0.3)  # several polls: the channel is at the head, nothing to wake
        quiet.wakes = 0
        await asyncio.sleep(0.3)
        assert quiet.wakes == 0
        quiet.head = 1  # as if it had missed version 2's wake-up
        await _eventually(lambda: quiet.wakes > 0, seconds=5)

    _with_feed(feed, body)


def _feed_statement(database_url: str) -> str | None:
    """The last statement of the feed's own connection; None while it has none."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT query FROM pg_stat_activity"
            " WHERE application_name = %s AND datname = current_database()",
            [APPLICATION_NAME],
        ).fetchone()
    return None if row is None else str(row[0])


def test_the_feed_listens_only_while_it_has_channels(database_url: str) -> None:
    feed = EventFeed(database_url, poll_seconds=0.1)
    channel = RecordingChannel("table-y")

    async def statement() -> str:
        return await asyncio.to_thread(_feed_statement, database_url) or ""

    async def body() -> None:
        await asyncio.sleep(0.3)
        assert "LISTEN" not in await statement()  # nobody watches: no LISTEN at all
        feed.channel(channel.stream_id, lambda: channel)
        await _eventually(lambda: feed.listening)
        # Listening: its last statement is the LISTEN, the listing of its streams, or the poll
        # (its listener's renewal, the watched streams' heads).
        last = (await statement()).strip()
        assert last.startswith(("LISTEN", "SELECT stream", "WITH dropped", "WITH lapsed")), last
        feed.release(channel)  # its last watcher left
        await _eventually(lambda: not feed.listening)
        assert (await statement()).startswith("UNLISTEN")
        await asyncio.sleep(0.3)
        assert (await statement()).startswith("UNLISTEN")  # and no polls while nobody watches

    _with_feed(feed, body)


def _notify(database_url: str, payload: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("SELECT pg_notify(%s, %s)", [subscriptions.NOTIFY_CHANNEL, payload])


def test_a_notification_that_is_not_a_wakeup_is_skipped(database_url: str) -> None:
    feed = EventFeed(database_url, poll_seconds=60)  # no poll: only wake-ups can wake it
    watched = RecordingChannel("table-z")
    garbage = ["not json", "[1]", '{"stream": "table-z"}', '{"stream": 1, "position": "x"}']

    async def body() -> None:
        feed.channel(watched.stream_id, lambda: watched)
        await _eventually(lambda: feed.listening and watched.wakes > 0)
        for payload in garbage:
            await asyncio.to_thread(_notify, database_url, payload)
        await _eventually(lambda: feed.bad_wakeups == len(garbage))
        before = watched.wakes
        await asyncio.to_thread(_append, database_url, "table-z", 1)
        await _eventually(lambda: watched.wakes > before)  # the feed still follows

    _with_feed(feed, body)  # and stops without raising
    assert watched.closed


def test_an_append_wakes_the_feeds_of_other_processes_only(database_url: str) -> None:
    # Two processes' feeds watch one stream; no poll: wake-ups only.
    writing = EventFeed(database_url, poll_seconds=60)
    watching = EventFeed(database_url, poll_seconds=60)
    mine = RecordingChannel("table-shared")
    theirs = RecordingChannel("table-shared")

    async def append_handed_to(listener: str | None, version: int) -> None:
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as writer:
            batch = [NewEvent("Ping", {"n": version})]
            await appends.append(
                writer, "table-shared", version, batch, f"s{version}", None, handed_to=listener
            )

    async def body() -> None:
        await watching.start()
        try:
            writing.channel(mine.stream_id, lambda: mine)
            watching.channel(theirs.stream_id, lambda: theirs)
            await _eventually(lambda: writing.listener_id() is not None and mine.wakes > 0)
            await _eventually(lambda: watching.listener_id() is not None and theirs.wakes > 0)
            await asyncio.sleep(0.2)  # both have listed the stream (within INTEREST_SECONDS)
            mine.wakes = theirs.wakes = 0
            # The writing process hands its append to its own feed, whose channel has sent it
            # (the wake-up that reaches every listener is skipped there): the other is woken.
            mine.head_position = 2**62
            await append_handed_to(writing.listener_id(), 0)
            await _eventually(lambda: theirs.wakes > 0)
            await asyncio.sleep(0.3)
            assert mine.wakes == 0
            # Once nobody else watches, its appends send no wake-up at all.
            watching.release(theirs)
            await _eventually(lambda: not watching.listening)
            theirs.wakes = 0
            mine.head_position = 0  # so that a wake-up, if one came, would wake it
            await append_handed_to(writing.listener_id(), 1)
            await asyncio.sleep(0.3)
            assert (mine.wakes, theirs.wakes) == (0, 0)
            # An append nobody hands over wakes the feed that watches.
            await append_handed_to(None, 2)
            await _eventually(lambda: mine.wakes > 0)
        finally:
            await watching.stop()

    _with_feed(writing, body)


def _listener_rows(database_url: str, listener: str) -> tuple[int, int]:
    """The feed's rows: its listener's (0 or 1) and its streams'."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        listeners = connection.execute(
            "SELECT count(*) FROM wakeup_listeners WHERE listener = %s", [listener]
        ).fetchone()
        streams = connection.execute(
            "SELECT count(*) FROM wakeup_streams WHERE listener = %s", [listener]
        ).fetchone()
    assert listeners is not None and streams is not None
    return int(listeners[0]), int(streams[0])


def test_stopping_the_feed_deletes_its_listener_and_its_streams(database_url: str) -> None:
    # Left behind, the row would make every other process's appends to these streams send
    # wake-ups to nobody until its lease lapsed (and a renewal deleted it).
    feed = EventFeed(database_url, poll_seconds=60)
    watched = RecordingChannel("table-stopped")
    listeners: list[str] = []

    async def body() -> None:
        feed.channel(watched.stream_id, lambda: watched)
        await _eventually(lambda: feed.listening and watched.wakes > 0)
        listener = feed.listener_id()
        assert listener is not None
        listeners.append(listener)
        rows = await asyncio.to_thread(_listener_rows, database_url, listener)
        assert rows == (1, 1)

    _with_feed(feed, body)
    assert _listener_rows(database_url, listeners[0]) == (0, 0)
    assert not feed.listening and feed.listener_id() is None

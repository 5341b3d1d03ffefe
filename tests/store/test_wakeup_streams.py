"""Wake-ups per stream (migration 0012): a feed that lists its streams is woken by appends to
them only, never by an append whose caller hands the events to that feed itself; its streams go
with its row when it stops listening, and a lapsed listener's rows are deleted by another feed's
renewal instead of staying for good; an append that spares the listeners of event types wakes
only its stream's watchers."""

from __future__ import annotations

from typing import Any

import psycopg

from sapsam.log.records import NewEvent
from sapsam.store.appends import append
from sapsam.store.subscriptions import (
    Wakeup,
    listen,
    listen_for_streams,
    listener_id,
    parse_wakeup,
    renew_feed,
    unlisten,
    watch_streams,
)

connect = psycopg.AsyncConnection.connect


async def _wakeups(
    listener: psycopg.AsyncConnection[Any], seconds: float, stop_after: int | None = None
) -> list[Wakeup]:
    """The wake-ups received within ``seconds`` (or the first ``stop_after`` of them)."""
    notifications = listener.notifies(timeout=seconds, stop_after=stop_after)
    return [parse_wakeup(notification.payload) async for notification in notifications]


async def _rows(connection: psycopg.AsyncConnection[Any], table: str) -> int:
    cursor = await connection.execute(f"SELECT count(*) FROM {table}")
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def test_a_feed_is_woken_for_its_streams_by_other_writers_only(database_url: str) -> None:
    async with (
        await connect(database_url, autocommit=True) as feed,
        await connect(database_url, autocommit=True) as other_feed,
        await connect(database_url, autocommit=True) as writer,
    ):
        await append(writer, "watched", 0, [NewEvent("Tick", {})], "w1")
        await listen_for_streams(feed)
        heads = await watch_streams(feed, ["watched", "fresh"], [])
        assert heads == {"watched": 1, "fresh": 0}  # what committed before the row: read it
        me = listener_id(feed)

        # Another stream, and this feed's own append (handed to it): no wake-up at all.
        await append(writer, "unwatched", 0, [NewEvent("Tick", {})], "u1")
        await append(writer, "watched", 1, [NewEvent("Tick", {})], "w2", handed_to=me)
        assert await _wakeups(feed, 0.5) == []
        # Another process's append to its stream wakes it (a notifier sends it after the commit).
        other = await append(writer, "watched", 2, [NewEvent("Tick", {})], "w3", handed_to="9")
        assert await _wakeups(feed, 30, 1) == [Wakeup("watched", other.last_position)]

        # A second feed watching the stream is woken by the first feed's own appends.
        await listen_for_streams(other_feed)
        await watch_streams(other_feed, ["watched"], [])
        mine = await append(writer, "watched", 3, [NewEvent("Tick", {})], "w4", handed_to=me)
        assert await _wakeups(other_feed, 30, 1) == [Wakeup("watched", mine.last_position)]
        assert [w.position for w in await _wakeups(feed, 0.5)] == [mine.last_position]  # ditto

        # Unlisted, or unlistened (its streams go with its row): no wake-up.
        await watch_streams(other_feed, [], ["watched"])
        await unlisten(feed)
        assert await _rows(writer, "wakeup_streams") == 0
        await append(writer, "watched", 4, [NewEvent("Tick", {})], "w5")
        assert await _wakeups(other_feed, 0.5) == []


async def test_a_lapsed_listener_is_deleted_with_its_streams(database_url: str) -> None:
    async with (
        await connect(database_url, autocommit=True) as dead,
        await connect(database_url, autocommit=True) as live,
        await connect(database_url, autocommit=True) as writer,
    ):
        await listen_for_streams(dead)
        await watch_streams(dead, ["a", "b"], [])
        # Its process died long ago (its row stopped being renewed): it costs no wake-up ...
        await writer.execute("UPDATE wakeup_listeners SET expires_at = now() - interval '1 second'")
        await listen_for_streams(live)
        await append(writer, "a", 0, [NewEvent("Tick", {})], "a1")
        assert await _wakeups(dead, 0.5) == []
        # ... and once lapsed for a lease, the next renewal of any feed deletes it.
        await writer.execute(
            "UPDATE wakeup_listeners SET expires_at = now() - interval '1 hour'"
            " WHERE listener = %s",
            [listener_id(dead)],
        )
        assert await renew_feed(live) is False  # its own row was there
        assert await _rows(writer, "wakeup_streams") == 0
        assert await _rows(writer, "wakeup_listeners") == 1
        # A feed whose row went (deleted while it stalled) learns it must list its streams again.
        assert await renew_feed(dead) is True


async def test_an_append_that_spares_type_listeners_wakes_only_the_streams_watchers(
    database_url: str,
) -> None:
    async with (
        await connect(database_url, autocommit=True) as follower,
        await connect(database_url, autocommit=True) as feed,
        await connect(database_url, autocommit=True) as writer,
    ):
        await listen(follower, ["DealScored"])  # as the results process follows scores
        await listen_for_streams(feed)
        await watch_streams(feed, ["table-b"], [])

        # Without the wish: the type listener's wake-up is sent, as before.
        scored = await append(writer, "table-a", 0, [NewEvent("DealScored", {})], "a1")
        assert await _wakeups(follower, 30, 1) == [Wakeup("table-a", scored.last_position)]
        assert await _wakeups(feed, 30, 1) == [Wakeup("table-a", scored.last_position)]

        # Sparing type listeners: nobody else wants table-a's score, so none is sent at all.
        await append(
            writer, "table-a", 1, [NewEvent("DealScored", {})], "a2", wake_type_listeners=False
        )
        assert await _wakeups(follower, 0.5) == []
        assert await _wakeups(feed, 0.1) == []
        # ... while a stream watched elsewhere still has its wake-up sent.
        watched = await append(
            writer, "table-b", 0, [NewEvent("DealScored", {})], "b1", wake_type_listeners=False
        )
        assert await _wakeups(feed, 30, 1) == [Wakeup("table-b", watched.last_position)]

"""The per-process notifier: wake-ups go out after the appends, coalesced per stream, and the
last position of every stream appended to is always announced."""

from __future__ import annotations

from typing import Any

import psycopg

from sapsam.log.records import NewEvent
from sapsam.store.appends import append
from sapsam.store.subscriptions import Wakeup, listen, parse_wakeup

connect = psycopg.AsyncConnection.connect


async def test_every_streams_last_position_is_announced(database_url: str) -> None:
    streams = ("a", "b", "c")
    last: dict[str, int] = {}
    async with (
        await connect(database_url, autocommit=True) as listener,
        await connect(database_url, autocommit=True) as writer,
    ):
        await listen(listener)
        for version in range(10):
            for stream in streams:
                result = await append(
                    writer,
                    stream,
                    version,
                    [NewEvent("Tick", {"n": version})],
                    f"{stream}{version}",
                )
                last[stream] = result.last_position
        announced: dict[str, int] = {}
        received = 0
        async for notification in listener.notifies(timeout=60):
            wakeup = parse_wakeup(notification.payload)
            announced[wakeup.stream_id] = max(announced.get(wakeup.stream_id, 0), wakeup.position)
            received += 1
            if announced == last:
                break
    assert announced == last
    # Coalesced or not, never more wake-ups than appends.
    assert received <= 10 * len(streams)


async def _next(
    listener: psycopg.AsyncConnection[Any], seconds: float = 60
) -> list[psycopg.Notify]:
    return [notification async for notification in listener.notifies(timeout=seconds, stop_after=1)]


async def test_appends_nobody_wants_a_wake_up_for_send_none(database_url: str) -> None:
    async with (
        await connect(database_url, autocommit=True) as listener,
        await connect(database_url, autocommit=True) as writer,
    ):
        # LISTEN alone is not enough: a wake-up goes out only to a listener that says it wants it.
        await listener.execute("LISTEN sapsam_events")
        await append(writer, "quiet", 0, [NewEvent("Tick", {})], "q1")
        # This listener wants scored deals only, and then every append.
        await listen(listener, ["Scored"])
        await append(writer, "quiet", 1, [NewEvent("Tick", {})], "q2")
        scored = await append(
            writer, "loud", 0, [NewEvent("Tick", {}), NewEvent("Scored", {})], "l1"
        )
        (first,) = await _next(listener)
        await listen(listener)
        last = await append(writer, "quiet", 2, [NewEvent("Tick", {})], "q3")
        (second,) = await _next(listener)
        # Once it unregisters (and after a lapsed row), appends send none again.
        await listener.execute("DELETE FROM wakeup_listeners")
        await append(writer, "quiet", 3, [NewEvent("Tick", {})], "q4")
        await listener.execute(
            "INSERT INTO wakeup_listeners VALUES (pg_backend_pid()::text, NULL,"
            " now() - interval '1 second')"
        )
        await append(writer, "quiet", 4, [NewEvent("Tick", {})], "q5")
        later = [notification async for notification in listener.notifies(timeout=1)]
    assert parse_wakeup(first.payload) == Wakeup("loud", scored.last_position)
    assert parse_wakeup(second.payload) == Wakeup("quiet", last.last_position)
    assert later == []

"""The per-process notifier: wake-ups go out after the appends, coalesced per stream, and the
last position of every stream appended to is always announced."""

from __future__ import annotations

import psycopg

from sapsam.log.records import NewEvent
from sapsam.store.appends import append
from sapsam.store.subscriptions import Wakeup, listen_for_wakeups, parse_wakeup


def test_every_streams_last_position_is_announced(database_url: str) -> None:
    streams = ("a", "b", "c")
    last: dict[str, int] = {}
    with (
        psycopg.connect(database_url, autocommit=True) as listener,
        psycopg.connect(database_url, autocommit=True) as writer,
    ):
        listen_for_wakeups(listener)
        for version in range(10):
            for stream in streams:
                result = append(
                    writer,
                    stream,
                    version,
                    [NewEvent("Tick", {"n": version})],
                    f"{stream}{version}",
                )
                last[stream] = result.last_position
        announced: dict[str, int] = {}
        received = 0
        for notification in listener.notifies(timeout=60):
            wakeup = parse_wakeup(notification.payload)
            announced[wakeup.stream_id] = max(announced.get(wakeup.stream_id, 0), wakeup.position)
            received += 1
            if announced == last:
                break
    assert announced == last
    # Coalesced or not, never more wake-ups than appends.
    assert received <= 10 * len(streams)


def test_appends_nobody_wants_a_wake_up_for_send_none(database_url: str) -> None:
    with (
        psycopg.connect(database_url, autocommit=True) as listener,
        psycopg.connect(database_url, autocommit=True) as writer,
    ):
        # LISTEN alone is not enough: a wake-up goes out only to a listener that says it wants it.
        listener.execute("LISTEN sapsam_events")
        append(writer, "quiet", 0, [NewEvent("Tick", {})], "q1")
        # This listener wants scored deals only, and then every append.
        listen_for_wakeups(listener, ["Scored"])
        append(writer, "quiet", 1, [NewEvent("Tick", {})], "q2")
        scored = append(writer, "loud", 0, [NewEvent("Tick", {}), NewEvent("Scored", {})], "l1")
        first = next(listener.notifies(timeout=60, stop_after=1))
        listen_for_wakeups(listener)
        last = append(writer, "quiet", 2, [NewEvent("Tick", {})], "q3")
        second = next(listener.notifies(timeout=60, stop_after=1))
        # Once it unregisters (and after a lapsed row), appends send none again.
        listener.execute("DELETE FROM wakeup_listeners")
        append(writer, "quiet", 3, [NewEvent("Tick", {})], "q4")
        listener.execute(
            "INSERT INTO wakeup_listeners VALUES (pg_backend_pid()::text, NULL,"
            " now() - interval '1 second')"
        )
        append(writer, "quiet", 4, [NewEvent("Tick", {})], "q5")
        later = list(listener.notifies(timeout=1))
    assert parse_wakeup(first.payload) == Wakeup("loud", scored.last_position)
    assert parse_wakeup(second.payload) == Wakeup("quiet", last.last_position)
    assert later == []

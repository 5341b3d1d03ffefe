"""The per-process notifier: wake-ups go out after the appends, coalesced per stream, and the
last position of every stream appended to is always announced."""

from __future__ import annotations

import psycopg

from sapsam.log.records import NewEvent
from sapsam.store.appends import NOTIFY_CHANNEL, append
from sapsam.store.subscriptions import parse_wakeup


def test_every_streams_last_position_is_announced(database_url: str) -> None:
    streams = ("a", "b", "c")
    last: dict[str, int] = {}
    with (
        psycopg.connect(database_url, autocommit=True) as listener,
        psycopg.connect(database_url, autocommit=True) as writer,
    ):
        listener.execute(f"LISTEN {NOTIFY_CHANNEL}")
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

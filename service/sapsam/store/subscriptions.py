"""Following the log live: LISTEN for wake-ups, read the log, poll when nothing wakes us.

Every append sends ``NOTIFY sapsam_events`` on commit with a payload of ``{"stream", "position"}``:
a wake-up signal, never the data. A follower reads the events itself from its checkpoint, so a lost
or coalesced notification costs latency only, never an event; the timed wait is the polling
fallback. Any number of server processes can follow the same table this way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import psycopg
from psycopg import sql

from sapsam.store.appends import NOTIFY_CHANNEL
from sapsam.store.reads import read_all
from sapsam.store.records import RecordedEvent


@dataclass(frozen=True)
class Wakeup:
    """A decoded notification: which stream moved and its last position."""

    stream_id: str
    position: int


def parse_wakeup(payload: str) -> Wakeup:
    """Decode the payload an append sends with its NOTIFY."""
    decoded = json.loads(payload)
    return Wakeup(stream_id=str(decoded["stream"]), position=int(decoded["position"]))


def follow(
    conninfo: str,
    after_position: int = 0,
    stream_id: str | None = None,
    *,
    poll_seconds: float = 1.0,
    batch_size: int = 500,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[RecordedEvent]:
    """Yield every event after ``after_position`` in global order, then new ones as they commit.

    With ``stream_id``, only that stream's events. Opens its own connection (LISTEN is a session
    property, so it cannot come from a shared pool) and closes it when the iterator is closed.
    Between batches it waits for a notification for at most ``poll_seconds``, then reads anyway.
    ``should_stop`` is checked whenever the follower has caught up; returning True ends the
    iteration. Never skips an event: see ``sapsam.store.reads`` for why the global order is safe.
    """
    with psycopg.connect(conninfo, autocommit=True) as connection:
        # LISTEN before the first read: anything committed after that read wakes us.
        connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(NOTIFY_CHANNEL)))
        checkpoint = after_position
        while True:
            batch = read_all(connection, checkpoint, batch_size, stream_id)
            for event in batch:
                checkpoint = event.position
                yield event
            if len(batch) == batch_size:
                continue
            if should_stop is not None and should_stop():
                return
            for _ in connection.notifies(timeout=poll_seconds, stop_after=1):
                pass

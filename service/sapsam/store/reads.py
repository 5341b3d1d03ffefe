"""Reading the event log: one stream from a version, or every stream in global order.

Why reading the global order by ``position > checkpoint`` never skips an event: every insert into
``events`` holds one transaction-scoped advisory lock from before its rows draw positions until its
commit (see ``sapsam.store.appends`` and the ``events_serialise_inserts`` trigger). So when a
reader sees position N committed, every transaction that drew a lower position has already
committed or rolled back: nothing can later appear below N. Gaps in the positions are rolled-back
appends and stay gaps for ever.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from sapsam.store.records import JsonObject, RecordedEvent

Connection = psycopg.Connection[Any]


def event_from_row(row: Sequence[Any]) -> RecordedEvent:
    """Turn a row (position, stream_id, version, type, schema_version, data, metadata, hash)."""
    position, stream_id, version, event_type, schema_version, data, metadata, hash_bytes = row
    event_data: JsonObject = data
    event_metadata: JsonObject = metadata
    return RecordedEvent(
        position=int(position),
        stream_id=str(stream_id),
        version=int(version),
        type=str(event_type),
        schema_version=int(schema_version),
        data=event_data,
        metadata=event_metadata,
        hash=bytes(hash_bytes),
    )


def read_stream(
    connection: Connection,
    stream_id: str,
    from_version: int = 1,
    to_version: int | None = None,
) -> list[RecordedEvent]:
    """The events of one stream with ``from_version <= version [<= to_version]``, in order."""
    rows = connection.execute(
        "SELECT position, stream_id, version, type, schema_version, data, metadata, hash"
        " FROM events WHERE stream_id = %s AND version >= %s AND version <= %s"
        " ORDER BY version",
        [stream_id, from_version, to_version if to_version is not None else 2**31 - 1],
    ).fetchall()
    return [event_from_row(row) for row in rows]


def read_all(
    connection: Connection,
    after_position: int = 0,
    limit: int = 1000,
    stream_id: str | None = None,
) -> list[RecordedEvent]:
    """Up to ``limit`` events with ``position > after_position`` in global order.

    Use the last returned position as the next checkpoint. With ``stream_id`` only that stream's
    events are returned (still by global position). Safe against late commits: see the module
    docstring.
    """
    if stream_id is None:
        rows = connection.execute(
            "SELECT position, stream_id, version, type, schema_version, data, metadata, hash"
            " FROM events WHERE position > %s ORDER BY position LIMIT %s",
            [after_position, limit],
        ).fetchall()
    else:
        rows = connection.execute(
            "SELECT position, stream_id, version, type, schema_version, data, metadata, hash"
            " FROM events WHERE stream_id = %s AND position > %s ORDER BY position LIMIT %s",
            [stream_id, after_position, limit],
        ).fetchall()
    return [event_from_row(row) for row in rows]


def iterate_all(
    connection: Connection, after_position: int = 0, batch_size: int = 5000
) -> Iterator[RecordedEvent]:
    """Every event after ``after_position`` in global order, read in batches (for replays)."""
    checkpoint = after_position
    while True:
        batch = read_all(connection, checkpoint, batch_size)
        if not batch:
            return
        yield from batch
        checkpoint = batch[-1].position


def stream_version(connection: Connection, stream_id: str) -> int:
    """The stream's current version: 0 for a stream with no events."""
    row = connection.execute(
        "SELECT coalesce(max(version), 0) FROM events WHERE stream_id = %s", [stream_id]
    ).fetchone()
    return int(row[0]) if row else 0


def last_position(connection: Connection) -> int:
    """The highest committed global position, 0 for an empty log."""
    row = connection.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()
    return int(row[0]) if row else 0

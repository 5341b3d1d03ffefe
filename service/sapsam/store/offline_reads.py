"""The log read synchronously, for work that is not a call: the audit (in a REPEATABLE READ
snapshot of its own, sometimes in worker processes), the read models' rebuild at start-up and the
offline follower. The statements and the decoding are ``sapsam.store.reads``'s; only the driver
differs (``psycopg.Connection`` here, ``psycopg.AsyncConnection`` there).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus

from sapsam.log.records import RecordedEvent
from sapsam.store.queries import query
from sapsam.store.reads import (
    EVENT_COLUMNS,
    NO_MARK,
    READ_ALL_QUERY,
    STREAM_CONDITION,
    recorded_events,
    stream_parameters,
    without_hole,
)

Connection = psycopg.Connection[Any]


def select_events(
    connection: Connection, condition: str, parameters: Sequence[Any]
) -> list[RecordedEvent]:
    """``sapsam.store.reads.select_events`` on a synchronous connection."""
    rows = (
        connection.cursor(binary=True)
        .execute(f"SELECT {EVENT_COLUMNS} FROM events WHERE {condition}", parameters)
        .fetchall()
    )
    return recorded_events(rows)


def read_stream(
    connection: Connection,
    stream_id: str,
    from_version: int = 1,
    to_version: int | None = None,
) -> list[RecordedEvent]:
    """The events of one stream with ``from_version <= version [<= to_version]``, in order."""
    return select_events(
        connection, STREAM_CONDITION, stream_parameters(stream_id, from_version, to_version)
    )


def safe_position(connection: Connection) -> int:
    """The proven high-water mark (``sapsam.store.reads``)."""
    row = connection.execute(query("events.safe_position")).fetchone()
    return int(row[0]) if row else 0


def read_all(
    connection: Connection,
    after_position: int = 0,
    limit: int = 1000,
    stream_id: str | None = None,
) -> list[RecordedEvent]:
    """``sapsam.store.reads.read_all`` on a synchronous connection."""
    if connection.info.transaction_status != TransactionStatus.IDLE and connection.execute(
        "SELECT current_setting('transaction_isolation') <> 'read committed'"
    ).fetchone() == (True,):
        raise RuntimeError("read_all needs READ COMMITTED: each statement must see a new snapshot")
    if stream_id is None:
        rows = (
            connection.cursor(binary=True)
            .execute(READ_ALL_QUERY, [after_position, limit, NO_MARK])
            .fetchall()
        )
        if without_hole(rows, after_position):
            return recorded_events(rows)
    high_water = safe_position(connection)
    if high_water <= after_position:
        return []
    if stream_id is not None:
        return select_events(
            connection,
            "stream_id = %s AND position > %s AND position <= %s ORDER BY position LIMIT %s",
            [stream_id, after_position, high_water, limit],
        )
    rows = (
        connection.cursor(binary=True)
        .execute(READ_ALL_QUERY, [after_position, limit, high_water])
        .fetchall()
    )
    return recorded_events(rows)


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

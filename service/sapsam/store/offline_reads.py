"""The log read synchronously, for work that is not a call: the audit (in a REPEATABLE READ
snapshot of its own, sometimes in worker processes), the read models' rebuild at start-up and the
offline follower. The statements and the decoding are ``sapsam.store.reads``'s; only the driver
differs (``psycopg.Connection`` here, ``psycopg.AsyncConnection`` there): ``read_all``'s proof of
the high-water mark is one plan of statements (``reads.read_all_plan``) both drive.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

import psycopg
from psycopg.pq import TransactionStatus

from sapsam.log.records import RecordedEvent
from sapsam.store.queries import query
from sapsam.store.reads import (
    EVENT_COLUMNS,
    STREAM_CONDITION,
    read_all_plan,
    recorded_events,
    stream_parameters,
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
    """``sapsam.store.reads.read_all`` on a synchronous connection: the same plan
    (``read_all_plan``), driven here."""
    in_transaction = connection.info.transaction_status != TransactionStatus.IDLE
    plan = read_all_plan(in_transaction, after_position, limit, stream_id)
    try:
        statement = next(plan)
        while True:
            rows = connection.cursor(binary=True).execute(*statement).fetchall()
            statement = plan.send(rows)
    except StopIteration as done:
        return cast(list[RecordedEvent], done.value)


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

"""Appends carry their read models (and the caller's companions) inside the insert's statement.

The same projector applied after the insert (a rebuild) must give the very same rows; a projector
that cannot say its change as a statement, a batch that creates the table, a ``project`` callback
or a caller's transaction take the transaction path, as before.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest
from store_sample_projectors import TYPE_COUNTS

from sapsam.audit.sample_series import series_events
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.log.records import ConcurrencyConflict, NewEvent
from sapsam.store.append_statement import inline_where_possible
from sapsam.store.appends import append
from sapsam.store.projections import InlineStatement, rebuild_projections
from sapsam.store.table_projections import projectors, table_rows_as_json

Connection = psycopg.Connection[Any]


@pytest.fixture
def connection(database_url: str) -> Iterator[Connection]:
    with psycopg.connect(database_url, autocommit=True) as connection:
        rebuild_projections(connection, [*projectors(), TYPE_COUNTS])
        yield connection


@pytest.fixture
async def writer(
    database_url: str, connection: Connection
) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """The appends' (asynchronous) connection; ``connection`` reads and rebuilds."""
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        yield opened


def encoded(table_id: uuid.UUID, seat_count: int = 3) -> list[NewEvent]:
    """A whole series of one table, as the table service appends it."""
    return [
        NewEvent(type_name, data, schema_version)
        for type_name, schema_version, data in map(
            DEFAULT_CODEC.encode, series_events(table_id, seat_count, 2)
        )
    ]


async def test_one_event_at_a_time_gives_the_rows_a_rebuild_gives(
    connection: Connection, writer: psycopg.AsyncConnection[Any]
) -> None:
    # Every event type of a game, each appended on its own: each goes through the inline path.
    for number in range(2):
        table_id = uuid.UUID(int=number + 1)
        for version, event in enumerate(encoded(table_id, 2 + number)):
            stream = f"table-{table_id}"
            inlined = inline_where_possible(
                writer, stream, version, [event], {}, projectors(), None
            )
            assert inlined[0] == () and all(isinstance(s, InlineStatement) for s in inlined[1])
            await append(
                writer,
                stream,
                version,
                [event],
                f"r-{table_id}-{version}",
                "t",
                projectors=projectors(),
            )
    live = table_rows_as_json(connection)
    tables = connection.execute(
        "SELECT phase, deals_scored FROM table_state ORDER BY table_id"
    ).fetchall()
    assert tables == [("BETWEEN_DEALS", 2), ("BETWEEN_DEALS", 2)]
    scores = connection.execute("SELECT count(*) FROM seat_scores").fetchone()
    assert scores == (2 * 2 + 2 * 3,)  # two deals at a 2-seat table, two at a 3-seat one
    rebuild_projections(connection, projectors())
    assert table_rows_as_json(connection) == live


async def test_batches_and_transactions_take_the_transaction_path(
    connection: Connection, writer: psycopg.AsyncConnection[Any]
) -> None:
    table_id = uuid.uuid4()
    stream = f"table-{table_id}"
    events = encoded(table_id)

    def path(**changes: Any) -> tuple[object, list[InlineStatement] | None]:
        arguments: dict[str, Any] = {
            "connection": writer,
            "stream_id": stream,
            "expected_version": 0,
            "events": events[:1],
            "metadata": {},
            "projectors": projectors(),
            "project": None,
            **changes,
        }
        after, inside = inline_where_possible(**arguments)
        return tuple(after), inside

    assert path()[0] == ()  # the one-event case: everything inside the insert
    assert path(events=events[:2]) == (tuple(projectors()), None)  # a batch creating the table
    batch = path(events=events[1:3], expected_version=1)  # later batches: inside the insert
    assert batch[0] == () and batch[1] is not None and len(batch[1]) == 1
    assert path(project=lambda connection, recorded: None) == (tuple(projectors()), None)
    assert path(projectors=[*projectors(), TYPE_COUNTS]) == (
        (*projectors(), TYPE_COUNTS),  # a projector with no statement of its own
        None,
    )
    async with writer.transaction():  # a caller's transaction
        assert path() == (tuple(projectors()), None)
    # A projector for other streams is left out, not applied for nothing.
    assert path(stream_id=f"tournament-{table_id}") == ((), [])


@pytest.mark.parametrize("batch_size", [2, 3, 5])
async def test_batches_give_the_rows_a_rebuild_gives(
    connection: Connection, writer: psycopg.AsyncConnection[Any], batch_size: int
) -> None:
    # A whole series appended in batches (the first event alone: it inserts the row), each batch
    # one statement whose table_state update chains its events.
    table_id = uuid.uuid4()
    stream = f"table-{table_id}"
    events = encoded(table_id, 3)
    await append(writer, stream, 0, events[:1], "create", "t", projectors=projectors())
    version = 1
    while version < len(events):
        batch = events[version : version + batch_size]
        after, inside = inline_where_possible(
            writer, stream, version, batch, {}, projectors(), None
        )
        assert after == () and inside is not None  # one statement: no projector after it
        await append(writer, stream, version, batch, f"b-{version}", "t", projectors=projectors())
        version += len(batch)
    live = table_rows_as_json(connection)
    assert connection.execute(
        "SELECT phase, deals_scored, version FROM table_state WHERE table_id = %s", [table_id]
    ).fetchone() == ("BETWEEN_DEALS", 2, len(events))
    rebuild_projections(connection, projectors())
    assert table_rows_as_json(connection) == live


async def test_secret_companions_go_with_the_insert_or_not_at_all(
    connection: Connection, writer: psycopg.AsyncConnection[Any]
) -> None:
    from sapsam.store.append_statement import secret_companions

    table_id = uuid.uuid4()
    stream = f"table-{table_id}"
    events = encoded(table_id)
    await append(writer, stream, 0, events[:1], "create", "t", projectors=projectors())
    keep = secret_companions(stream, [(1, b"seed-1")], [])
    await append(
        writer, stream, 1, events[1:2], "keep", "t", projectors=projectors(), companions=keep
    )

    def secrets() -> list[tuple[Any, ...]]:
        return connection.execute(
            "SELECT deal_number, seed FROM deal_secrets WHERE stream_id = %s ORDER BY 1", [stream]
        ).fetchall()

    assert secrets() == [(1, b"seed-1")]
    other = secret_companions(stream, [(2, b"seed-2")], [1])
    with pytest.raises(ConcurrencyConflict):  # refused: neither kept nor forgotten
        await append(writer, stream, 1, events[1:2], "late", "t", companions=other)
    assert secrets() == [(1, b"seed-1")]
    # A batch with secrets, inside the insert; and the same on the transaction path.
    await append(
        writer, stream, 2, events[2:4], "both", "t", projectors=projectors(), companions=other
    )
    assert secrets() == [(2, b"seed-2")]
    async with writer.transaction():
        forget = secret_companions(stream, [], [2])
        await append(writer, stream, 4, events[4:5], "in-tx", "t", companions=forget)
    assert secrets() == []


def test_companions_parameters_are_renamed_apart() -> None:
    from sapsam.store import append_statement

    parameters: dict[str, Any] = {"stream": "table-x"}
    statement = append_statement.with_companions(
        [
            InlineStatement("UPDATE a SET x = %(stream)s WHERE y = %(y)s", {"stream": 1, "y": 2}),
            InlineStatement("UPDATE b SET x = %(y)s", {"y": 3}),
        ],
        parameters,
    )
    assert parameters == {
        "stream": "table-x",
        "companion0_stream": 1,
        "companion0_y": 2,
        "companion1_y": 3,
    }
    assert (
        "companion_0 AS (UPDATE a SET x = %(companion0_stream)s WHERE y = %(companion0_y)s)"
        in statement
    )
    assert "companion_1 AS (UPDATE b SET x = %(companion1_y)s)" in statement
    assert statement.rstrip().endswith("ORDER BY inserted.version")


async def test_a_refused_insert_changes_no_read_model(
    connection: Connection, writer: psycopg.AsyncConnection[Any]
) -> None:
    table_id = uuid.uuid4()
    stream = f"table-{table_id}"
    events = encoded(table_id)
    await append(writer, stream, 0, events[:1], "first", "t", projectors=projectors())
    before = table_rows_as_json(connection)
    with pytest.raises(ConcurrencyConflict):  # the version is taken: nothing written
        await append(writer, stream, 0, events[1:2], "second", "t", projectors=projectors())
    assert table_rows_as_json(connection) == before


def test_the_servers_read_models_let_a_table_write_be_one_statement(
    writer: psycopg.AsyncConnection[Any],
) -> None:
    from sapsam.cli.bootstrap import _projectors as server_projectors

    table_id = uuid.uuid4()
    after, inside = inline_where_possible(
        writer, f"table-{table_id}", 0, encoded(table_id)[:1], {}, server_projectors(), None
    )
    assert after == () and len(inside) == 1  # table_state's statement; nothing else applies

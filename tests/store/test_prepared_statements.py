"""An append's own statement through libpq's prepared-statement calls
(``sapsam.store.prepared_statements``): the same rows written and read back as through psycopg's
``execute``, failures as the psycopg errors psycopg raises with the connection left idle, texts
prepared once per connection (a new connection prepares anew), and psycopg's ``execute``
wherever a value or a text does not fit."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from sapsam.log.records import ConcurrencyConflict, NewEvent
from sapsam.store.appends import append
from sapsam.store.prepared_statements import MAX_TEXTS, statement_rows
from sapsam.store.reads import read_stream

Connection = psycopg.AsyncConnection[Any]

TABLE = """
CREATE TEMPORARY TABLE written (
    n bigint PRIMARY KEY, small int, label text, body jsonb, digest bytea, flag boolean,
    id uuid, counts bigint[], fouls boolean[], seat_text text
)
"""
# Every kind of parameter an append's statement has: casts, inferred types, a name used twice.
INSERT = """
INSERT INTO written (n, small, label, body, digest, flag, id, counts, fouls, seat_text)
VALUES (%(n)s::bigint, %(small)s, %(label)s::text, %(body)s::jsonb, %(digest)s::bytea,
    %(flag)s::boolean, %(id)s, %(counts)s::bigint[], %(fouls)s::boolean[], %(seat)s::text)
RETURNING n, small, flag, n %% 7 = 0, (SELECT count(*) FROM written WHERE n < %(n)s::bigint)
"""


def values(n: int, **changes: Any) -> dict[str, Any]:
    parameters: dict[str, Any] = {
        "n": n,
        "small": n % 5,
        "label": f"é {n} ✓",
        "body": '{"a": [1, 2, {"b": null}]}',
        "digest": bytes(range(256))[: n % 33],
        "flag": n % 2 == 0,
        "id": uuid.UUID(int=n),
        "counts": [n, -n, None],
        "fouls": [True, False],
        "seat": n % 4,
    }
    parameters.update(changes)
    return parameters


async def stored(connection: Connection, n: int) -> tuple[Any, ...] | None:
    cursor = await connection.execute("SELECT * FROM written WHERE n = %s", [n])
    return await cursor.fetchone()


async def prepared_names(connection: Connection) -> list[str]:
    cursor = await connection.execute(
        "SELECT name FROM pg_prepared_statements WHERE name LIKE 'sapsam_statement_%%'"
        " ORDER BY name"
    )
    return [str(row[0]) for row in await cursor.fetchall()]


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[Connection]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        await opened.execute(TABLE)
        yield opened


async def test_the_same_rows_are_written_and_read_as_through_psycopg(
    connection: Connection,
) -> None:
    variants = [
        values(1),
        values(14, body=Jsonb({"x": "ü", "y": [None, True]}), id=str(uuid.UUID(int=3))),
        values(21, label=None, digest=None, flag=None, id=None, counts=None, body="[]"),
    ]
    for parameters in variants:
        mine = await statement_rows(connection, INSERT, parameters)
        alike = {**parameters, "n": parameters["n"] + 7000}  # the same n % 7
        theirs = await (await connection.execute(INSERT, alike)).fetchall()
        assert len(mine) == 1 and mine[0][1:3] == theirs[0][1:3] and mine[0][3] == theirs[0][3]
        row, twin = await stored(connection, parameters["n"]), await stored(connection, alike["n"])
        assert row is not None and twin is not None and row[1:] == twin[1:]
    assert await prepared_names(connection) == ["sapsam_statement_0"]  # prepared once


async def test_a_failure_raises_psycopgs_error_and_leaves_the_connection_idle(
    connection: Connection,
) -> None:
    await statement_rows(connection, INSERT, values(5))
    with pytest.raises(errors.UniqueViolation) as raised:
        await statement_rows(connection, INSERT, values(5))
    assert raised.value.diag.constraint_name == "written_pkey"
    assert connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    with pytest.raises(errors.NumericValueOutOfRange):
        await statement_rows(connection, INSERT, values(6, small=2**40))
    assert await statement_rows(connection, INSERT, values(7)) == [(7, 2, False, True, 1)]


async def test_a_new_connection_prepares_anew(database_url: str) -> None:
    for _ in range(2):
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as fresh:
            await fresh.execute(TABLE)
            assert await prepared_names(fresh) == []
            assert await statement_rows(fresh, INSERT, values(2)) == [(2, 2, True, False, 0)]
            assert await prepared_names(fresh) == ["sapsam_statement_0"]


async def test_what_does_not_fit_goes_through_psycopg(connection: Connection) -> None:
    # A value of a kind the path does not send for its parameter: psycopg's own adaptation,
    # and psycopg's own refusals.
    assert await statement_rows(connection, INSERT, values(8, digest=bytearray(b"ab"))) == [
        (8, 3, True, False, 0)
    ]
    row = await stored(connection, 8)
    assert row is not None and row[4] == b"ab"
    with pytest.raises(errors.DatatypeMismatch):  # a boolean for an integer column
        await statement_rows(connection, INSERT, values(9, small=True))
    with pytest.raises(psycopg.DataError):  # a NUL in text
        await statement_rows(connection, INSERT, values(9, label="a\x00b"))
    # A text whose parameter has no type without psycopg's: never prepared, still answered.
    assert await statement_rows(connection, "SELECT %(n)s + 1", {"n": 41}) == [(42,)]
    assert await statement_rows(connection, "SELECT %(n)s::text", {"n": "x"}) == [("x",)]
    # Statements deallocated behind its back: answered through psycopg, then prepared anew.
    await statement_rows(connection, INSERT, values(10))
    await connection.execute("DEALLOCATE ALL")
    assert await statement_rows(connection, INSERT, values(11)) == [(11, 1, False, False, 2)]
    assert await statement_rows(connection, INSERT, values(12)) == [(12, 2, True, False, 3)]
    assert len(await prepared_names(connection)) == 1  # the refused texts were not kept


async def test_an_append_goes_this_way_and_keeps_its_answers(database_url: str) -> None:
    async with (
        await psycopg.AsyncConnection.connect(database_url, autocommit=True) as first,
        await psycopg.AsyncConnection.connect(database_url, autocommit=True) as second,
    ):
        result = await append(first, "s", 0, [NewEvent("Counted", {"n": 1})], "r1")
        cursor = await first.execute(
            "SELECT statement FROM pg_prepared_statements WHERE name = 'sapsam_statement_0'"
        )
        text = await cursor.fetchone()
        assert text is not None and "INSERT INTO events" in str(text[0])
        # Retried: the first answer; a lost race: the conflict, with the current version.
        assert (await append(first, "s", 0, [NewEvent("Counted", {"n": 1})], "r1")).replayed
        with pytest.raises(ConcurrencyConflict) as conflict:
            await append(second, "s", 0, [NewEvent("Counted", {"n": 2})], "r2")
        assert conflict.value.current_version == 1
        (recorded,) = await read_stream(first, "s")
        assert recorded == result.events[0]


async def test_past_the_bound_texts_go_through_psycopg_unprepared(connection: Connection) -> None:
    for number in range(MAX_TEXTS + 3):
        text = f"SELECT %(n)s::int + {number}"
        assert await statement_rows(connection, text, {"n": 1}) == [(1 + number,)]
    assert len(await prepared_names(connection)) == MAX_TEXTS

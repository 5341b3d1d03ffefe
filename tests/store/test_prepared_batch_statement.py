"""The commit group's batch statement's shape (one text parameter, rows of integers and a boolean)
through libpq's prepared-statement calls (``sapsam.store.prepared_statements``): the rows psycopg
reads, failures as psycopg errors with the connection left idle, and texts prepared once per
connection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from sapsam.store.prepared_statements import _numbered, statement_rows

Connection = psycopg.AsyncConnection[Any]

# The batch statement's shape: one text parameter, rows (i, position, version, wanted).
ROWS = (
    "SELECT i, i::bigint * 1000000000000, i + 1, CASE WHEN i %% 3 = 0 THEN NULL ELSE i %% 2 = 0"
    " END FROM generate_series(1, length(%(members)s::text)) AS i"
)


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[Connection]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        yield opened


async def rows(connection: Connection, text: str, members: str) -> list[tuple[Any, ...]]:
    return await statement_rows(connection, text, {"members": members})


async def test_the_rows_are_the_ones_psycopg_reads(connection: Connection) -> None:
    for members in ("[1]", "[1, 2, 3]", "x" * 40):  # the same text again: prepared once
        expected = await (await connection.execute(ROWS, {"members": members})).fetchall()
        assert await rows(connection, ROWS, members) == expected
    assert len(expected) == 40 and expected[2][3] is None and expected[1][3] is True
    names = await (await connection.execute("SELECT name FROM pg_prepared_statements")).fetchall()
    assert ("sapsam_statement_0",) in names and ("sapsam_statement_1",) not in names


async def test_a_failing_statement_raises_and_leaves_the_connection_idle(
    connection: Connection,
) -> None:
    failing = "SELECT 1 / (length(%(members)s::text) - 2), 0, 0, true"
    with pytest.raises(psycopg.Error, match="division by zero"):
        await rows(connection, failing, "ab")
    assert connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert await (await connection.execute("SELECT 7")).fetchone() == (7,)
    assert await rows(connection, failing, "abc") == [(1, 0, 0, True)]
    with pytest.raises(psycopg.Error):  # a text PostgreSQL refuses raises as through psycopg
        await rows(connection, "SELECT nonsense(%(members)s)", "x")
    assert await rows(connection, ROWS, "x") == [(1, 1000000000000, 2, False)]


async def test_a_new_connection_prepares_its_own(database_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as first:
        assert await rows(first, ROWS, "ab") == [
            (1, 1000000000000, 2, False),
            (2, 2000000000000, 3, True),
        ]
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as second:
        assert await rows(second, ROWS, "a") == [(1, 1000000000000, 2, False)]
        names = await (await second.execute("SELECT name FROM pg_prepared_statements")).fetchall()
        assert names == [("sapsam_statement_0",)]


def test_the_text_is_numbered_as_postgresql_takes_it() -> None:
    assert _numbered("SELECT %(members)s, 5 %% 2") == (b"SELECT $1, 5 % 2", ["members"])
    # psycopg's other placeholders are left to psycopg
    assert _numbered("SELECT %(members)s, %s") is None

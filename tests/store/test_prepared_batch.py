"""The commit group's batch statement through libpq's prepared-statement calls
(``sapsam.store.prepared_batch``): the rows psycopg reads, failures as psycopg errors with the
connection left idle, and texts prepared once per connection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from sapsam.store.prepared_batch import PreparedBatches, _numbered

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


async def test_the_rows_are_the_ones_psycopg_reads(connection: Connection) -> None:
    prepared = PreparedBatches(connection)
    for members in ("[1]", "[1, 2, 3]", "x" * 40):  # the same text again: prepared once
        expected = await (await connection.execute(ROWS, {"members": members})).fetchall()
        assert await prepared.rows(ROWS, members) == expected
    assert len(expected) == 40 and expected[2][3] is None and expected[1][3] is True
    names = await (await connection.execute("SELECT name FROM pg_prepared_statements")).fetchall()
    assert ("sapsam_batch_0",) in names and ("sapsam_batch_1",) not in names


async def test_a_failing_statement_raises_and_leaves_the_connection_idle(
    connection: Connection,
) -> None:
    prepared = PreparedBatches(connection)
    failing = "SELECT 1 / (length(%(members)s::text) - 2), 0, 0, true"
    with pytest.raises(psycopg.Error, match="division by zero"):
        await prepared.rows(failing, "ab")
    assert connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert await (await connection.execute("SELECT 7")).fetchone() == (7,)
    assert await prepared.rows(failing, "abc") == [(1, 0, 0, True)]
    with pytest.raises(psycopg.Error):  # a text PostgreSQL refuses is not remembered
        await prepared.rows("SELECT nonsense(%(members)s)", "x")
    assert await prepared.rows(ROWS, "x") == [(1, 1000000000000, 2, False)]


async def test_a_new_connection_prepares_its_own(database_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as first:
        prepared = PreparedBatches(first)
        assert prepared.serves(first)
        assert await prepared.rows(ROWS, "ab") == [
            (1, 1000000000000, 2, False),
            (2, 2000000000000, 3, True),
        ]
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as second:
        assert not prepared.serves(second)
        assert await PreparedBatches(second).rows(ROWS, "a") == [(1, 1000000000000, 2, False)]


def test_the_text_must_have_its_one_parameter() -> None:
    assert _numbered("SELECT %(members)s, 5 %% 2") == b"SELECT $1, 5 % 2"
    with pytest.raises(ValueError, match="one parameter"):
        _numbered("SELECT %(members)s, %(other)s")

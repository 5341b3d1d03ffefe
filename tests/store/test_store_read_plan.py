"""The global read walks the primary key in order, statistics or not.

A log just filled has no planner statistics until autovacuum analyses it; with a range bounded on
both sides the planner then guessed a few hundred rows, and for every page scanned the whole rest
of the log and sorted it instead of reading the index in order (see ``READ_ALL_QUERY`` in
``sapsam.store.reads``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from sapsam.log.records import NewEvent
from sapsam.store.appends import append
from sapsam.store.reads import READ_ALL_QUERY, read_all, safe_position


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        yield opened


async def plan(
    connection: psycopg.AsyncConnection[Any], after: int, high_water: int, limit: int
) -> str:
    rows = await (
        await connection.execute("EXPLAIN " + READ_ALL_QUERY, [after, limit, high_water])
    ).fetchall()
    return "\n".join(str(row[0]) for row in rows)


async def test_pages_are_read_along_the_primary_key_without_a_sort(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    # A log many pages long, as a replay reads it: 50,000 events written by one plain insert
    # (the read does not look at the hash chain), and 20 through append.
    await connection.execute(
        "INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)"
        " SELECT 'bulk-' || (n % 100), n / 100 + 1, 'A', 1, jsonb_build_object('n', n),"
        ' \'{"request_id": "bulk"}\', sha256(n::text::bytea)'
        " FROM generate_series(0, 49999) AS n"
    )
    await append(connection, "s", 0, [NewEvent("A", {"n": n}) for n in range(20)], "r1")
    high_water = await safe_position(connection)
    assert high_water == 50_020
    for statistics in ("none yet", "analysed"):
        for after in (0, 20_000, 44_000):
            shown = await plan(connection, after, high_water, 5000)
            assert "Index Scan using events_pkey" in shown, (statistics, shown)
            assert "Sort" not in shown, (statistics, shown)
        await connection.execute("ANALYZE events")
    # The bound still holds: everything up to the high-water mark, in order, nothing above it.
    page = await read_all(connection, 49_990, 100)
    assert [event.position for event in page] == list(range(49_991, 50_021))
    assert [event.data for event in page[-3:]] == [{"n": 17}, {"n": 18}, {"n": 19}]

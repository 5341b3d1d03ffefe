"""A read of the global order for some event types only (``reads.read_all_of_types``): the same
events as ``read_all`` filtered, never one skipped, and the position read up to."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from sapsam.log.records import NewEvent
from sapsam.store.appends import append
from sapsam.store.reads import read_all, read_all_of_types
from sapsam.store.session import PostgresSession

Connection = psycopg.AsyncConnection[Any]


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[Connection]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        yield opened


async def test_only_the_types_asked_for_are_decoded_and_the_page_says_how_far_it_read(
    connection: Connection,
) -> None:
    for number in range(10):
        kind = "Scored" if number % 4 == 3 else "Played"
        await append(
            connection,
            f"s-{number % 2}",
            number // 2,
            [NewEvent(kind, {"n": number})],
            f"r-{number}",
            "a",
        )
    everything = await read_all(connection, 0, 100)
    page = await read_all_of_types(connection, 0, 100, ["Scored"])
    assert page.events == [event for event in everything if event.type == "Scored"]
    assert (page.last_position, page.caught_up) == (10, True)
    # A page of ``limit`` events of any type: only its scored ones, and more may follow.
    page = await read_all_of_types(connection, 2, 4, ["Scored"])
    assert [event.position for event in page.events] == [4]
    assert (page.last_position, page.caught_up) == (6, False)
    page = await read_all_of_types(connection, 10, 4, ["Scored"])
    assert (page.events, page.last_position, page.caught_up) == ([], 10, True)
    session = PostgresSession(connection, ())
    assert (await session.read_all_of_types(0, 100, ["Played"])).events == [
        event for event in everything if event.type == "Played"
    ]


async def test_an_append_in_flight_below_a_committed_one_is_waited_for_not_skipped(
    connection: Connection, database_url: str
) -> None:
    await append(connection, "s", 0, [NewEvent("Played", {"n": 0})], "r-0")
    async with await psycopg.AsyncConnection.connect(database_url) as slow:
        # Position 2 drawn and held open; position 3 committed above it: a hole.
        await slow.execute("SELECT 1")  # a transaction open: the append commits with it
        await append(slow, "late", 0, [NewEvent("Scored", {"n": 1})], "r-late")
        await append(connection, "t", 0, [NewEvent("Played", {"n": 2})], "r-2")
        reading = asyncio.ensure_future(read_all_of_types(connection, 0, 100, ["Scored"]))
        await asyncio.sleep(0.05)
        assert not reading.done()  # it waits for the append in flight below the mark
        await slow.commit()
    page = await reading
    assert [event.stream_id for event in page.events] == ["late"]
    assert (page.last_position, page.caught_up) == (3, True)

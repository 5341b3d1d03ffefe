"""The secret seed lives outside the log and goes away with the append that reveals it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import psycopg
import pytest
from psycopg import errors

from sapsam.log.records import NewEvent, RecordedEvent
from sapsam.store.appends import append
from sapsam.store.deal_secrets import delete_deal_seed, load_deal_seed, store_deal_seed
from sapsam.store.reads import read_all

Connection = psycopg.AsyncConnection[Any]
SEED = bytes(range(32))


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        yield opened


async def start_deal(connection: psycopg.AsyncConnection[Any]) -> None:
    async def keep_seed(inner: Connection, _events: Sequence[RecordedEvent]) -> None:
        await store_deal_seed(inner, "table-1", 1, SEED)

    await append(
        connection,
        "table-1",
        0,
        [NewEvent("DealStarted", {"deal": 1, "seed_commitment": "ab" * 32})],
        "start",
        project=keep_seed,
    )


async def reveal(inner: Connection, events: Sequence[RecordedEvent]) -> None:
    assert await delete_deal_seed(inner, "table-1", int(events[0].data["deal"]))  # type: ignore[arg-type]


async def test_the_seed_is_stored_with_the_deal_and_not_in_the_log(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    await start_deal(connection)
    assert await load_deal_seed(connection, "table-1", 1) == SEED
    assert await load_deal_seed(connection, "table-1", 2) is None
    log_text = str([(e.data, e.metadata) for e in await read_all(connection)])
    assert SEED.hex() not in log_text


async def test_a_second_seed_for_the_same_deal_is_refused(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    await start_deal(connection)
    with pytest.raises(errors.UniqueViolation):
        await store_deal_seed(connection, "table-1", 1, b"other")
    assert await load_deal_seed(connection, "table-1", 1) == SEED


async def test_revealing_the_seed_deletes_it_in_the_same_transaction(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    await start_deal(connection)
    await append(
        connection,
        "table-1",
        1,
        [NewEvent("SeedRevealed", {"deal": 1, "seed": SEED.hex()})],
        "reveal",
        project=reveal,
    )
    assert await load_deal_seed(connection, "table-1", 1) is None
    assert not await delete_deal_seed(connection, "table-1", 1)


async def test_a_reveal_that_fails_after_deleting_keeps_the_seed(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    await start_deal(connection)

    async def delete_then_fail(inner: Connection, events: Sequence[RecordedEvent]) -> None:
        await reveal(inner, events)
        raise RuntimeError("scoring failed")

    with pytest.raises(RuntimeError):
        await append(
            connection,
            "table-1",
            1,
            [NewEvent("SeedRevealed", {"deal": 1, "seed": SEED.hex()})],
            "reveal",
            project=delete_then_fail,
        )
    assert await load_deal_seed(connection, "table-1", 1) == SEED
    assert [e.type for e in await read_all(connection)] == ["DealStarted"]

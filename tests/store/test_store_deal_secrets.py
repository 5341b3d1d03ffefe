"""The secret seed lives outside the log and goes away with the append that reveals it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import psycopg
import pytest
from psycopg import errors

from sapsam.log.records import NewEvent, RecordedEvent
from sapsam.store.appends import append
from sapsam.store.deal_secrets import delete_deal_seed, load_deal_seed, store_deal_seed
from sapsam.store.reads import read_all

Connection = psycopg.Connection[object]
SEED = bytes(range(32))


@pytest.fixture
def connection(database_url: str) -> Iterator[Connection]:
    with psycopg.connect(database_url, autocommit=True) as opened:
        yield opened


def start_deal(connection: Connection) -> None:
    def keep_seed(inner: Connection, _events: Sequence[RecordedEvent]) -> None:
        store_deal_seed(inner, "table-1", 1, SEED)

    append(
        connection,
        "table-1",
        0,
        [NewEvent("DealStarted", {"deal": 1, "seed_commitment": "ab" * 32})],
        "start",
        project=keep_seed,
    )


def reveal(inner: Connection, events: Sequence[RecordedEvent]) -> None:
    assert delete_deal_seed(inner, "table-1", int(events[0].data["deal"]))  # type: ignore[arg-type]


def test_the_seed_is_stored_with_the_deal_and_not_in_the_log(connection: Connection) -> None:
    start_deal(connection)
    assert load_deal_seed(connection, "table-1", 1) == SEED
    assert load_deal_seed(connection, "table-1", 2) is None
    log_text = str([(e.data, e.metadata) for e in read_all(connection)])
    assert SEED.hex() not in log_text


def test_a_second_seed_for_the_same_deal_is_refused(connection: Connection) -> None:
    start_deal(connection)
    with pytest.raises(errors.UniqueViolation):
        store_deal_seed(connection, "table-1", 1, b"other")
    assert load_deal_seed(connection, "table-1", 1) == SEED


def test_revealing_the_seed_deletes_it_in_the_same_transaction(connection: Connection) -> None:
    start_deal(connection)
    append(
        connection,
        "table-1",
        1,
        [NewEvent("SeedRevealed", {"deal": 1, "seed": SEED.hex()})],
        "reveal",
        project=reveal,
    )
    assert load_deal_seed(connection, "table-1", 1) is None
    assert not delete_deal_seed(connection, "table-1", 1)


def test_a_reveal_that_fails_after_deleting_keeps_the_seed(connection: Connection) -> None:
    start_deal(connection)

    def delete_then_fail(inner: Connection, events: Sequence[RecordedEvent]) -> None:
        reveal(inner, events)
        raise RuntimeError("scoring failed")

    with pytest.raises(RuntimeError):
        append(
            connection,
            "table-1",
            1,
            [NewEvent("SeedRevealed", {"deal": 1, "seed": SEED.hex()})],
            "reveal",
            project=delete_then_fail,
        )
    assert load_deal_seed(connection, "table-1", 1) == SEED
    assert [e.type for e in read_all(connection)] == ["DealStarted"]

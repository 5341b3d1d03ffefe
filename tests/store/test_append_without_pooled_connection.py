"""A session's append that the commit group commits takes no pooled connection
(``group_appends.append_by_group``), and every case that path cannot answer alone (a head not
remembered, a stale version, a request id already processed, the group declining) is answered
on a pooled connection exactly as before."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sapsam.log.chain import verify_stream_chain
from sapsam.log.records import ConcurrencyConflict, NewEvent
from sapsam.store import stream_heads
from sapsam.store.append_count import APPENDED
from sapsam.store.event_store import EventStore


def counted(number: int) -> list[NewEvent]:
    return [NewEvent("Counted", {"n": number})]


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[EventStore]:
    opened = await EventStore.connect(database_url, group_commit=True)
    yield opened
    await opened.close()


def pool_requests(store: EventStore) -> int:
    return store.pool.get_stats().get("requests_num", 0)


async def append_in_session(
    store: EventStore, stream: str, expected: int, number: int, request: str
) -> tuple[int, bool]:
    async with store.session() as session:
        result = await session.append(stream, expected, counted(number), request, "tester")
    return result.last_version, result.replayed


async def test_appends_after_the_first_take_no_pooled_connection(store: EventStore) -> None:
    assert store.commit_group is not None
    # The first session learns the database from the connection it takes.
    assert await append_in_session(store, "s-1", 0, 0, "r-0") == (1, False)
    requests_before = pool_requests(store)
    batches_before = store.commit_group.batches
    appended_before = APPENDED.appends
    for version in range(1, 6):
        assert await append_in_session(store, "s-1", version, version, f"r-{version}") == (
            version + 1,
            False,
        )
    assert pool_requests(store) == requests_before
    assert store.commit_group.batches == batches_before + 5
    assert APPENDED.appends == appended_before + 5  # the metrics endpoint's count
    events = await store.read_stream("s-1")
    assert [event.data["n"] for event in events] == list(range(6))
    assert [event.metadata["actor"] for event in events] == ["tester"] * 6
    verify_stream_chain(events)


async def test_a_new_stream_needs_no_connection_and_a_forgotten_head_takes_one(
    store: EventStore,
) -> None:
    await append_in_session(store, "s-learn", 0, 0, "learn")
    requests_before = pool_requests(store)
    assert await append_in_session(store, "s-new", 0, 0, "new-0") == (1, False)
    assert pool_requests(store) == requests_before
    # Without the remembered head the append reads it on a pooled connection.
    async with store.session() as session:
        stream_heads.forget(await session._connection(), "s-new")
    requests_before = pool_requests(store)
    assert await append_in_session(store, "s-new", 1, 1, "new-1") == (2, False)
    assert pool_requests(store) == requests_before + 1
    verify_stream_chain(await store.read_stream("s-new"))


async def test_a_stale_version_and_a_retried_request_are_answered_as_before(
    store: EventStore,
) -> None:
    await append_in_session(store, "s-2", 0, 0, "a")
    await append_in_session(store, "s-2", 1, 1, "b")
    with pytest.raises(ConcurrencyConflict) as conflict:
        await append_in_session(store, "s-2", 1, 9, "c")
    assert conflict.value.current_version == 2
    # The same request id again: the original result, nothing appended.
    assert await append_in_session(store, "s-2", 1, 1, "b") == (2, True)
    assert await store.stream_version("s-2") == 2


async def test_without_a_commit_group_the_session_appends_on_its_connection(
    database_url: str,
) -> None:
    store = await EventStore.connect(database_url, group_commit=False)
    try:
        await append_in_session(store, "s-3", 0, 0, "x")
        requests_before = pool_requests(store)
        assert await append_in_session(store, "s-3", 1, 1, "y") == (2, False)
        assert pool_requests(store) == requests_before + 1
    finally:
        await store.close()

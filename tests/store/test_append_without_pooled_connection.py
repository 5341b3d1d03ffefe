"""A session's append that the commit group commits takes no pooled connection
(``group_appends.append_by_group``), and every case that path cannot answer alone (a head not
remembered, a stale version, a request id already processed, the group declining) is answered
on a pooled connection exactly as before."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from sapsam.app.store_interface import SecretChanges
from sapsam.log.chain import verify_stream_chain
from sapsam.log.records import ConcurrencyConflict, NewEvent
from sapsam.store import group_appends, stream_heads
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


async def test_each_form_of_an_append_is_written_only_if_the_group_sends_it(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An append's own statement is written for a batch of one, its batch-statement member for a
    batch of more, never both (group_appends hands the group both as functions)."""
    made = {"own": 0, "member": 0}

    def counting(kind: str, make: Callable[..., Any]) -> Callable[..., Any]:
        def counted_make(*arguments: Any) -> Any:
            made[kind] += 1
            return make(*arguments)

        return counted_make

    monkeypatch.setattr(
        group_appends, "with_companions", counting("own", group_appends.with_companions)
    )
    monkeypatch.setattr(
        group_appends, "batch_member", counting("member", group_appends.batch_member)
    )
    assert store.commit_group is not None
    await append_in_session(
        store, "s-forms-learn", 0, 0, "learn"
    )  # the session learns the database

    async def kept_secret(stream: str, expected: int, request: str) -> None:
        # A kept secret is a companion statement: the own statement is then written with it.
        async with store.session() as session:
            await session.append(
                stream,
                expected,
                counted(expected),
                request,
                "tester",
                secrets=SecretChanges(keep=((expected + 1, bytes(32)),)),
            )

    made.update(own=0, member=0)
    for version in range(3):  # one at a time: batches of one, each its own statement
        await kept_secret("s-forms-0", version, f"alone-{version}")
    assert made == {"own": 3, "member": 0}

    made.update(own=0, member=0)
    batches, carried = store.commit_group.batches, store.commit_group.statements
    streams = [f"s-forms-{index}" for index in range(1, 17)]
    await asyncio.gather(*(kept_secret(stream, 0, f"together-{stream}") for stream in streams))
    assert store.commit_group.statements - carried == len(streams)
    assert store.commit_group.batches - batches < len(streams)  # some went together
    assert made["own"] + made["member"] == len(streams)  # one form each, never both
    assert made["member"] > 0
    for stream in streams:
        verify_stream_chain(await store.read_stream(stream))

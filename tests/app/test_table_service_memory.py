"""The table service decides on its remembered state; a stale memory never gives a wrong answer.

Two ``TableService`` instances on one database stand for two server processes: each remembers
the tables it served, and the other's appends make that memory stale without telling it.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from test_table_service import PLAYERS, event_count

from sapsam import fairness
from sapsam.app.tables import StaleVersionError, TableService
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.table import TablePhase
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.solver import solve
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors


@pytest.fixture
async def two_processes(database_url: str) -> AsyncIterator[tuple[TableService, TableService]]:
    stores = [await EventStore.connect(database_url, projectors=projectors()) for _ in range(2)]
    stores[0].prepare()
    try:
        yield TableService(stores[0]), TableService(stores[1])
    finally:
        for store in stores:
            await store.close()


async def assert_refused_writing_nothing(
    service: TableService, reason: Reason, command: Callable[[], Awaitable[object]]
) -> None:
    """``command`` is refused with ``reason`` and the log is unchanged."""
    before = await event_count(service)
    with pytest.raises(DomainError) as refused:
        await command()
    assert refused.value.reason is reason
    assert await event_count(service) == before


async def dealt_table(first: TableService, second: TableService) -> uuid.UUID:
    """A 4-seat table with cards dealt, which both services have loaded (and remember)."""
    table_id = (await first.create_table(DEFAULT_RULE_SET, 4, "operator", "create")).table_id
    for player in PLAYERS:
        await first.join(table_id, player, None, f"join-{player}")
    await first.choose_dealer(table_id, PLAYERS[0], "dealer")
    state = (await first.start_deal(table_id, "operator", "start")).state
    assert state.deal is not None
    cutter = state.seats[fairness.cutter_for(state.deal.dealer, 4)]
    assert cutter is not None
    await first.cut(table_id, cutter, 9, "cut")
    await second.load(table_id)
    return table_id


async def test_a_command_decided_on_a_stale_memory_is_decided_again_on_the_log(
    two_processes: tuple[TableService, TableService],
) -> None:
    first, second = two_processes
    table_id = await dealt_table(first, second)
    await first.commit(table_id, "ann", bytes(32), "ann-commit")  # second's memory is now stale
    outcome = await second.commit(table_id, "bob", bytes(32), "bob-commit")
    assert not outcome.replayed
    assert outcome.version == (await first.load(table_id)).version
    assert outcome.state == await first.load(table_id)
    # Both commits are in the log, contiguous, the second after the first.
    types = [event.type for event in (await first.events(table_id))[-2:]]
    assert types == ["ArrangementCommitted", "ArrangementCommitted"]


async def test_a_refusal_on_a_stale_memory_is_checked_against_the_log_first(
    two_processes: tuple[TableService, TableService],
) -> None:
    first, second = two_processes
    table_id = await dealt_table(first, second)
    table = await first.load(table_id)
    assert table.deal is not None
    nonce = bytes(16)
    arrangements = {}
    for player in PLAYERS:
        seat, hand = await first.hand_of(table_id, player)
        arrangements[player] = solve(hand)
        commitment = fairness.arrangement_commitment(
            table_id, table.deal.number, seat, arrangements[player], nonce
        )
        await first.commit(table_id, player, commitment, f"commit-{player}")
        await first.confirm(table_id, player, f"confirm-{player}")
    # second still remembers the table as ARRANGING, where a reveal is out of phase.
    outcome = await second.reveal(table_id, "ann", arrangements["ann"], nonce, "ann-reveal")
    assert outcome.state.phase is TablePhase.REVEALING
    assert outcome.events[-1].type == "ArrangementRevealed"


async def test_a_true_refusal_is_still_refused_and_writes_nothing(
    two_processes: tuple[TableService, TableService],
) -> None:
    first, second = two_processes
    table_id = await dealt_table(first, second)
    await first.commit(table_id, "ann", bytes(32), "ann-commit")
    await first.confirm(table_id, "ann", "ann-confirm")
    await assert_refused_writing_nothing(
        first,
        Reason.ALREADY_CONFIRMED,
        lambda: second.commit(table_id, "ann", bytes(32), "ann-commit-again"),
    )


async def test_a_secret_gone_from_a_stale_memory_gives_the_logs_refusal(
    two_processes: tuple[TableService, TableService],
) -> None:
    first, second = two_processes
    table_id = (await first.create_table(DEFAULT_RULE_SET, 2, "operator", "create")).table_id
    for player in PLAYERS[:2]:
        await first.join(table_id, player, None, f"join-{player}")
    await second.load(table_id)  # remembers AWAITING_DEALER, with the lot seed still kept
    await first.choose_dealer(table_id, "ann", "dealer")  # draws the lot: its seed is deleted
    await assert_refused_writing_nothing(
        first, Reason.WRONG_PHASE, lambda: second.choose_dealer(table_id, "bob", "dealer-again")
    )


async def test_a_retry_decided_on_memory_answers_with_the_original_outcome(
    two_processes: tuple[TableService, TableService],
) -> None:
    first, second = two_processes
    table_id = await dealt_table(first, second)
    original = await first.commit(table_id, "ann", bytes(32), "ann-commit")
    await first.commit(table_id, "bob", bytes(32), "bob-commit")
    before = await event_count(first)
    # A commit is repeatable, so the retry decides fine on memory: the log's record of the
    # request id is what answers it, with the original events, and nothing is appended.
    for service in (first, second):
        retried = await service.commit(table_id, "ann", bytes(32), "ann-commit")
        assert retried.replayed
        assert retried.events == original.events
    # A retry whose command is now refused on memory (bob confirmed) is answered the same way.
    await first.confirm(table_id, "bob", "bob-confirm")
    retried = await first.commit(table_id, "bob", bytes(32), "bob-commit")
    assert retried.replayed and retried.events[0].type == "ArrangementCommitted"
    assert await event_count(first) == before + 1


async def test_an_etag_newer_than_memory_is_checked_against_the_log(
    two_processes: tuple[TableService, TableService],
) -> None:
    first, second = two_processes
    table_id = await dealt_table(first, second)
    version = (await first.commit(table_id, "ann", bytes(32), "ann-commit")).version
    # second remembers an older version; the caller's etag is the log's current one.
    outcome = await second.commit(
        table_id, "bob", bytes(32), "bob-commit", expected_version=version
    )
    assert outcome.version == version + 1
    with pytest.raises(StaleVersionError):
        await second.commit(table_id, "cid", bytes(32), "cid-commit", expected_version=version)


class StampCountingStore(EventStore):
    """The store, counting the write stamps read (how often a read asked whether it is current)."""

    stamps_read = 0

    def write_stamp(self, stream_id: str) -> int:
        self.stamps_read += 1
        return super().write_stamp(stream_id)


async def test_a_read_with_events_reads_the_write_stamp_once_and_sees_every_write(
    database_url: str,
) -> None:
    writer_store = await EventStore.connect(database_url, projectors=projectors())
    writer_store.prepare()
    reader_store = await StampCountingStore.connect(database_url, projectors=projectors())
    try:
        writer, reader = TableService(writer_store), TableService(reader_store)
        table_id = await dealt_table(writer, reader)
        # From memory: the copy is current, one stamp read decides it.
        reader_store.stamps_read = 0
        state, events = await reader.load_with_events(table_id, 1)
        assert reader_store.stamps_read == 1
        assert events[-1].version == state.version == (await writer.load(table_id)).version
        # Another process wrote: the same one stamp read finds the copy stale, and the log read
        # after it shows the write.
        await writer.commit(table_id, "ann", bytes(32), "ann-commit")
        reader_store.stamps_read = 0
        state, events = await reader.load_with_events(table_id, state.version + 1)
        assert reader_store.stamps_read == 1
        assert [event.type for event in events] == ["ArrangementCommitted"]
        assert state == await writer.load(table_id)
        # That read's copy is current again: answered from memory.
        reader_store.stamps_read = 0
        assert (await reader.load_with_events(table_id, state.version))[0] == state
        assert reader_store.stamps_read == 1
    finally:
        await reader_store.close()
        await writer_store.close()

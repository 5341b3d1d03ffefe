"""The stuck tables (``TableService.stuck_tables``: GetStuckTables, ``sapsam tables stuck``, the
health detail) on a real database: a table past its deadline is found however many tables have
waited longer than it for something else."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from deadline_tables import FakeClock, dealt_table

from sapsam.app.operator_queries import StuckTables
from sapsam.app.tables import TableService
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[EventStore]:
    opened = await EventStore.connect(database_url, projectors=projectors())
    opened.prepare()
    try:
        yield opened
    finally:
        await opened.close()


async def test_a_table_past_its_deadline_is_stuck_behind_longer_waiting_tables(
    store: EventStore,
) -> None:
    service = TableService(store)
    # Lobbies that wait for players, for ever: longer than anything else.
    for number in range(3):
        await service.create_table(DEFAULT_RULE_SET, 2, "operator", f"lobby-{number}")
    dealt = await dealt_table(service, DEFAULT_RULE_SET, ("ann", "bob"), "late")
    # An hour on, the dealt table's arranging deadline has long passed (no sweeper runs here).
    later = TableService(store, clock=lambda: FakeClock.wall() + 3_600_000)
    found = (await later.stuck_tables(limit=2)).stuck
    assert [table.table_id for table in found] == [dealt]
    assert found[0].past_deadline(later.clock())
    # Now, nothing is past its deadline; with a threshold the longest waiting come first.
    assert await service.stuck_tables(limit=2) == StuckTables(stuck=[], held=[])
    waiting = (await later.stuck_tables(waiting_longer_than_ms=1000, limit=2)).stuck
    assert len(waiting) == 2 and dealt not in {table.table_id for table in waiting}

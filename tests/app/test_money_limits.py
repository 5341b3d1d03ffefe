"""A deal at every rule-set maximum scores and is stored: no amount overflows anywhere."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from deadline_tables import FakeClock, confirm_solved, dealt_table

from sapsam.app.tables import TableService
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.ruleset import (
    MAX_BONUS_UNITS,
    MAX_ROW_UNIT,
    MAX_SERIES_LENGTH,
    RuleSet,
    ScoringMethod,
)
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors

EXTREME = RuleSet(
    scoring=ScoringMethod.PER_ROW_SCOOP_BONUS,
    row_unit=MAX_ROW_UNIT,
    scoop_bonus=MAX_BONUS_UNITS,
    series_length=MAX_SERIES_LENGTH,
    arrange_seconds=60,
)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def service(database_url: str, clock: FakeClock) -> AsyncIterator[TableService]:
    store = await EventStore.connect(database_url, projectors=projectors())
    store.prepare()
    try:
        yield TableService(store, clock=clock)
    finally:
        await store.close()


async def test_the_worst_deal_at_the_maxima_is_scored_and_stored(
    service: TableService, clock: FakeClock
) -> None:
    table_id = await dealt_table(service, EXTREME, ("ann", "bob", "cid", "dee"), "extreme")
    arrangement, nonce = await confirm_solved(service, table_id, "ann")
    clock.now_ms += 60_000
    assert await service.sweep_deadlines() == 1  # bob, cid and dee time out into fouls
    assert isinstance(arrangement, Arrangement)
    state = (await service.reveal(table_id, "ann", arrangement, nonce, "reveal-ann")).state
    one_deal = 3 * (3 + MAX_BONUS_UNITS) * MAX_ROW_UNIT  # beyond a 32-bit integer
    assert state.deals_scored == 1
    assert state.series_totals == (
        tuple(one_deal if player == "ann" else -one_deal // 3 for player in state.seats)
    )
    async with service.store.connection() as connection:
        rows = await (
            await connection.execute(
                "SELECT player_id, delta, series_total FROM seat_scores ORDER BY seat"
            )
        ).fetchall()
    assert {row[0]: (row[1], row[2]) for row in rows}["ann"] == (one_deal, one_deal)

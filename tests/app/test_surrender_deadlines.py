"""The announcing turns' deadlines (docs/rules.md §2.8) on real PostgreSQL, on a hand-moved
clock: the sweeper finds a table whose turn ran out (its read model's deadline and phase), the
seat plays, the next turn gets its own deadline; a turn that fell in an outage is extended."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from deadline_tables import FakeClock, confirm_solved, dealt_table

from sapsam.app.deadline_sweep import sweep_deadlines
from sapsam.app.tables import TableService
from sapsam.domain.events import DeadlinesExtended, SurrenderAnnounced
from sapsam.domain.table import TablePhase
from sapsam.domain.table_deadlines import UnservedWindow
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.ruleset import SurrenderRule
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors

RULES = DEFAULT_RULE_SET.with_changes(
    arrange_seconds=60, surrender=SurrenderRule.PAY_PLAYERS, surrender_seconds=20
)
PLAYERS = ("ann", "bob")


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


async def announcements(service: TableService, table_id: object) -> list[SurrenderAnnounced]:
    events = [service.decode(recorded) for recorded in await service.events(table_id)]  # type: ignore[arg-type]
    return [event for event in events if isinstance(event, SurrenderAnnounced)]


async def test_the_sweeper_plays_each_missed_turn_in_order(
    service: TableService, clock: FakeClock
) -> None:
    table_id = await dealt_table(service, RULES, PLAYERS, "sweep")
    for player in PLAYERS:
        await confirm_solved(service, table_id, player)
    state = await service.load(table_id)
    assert state.phase is TablePhase.ANNOUNCING
    assert state.deal is not None and state.deal.announcements is not None
    first, second = state.deal.announcements.order
    clock.now_ms += 19_999
    assert await sweep_deadlines(service) == 0  # the turn has not run out
    clock.now_ms += 1
    assert await sweep_deadlines(service) == 1
    assert [(e.seat, e.timed_out, e.surrender) for e in await announcements(service, table_id)] == [
        (first, True, False)
    ]
    clock.now_ms += 20_000  # the second seat's own turn, from the first's timeout
    assert await sweep_deadlines(service) == 1
    state = await service.load(table_id)
    assert state.phase is TablePhase.REVEALING
    assert [e.seat for e in await announcements(service, table_id)] == [first, second]


async def test_a_turn_that_ran_out_in_an_outage_is_extended(
    service: TableService, clock: FakeClock
) -> None:
    table_id = await dealt_table(service, RULES, PLAYERS, "outage")
    for player in PLAYERS:
        await confirm_solved(service, table_id, player)
    start = clock.now_ms
    clock.now_ms += 60_000
    outage = (UnservedWindow(start_ms=start + 5_000, end_ms=clock.now_ms),)

    async def unserved(since_ms: int) -> tuple[UnservedWindow, ...]:
        return outage

    assert await sweep_deadlines(service, unserved=unserved, grace_ms=10_000) == 1
    events = [service.decode(recorded) for recorded in await service.events(table_id)]
    extended = [event for event in events if isinstance(event, DeadlinesExtended)]
    assert [(event.stage, event.deadline_ms) for event in extended] == [
        ("announcing", clock.now_ms + 10_000)
    ]
    assert (await service.load(table_id)).phase is TablePhase.ANNOUNCING

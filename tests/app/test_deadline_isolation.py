"""One table the deadline sweeper always fails on is logged, backed off and listed, and every other
table is still timed out on time (real PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator

import pytest
from deadline_tables import FakeClock, confirm_solved, dealt_table

from sapsam.app.tables import TableOutcome, TableService
from sapsam.cli import main
from sapsam.domain.events import SeatTimedOut
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.event_store import EventStore
from sapsam.store.table_failures import DEADLINES_PROCESS, failing_tables
from sapsam.store.table_projections import projectors

RULES = DEFAULT_RULE_SET.with_changes(arrange_seconds=60)


class BrokenTableError(RuntimeError):
    """What the injected table raises on every timeout."""


class ServiceWithABrokenTable(TableService):
    """The real table service, except that timing out the ``broken`` table always raises (as
    the overflowing table of issue 13 did)."""

    broken: uuid.UUID | None = None
    attempts = 0

    async def time_out(
        self, table_id: uuid.UUID, *arguments: object, **options: object
    ) -> TableOutcome:
        if table_id == self.broken:
            self.attempts += 1
            raise BrokenTableError("the table's timeout always fails")
        return await super().time_out(table_id, *arguments, **options)  # type: ignore[arg-type]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def service(database_url: str, clock: FakeClock) -> AsyncIterator[ServiceWithABrokenTable]:
    store = await EventStore.connect(database_url, projectors=projectors())
    store.prepare()
    try:
        yield ServiceWithABrokenTable(store, clock=clock)
    finally:
        await store.close()


async def timed_out(service: TableService, table_id: uuid.UUID) -> list[int]:
    events = [service.decode(recorded) for recorded in await service.events(table_id)]
    return [event.seat for event in events if isinstance(event, SeatTimedOut)]


async def test_a_failing_table_never_delays_the_others(
    service: ServiceWithABrokenTable, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    # The broken table is dealt first: its deadline is the earliest, first in every batch.
    broken = await dealt_table(service, RULES, ("ann", "bob"), "broken")
    clock.now_ms += 1
    healthy = [await dealt_table(service, RULES, ("cid", "dee"), f"ok-{n}") for n in range(3)]
    for table_id in (broken, *healthy):
        await confirm_solved(service, table_id, (await service.load(table_id)).seats[0] or "")
    service.broken = broken
    clock.now_ms += 60_000
    with caplog.at_level(logging.ERROR, logger="sapsam.app.tables"):
        # A batch of one: the broken table takes the first sweep, the next ones go on with
        # the others instead of failing on it again.
        assert await service.sweep_deadlines(limit=1) == 0
        assert [await service.sweep_deadlines(limit=1) for _ in range(3)] == [1, 1, 1]
    assert f"deadline sweep failed at table {broken}: BrokenTableError" in caplog.text
    assert "always fails" not in caplog.text  # the type only, never the message
    for table_id in healthy:
        assert await timed_out(service, table_id) == [1]
    assert await timed_out(service, broken) == [] and service.attempts == 1
    async with service.store.connection() as connection:  # type: ignore[attr-defined]
        (failure,) = await failing_tables(connection, DEADLINES_PROCESS)
    assert (failure.table_id, failure.failures, failure.last_error) == (
        str(broken),
        1,
        "BrokenTableError",
    )
    assert failure.retry_at_ms == clock.now_ms + 1_000
    # Backed off: not tried again before its time; then exponentially (1 s, 2 s, 4 s ...).
    assert await service.sweep_deadlines() == 0 and service.attempts == 1
    clock.now_ms += 1_000
    await service.sweep_deadlines()
    assert service.attempts == 2
    async with service.store.connection() as connection:
        (failure,) = await failing_tables(connection)
    assert (failure.failures, failure.retry_at_ms) == (2, clock.now_ms + 2_000)
    # Fixed, it is timed out at its next try and leaves the list.
    service.broken = None
    clock.now_ms += 2_000
    assert await service.sweep_deadlines() == 1
    assert await timed_out(service, broken) == [1]
    async with service.store.connection() as connection:
        assert await failing_tables(connection) == []


async def test_sapsam_tables_stuck_names_the_failing_and_the_overdue_tables(
    service: ServiceWithABrokenTable,
    clock: FakeClock,
    database_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Real time here: the command compares deadlines with the wall clock.
    clock.now_ms = FakeClock.wall()
    broken = await dealt_table(service, RULES, ("ann", "bob"), "broken")
    overdue = await dealt_table(service, RULES, ("cid", "dee"), "overdue")
    service.broken = broken
    clock.now_ms -= 3_600_000  # dealt an hour ago, as the sweeper sees it: long past due
    for table_id in (broken, overdue):
        async with service.store.connection() as connection:
            await connection.execute(
                "UPDATE table_state SET deadline_ms = deadline_ms - 3600000 WHERE table_id = %s",
                [table_id],
            )
    clock.now_ms += 3_600_000
    await service.sweep_deadlines(limit=1)  # fails on the broken table; never reaches the other
    # The command runs its own event loop: in a thread of its own, not on the test's loop.
    assert await asyncio.to_thread(main, ["tables", "stuck", "--database-url", database_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(
        line.startswith(f"failing  tables/{broken}  deadlines: 1 failure ") for line in lines
    ), lines
    assert any(line.startswith(f"overdue  tables/{overdue}  ARRANGING") for line in lines)
    assert (
        await asyncio.to_thread(main, ["tables", "stuck", "--json", "--database-url", database_url])
        == 0
    )
    found = json.loads(capsys.readouterr().out)
    assert [entry["table_id"] for entry in found["failing"]] == [str(broken)]
    assert {entry["table_id"] for entry in found["overdue"]} == {str(broken), str(overdue)}


def test_sapsam_tables_stuck_on_a_database_no_server_started_says_what_builds_the_read_model(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Migrated, but no server ever started on it: table_state, a read model, does not exist yet.
    assert main(["tables", "stuck", "--database-url", database_url]) == 1
    message = capsys.readouterr().err
    assert "no table read model yet" in message
    assert "sapsam projections rebuild" in message

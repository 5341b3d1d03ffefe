"""A paused tournament's clocks: the deadline sweep leaves its tables alone while it is paused,
and a deadline that fell in the pause is extended past it when it resumes (reason
``tournament_paused``), never enforced against the player; a table of no tournament, or of a
running one, is swept as before."""

from __future__ import annotations

import uuid

from tournament_play import Services, settings

from sapsam.app.tables import TableService
from sapsam.app.tournament_control import TournamentControl
from sapsam.audit.sample_play import seated_table, start_and_deal
from sapsam.domain.events import DeadlinesExtended, SeatTimedOut
from sapsam.domain.table_deadlines import TOURNAMENT_PAUSED
from sapsam.rules.presets import preset

GRACE_MS = 30_000


class Clock:
    """A clock the test moves by hand (Unix ms)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000_000

    def __call__(self) -> int:
        return self.now


async def _tournament_table(
    services: Services, clock: Clock
) -> tuple[TableService, TournamentControl, uuid.UUID, uuid.UUID]:
    tables = TableService(services.store, clock=clock)
    tournaments = TournamentControl(services.store, tables, clock=clock)
    rule_set = preset("pagat")
    created = await tournaments.create(
        settings(seats=2, rounds=1, deals=2, rule_set=rule_set, registration_opens_ms=0),
        "operator",
        f"create-{uuid.uuid4()}",
    )
    tournament_id = created.tournament_id
    for index in range(2):
        await tournaments.register(tournament_id, f"player-{index}", f"register-{index}")
    state = (await tournaments.start(tournament_id, "operator", "start")).state
    table_id = state.round_tables(1)[0].table_id
    await start_and_deal(tables, table_id, 1)
    return tables, tournaments, tournament_id, table_id


async def _events_after(tables: TableService, table_id: uuid.UUID, version: int) -> list[object]:
    return [tables.decode(item) for item in await tables.events(table_id, version + 1)]


async def test_no_deadline_runs_out_while_paused_and_the_pause_is_not_held_against_a_seat(
    services: Services,
) -> None:
    clock = Clock()
    tables, tournaments, tournament_id, table_id = await _tournament_table(services, clock)
    deal = (await tables.load(table_id)).deal
    assert deal is not None and deal.arrange_deadline_ms is not None
    deadline = deal.arrange_deadline_ms
    clock.now += 1_000
    await tournaments.pause(tournament_id, "dispute", "pause")
    paused_at = clock.now
    version = (await tables.load(table_id)).version
    # Long past the deadline while paused: the sweep records nothing at the table.
    clock.now = deadline + 600_000
    changed = await tables.sweep_deadlines(grace_ms=GRACE_MS, holds=tournaments.table_hold)
    assert changed == 0 and await _events_after(tables, table_id, version) == []
    await tournaments.resume(tournament_id, "resume")
    resumed_at = clock.now
    # After the resume the deadline is extended past the pause, not enforced: the seat gets
    # back the time it had left when the pause began.
    changed = await tables.sweep_deadlines(grace_ms=GRACE_MS, holds=tournaments.table_hold)
    assert changed == 1
    [extended] = await _events_after(tables, table_id, version)
    assert isinstance(extended, DeadlinesExtended)
    assert extended.reason == TOURNAMENT_PAUSED
    assert extended.deadline_ms == resumed_at + (deadline - paused_at)
    assert (extended.unserved_from_ms, extended.unserved_until_ms) == (paused_at, resumed_at)
    assert extended.previous_deadline_ms == deadline
    # Once that time has passed, the deadline is enforced as ever.
    version = (await tables.load(table_id)).version
    clock.now = extended.deadline_ms + 1
    assert await tables.sweep_deadlines(grace_ms=GRACE_MS, holds=tournaments.table_hold) == 1
    timed_out = await _events_after(tables, table_id, version)
    assert any(isinstance(event, SeatTimedOut) for event in timed_out)


async def test_a_running_tournaments_table_is_swept_as_any(services: Services) -> None:
    clock = Clock()
    tables, tournaments, _, table_id = await _tournament_table(services, clock)
    deal = (await tables.load(table_id)).deal
    assert deal is not None and deal.arrange_deadline_ms is not None
    version = (await tables.load(table_id)).version
    clock.now = deal.arrange_deadline_ms + 1
    assert await tables.sweep_deadlines(grace_ms=GRACE_MS, holds=tournaments.table_hold) == 1
    events = await _events_after(tables, table_id, version)
    assert any(isinstance(event, SeatTimedOut) for event in events)


async def test_a_paused_tournaments_tables_never_crowd_other_tables_out_of_the_sweep(
    services: Services,
) -> None:
    # The sweep takes the tables past their deadline earliest first, ``limit`` at a time. A
    # paused tournament's tables stay past their deadline for the whole pause; were they counted
    # in the batch, a pause of ``limit`` or more of them would stop every other table's clock on
    # the server. Here ``limit`` is 1 and the paused table's deadline is the earlier one.
    clock = Clock()
    tables, tournaments, tournament_id, held_table = await _tournament_table(services, clock)
    clock.now += 1_000
    other = await seated_table(tables, 2, preset("pagat"), request_id=f"other-{uuid.uuid4()}")
    await start_and_deal(tables, other, 1)
    await tournaments.pause(tournament_id, "dispute", "pause")
    held_version = (await tables.load(held_table)).version
    other_deal = (await tables.load(other)).deal
    assert other_deal is not None and other_deal.arrange_deadline_ms is not None
    other_version = (await tables.load(other)).version
    clock.now = other_deal.arrange_deadline_ms + 1
    changed = await tables.sweep_deadlines(limit=1, grace_ms=GRACE_MS, holds=tournaments.table_hold)
    assert changed == 1
    assert await _events_after(tables, held_table, held_version) == []
    timed_out = await _events_after(tables, other, other_version)
    assert any(isinstance(event, SeatTimedOut) for event in timed_out)


async def test_a_short_pause_gives_back_the_time_it_took_however_late_the_deadline(
    services: Services,
) -> None:
    # 90 s to arrange; a 30 s break 10 s in. The deadline (dealt + 90 s) falls 50 s after the
    # resume, past the grace: it was enforced there, the 30 s of the break taken from the seats.
    clock = Clock()
    tables, tournaments, tournament_id, table_id = await _tournament_table(services, clock)
    deal = (await tables.load(table_id)).deal
    assert deal is not None and deal.arrange_deadline_ms is not None
    deadline, dealt = deal.arrange_deadline_ms, clock.now
    assert deadline - dealt == 90_000
    clock.now = dealt + 10_000
    await tournaments.pause(tournament_id, "a break", "pause")
    clock.now = dealt + 40_000
    await tournaments.resume(tournament_id, "resume")
    version = (await tables.load(table_id)).version
    clock.now = deadline + 1
    assert await tables.sweep_deadlines(grace_ms=GRACE_MS, holds=tournaments.table_hold) == 1
    [extended] = await _events_after(tables, table_id, version)
    assert isinstance(extended, DeadlinesExtended)
    assert extended.deadline_ms == deadline + 30_000  # 80 s after the resume, as before it
    # Extended once: at the new deadline the seats time out.
    version = (await tables.load(table_id)).version
    clock.now = extended.deadline_ms
    assert await tables.sweep_deadlines(grace_ms=GRACE_MS, holds=tournaments.table_hold) == 1
    timed_out = await _events_after(tables, table_id, version)
    assert any(isinstance(event, SeatTimedOut) for event in timed_out)

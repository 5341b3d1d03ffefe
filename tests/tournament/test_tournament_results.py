"""The results process against a real database: every finished deal credited exactly once, even
when the process dies between any two of its steps."""

from __future__ import annotations

import asyncio
import uuid

import psycopg
import pytest
from tournament_play import (
    Services,
    credited_deals,
    play_round_deal,
    started_tournament,
    verified_totals,
)

from sapsam.app.tables import TableNotFoundError, TableService
from sapsam.app.tournament_results import STEPS, ResultsProcess, SimulatedCrash
from sapsam.domain.tournament import TournamentPhase
from sapsam.domain.tournament_seating import seat_randomly


async def test_a_twelve_player_tournament_credits_every_deal_once(services: Services) -> None:
    tournaments, tables = services.tournaments, services.tables
    tournament_id = await started_tournament(tournaments, 12, seats=4, rounds=2, deals=2)
    process = ResultsProcess(tournaments)
    state = await tournaments.load(tournament_id)
    round_one = state.round_tables(1)
    assert [len(table.players) for table in round_one] == [4, 4, 4]
    for table in round_one:  # the tables exist, seated as drawn, the dealer drawn
        table_state = await tables.load(table.table_id)
        assert table_state.seats == table.players and table_state.first_dealer is not None
    for deal in (1, 2):
        await play_round_deal(tables, await tournaments.load(tournament_id), deal)
        assert await process.process_available() == 3
    state = await tournaments.load(tournament_id)
    assert state.current_round == 2 and state.phase is TournamentPhase.RUNNING
    for deal in (1, 2):
        await play_round_deal(tables, await tournaments.load(tournament_id), deal)
    assert await process.process_available() == 6
    assert await process.process_available() == 0
    state = await tournaments.load(tournament_id)
    assert state.phase is TournamentPhase.COMPLETE
    counts = await credited_deals(tournaments, tournament_id)
    assert len(counts) == 12 and set(counts.values()) == {1}
    assert dict(state.totals) == await verified_totals(tables, tournaments, tournament_id)
    # The read model agrees with the aggregate, places shared on equal totals.
    async with services.store.connection() as connection:
        rows = await (
            await connection.execute(
                "SELECT player_id, total, rank() OVER (ORDER BY total DESC) FROM tournament_entries"
                " WHERE tournament_id = %s",
                [tournament_id],
            )
        ).fetchall()
    assert {row[0]: row[1] for row in rows} == dict(state.totals)
    places = {standing.player_id: standing.place for standing in state.standings()}
    assert {row[0]: row[2] for row in rows} == places
    # The first round's seating is the committed draw.
    seated = [table.players for table in round_one]
    first_seed = bytes.fromhex(await _round_seed(tournaments, tournament_id, 1))
    assert tuple(seated) == seat_randomly(tournament_id, 1, first_seed, state.entrants, 4)


async def _round_seed(tournaments: object, tournament_id: uuid.UUID, round_number: int) -> str:
    from sapsam.domain.tournament_events import RoundSeated

    for recorded in await tournaments.events(tournament_id):  # type: ignore[attr-defined]
        event = tournaments.decode(recorded)  # type: ignore[attr-defined]
        if isinstance(event, RoundSeated) and event.round == round_number:
            return event.seating_seed
    raise AssertionError("round not seated")


class CrashEveryOther:
    """A crash hook shared by successive process instances: it raises at ``step`` on the 1st,
    3rd, 5th … time any of them reaches it, so each event meets a crash before it gets through
    (for steps before the commit), or every other event is followed by one (after the commit)."""

    def __init__(self, step: str) -> None:
        self.step = step
        self.reached = 0
        self.crashes = 0

    def __call__(self, step: str) -> None:
        if step == self.step:
            self.reached += 1
            if self.reached % 2 == 1:
                self.crashes += 1
                raise SimulatedCrash(step)


async def run_until_done(services: Services, hook: CrashEveryOther) -> None:
    """Start the process again after each crash (reconciling first, as a restart does)."""
    for _attempt in range(100):
        process = ResultsProcess(services.tournaments, crash_hook=hook)
        try:
            await process.reconcile()
            await process.process_available()
            return
        except SimulatedCrash:
            continue
    raise AssertionError("the process never got through")


@pytest.mark.parametrize("step", STEPS)
async def test_killing_the_process_at_each_step_loses_and_doubles_nothing(
    services: Services, step: str
) -> None:
    tournaments, tables = services.tournaments, services.tables
    tournament_id = await started_tournament(tournaments, 6, seats=2, rounds=2, deals=2)
    hook = CrashEveryOther(step)
    for _round in (1, 2):
        for deal in (1, 2):
            await play_round_deal(tables, await tournaments.load(tournament_id), deal)
            await run_until_done(services, hook)
    # Every step is reached by every credit, except "tables": only by the one round change.
    assert hook.crashes >= (1 if step == "tables" else 6)
    state = await tournaments.load(tournament_id)
    assert state.phase is TournamentPhase.COMPLETE
    counts = await credited_deals(tournaments, tournament_id)
    assert len(counts) == 12 and set(counts.values()) == {1}
    assert dict(state.totals) == await verified_totals(tables, tournaments, tournament_id)


async def test_the_tournament_audit_holds_and_names_pending_credits(services: Services) -> None:
    from sapsam.audit.tournament_audit import verify_tournament

    tournaments, tables = services.tournaments, services.tables
    tournament_id = await started_tournament(tournaments, 5, seats=2, rounds=2, deals=1)
    process = ResultsProcess(tournaments)
    await play_round_deal(tables, await tournaments.load(tournament_id), 1)
    with psycopg.connect(services.database_url) as connection:  # the audit's own reads
        waiting = verify_tournament(connection, tournament_id)
    assert waiting.ok and not waiting.complete
    assert waiting.named("credits").status.value == "pending"
    await process.process_available()
    await play_round_deal(tables, await tournaments.load(tournament_id), 1)
    await process.process_available()
    with psycopg.connect(services.database_url) as connection:
        report = verify_tournament(connection, tournament_id)
    assert report.holds, [check for check in report.checks if check.failed]
    names = {check.name for check in report.checks}
    assert {"seating_seed[1]", "seating[1]", "seating_seed[2]", "seating[2]"} <= names
    assert {"table_seats[1.0]", "table_seats[1.1]", "credits", "standings"} <= names
    # 5 players at 2 seats: one table of 3 and one of 2, each playing one deal per round.
    assert report.deals_verified == 4


async def test_a_rounds_seed_stays_secret_until_its_round_is_seated(services: Services) -> None:
    from sapsam.app.tournaments import stream_id_for
    from sapsam.store.deal_secrets import load_deal_seed

    tournaments, tables = services.tournaments, services.tables
    tournament_id = await started_tournament(tournaments, 4, seats=2, rounds=2, deals=1)
    stream = stream_id_for(tournament_id)
    async with services.store.connection() as connection:
        assert await load_deal_seed(connection, stream, 1) is None  # revealed with round 1
        second = await load_deal_seed(connection, stream, 2)
        assert second is not None
        logged = await (await connection.execute("SELECT data::text FROM events")).fetchall()
    assert all(second.hex() not in row[0] for row in logged)
    await play_round_deal(tables, await tournaments.load(tournament_id), 1)
    await ResultsProcess(tournaments).process_available()
    async with services.store.connection() as connection:
        assert await load_deal_seed(connection, stream, 2) is None
    assert await _round_seed(tournaments, tournament_id, 2) == second.hex()


async def _dealer_drawn(tables: TableService, table_id: uuid.UUID) -> bool:
    try:
        return (await tables.load(table_id)).first_dealer is not None
    except TableNotFoundError:
        return False  # not created yet


async def test_two_followers_at_once_credit_each_deal_once(services: Services) -> None:
    import time

    from sapsam.app.tournaments import TournamentService
    from sapsam.store.background import StopSignal

    tournaments, tables = services.tournaments, services.tables
    tournament_id = await started_tournament(tournaments, 8, seats=4, rounds=2, deals=2)
    stopping = StopSignal()
    followers = [
        asyncio.create_task(
            ResultsProcess(TournamentService(services.store, tables)).run(stopping, 0.05)
        )
        for _ in range(2)
    ]
    try:
        for round_number in (1, 2):
            deadline = time.monotonic() + 60
            while (await tournaments.load(tournament_id)).current_round < round_number:
                assert time.monotonic() < deadline, "the next round was not seated"
                await asyncio.sleep(0.05)
            state = await tournaments.load(tournament_id)
            # The round is seated first; its tables are created and their dealers drawn after.
            while not all(
                [await _dealer_drawn(tables, t.table_id) for t in state.round_tables(round_number)]
            ):
                assert time.monotonic() < deadline, "the round's tables were not set up"
                await asyncio.sleep(0.05)
            for deal in (1, 2):
                await play_round_deal(tables, state, deal)
        deadline = time.monotonic() + 60
        while (await tournaments.load(tournament_id)).phase is not TournamentPhase.COMPLETE:
            assert time.monotonic() < deadline, "the tournament did not complete"
            await asyncio.sleep(0.05)
    finally:
        stopping.set()
        await asyncio.wait_for(asyncio.gather(*followers), 10)
    counts = await credited_deals(tournaments, tournament_id)
    assert len(counts) == 8 and set(counts.values()) == {1}
    assert dict((await tournaments.load(tournament_id)).totals) == await verified_totals(
        tables, tournaments, tournament_id
    )


async def test_events_of_no_interest_move_the_checkpoint_in_a_write_every_few_seconds(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sapsam.app import tournament_results
    from sapsam.domain.table import TablePhase
    from sapsam.rules.presets import DEFAULT_RULE_SET
    from sapsam.store.reads import last_position

    tables = services.tables
    process = ResultsProcess(services.tournaments)

    async def log_end() -> int:
        async with services.store.connection() as connection:
            return await last_position(connection)

    async def busy_table() -> None:  # game events of no tournament: nothing to credit
        created = await tables.create_table(DEFAULT_RULE_SET, 2, "operator", str(uuid.uuid4()))
        for player in ("ann", "bob"):
            await tables.join(created.table_id, player, None, str(uuid.uuid4()))
        assert (await tables.load(created.table_id)).phase is TablePhase.AWAITING_DEALER

    await busy_table()
    assert await process.process_available() == 0
    assert await process.checkpoint() == await log_end()  # the first look writes its position
    written = await process.checkpoint()
    await busy_table()
    assert await process.process_available() == 0
    assert await process.checkpoint() == written  # within the interval: remembered, not written
    assert await process.process_available() == 0  # and not read again
    monkeypatch.setattr(tournament_results, "IDLE_CHECKPOINT_SECONDS", 0.0)  # it has passed
    assert await process.process_available() == 0
    assert await process.checkpoint() == await log_end()
    # A restarted process starts from the checkpoint written and finds nothing to credit.
    assert await ResultsProcess(services.tournaments).process_available() == 0


async def test_the_results_follower_stops_at_once_while_it_waits_for_the_log(
    services: Services,
) -> None:
    import time

    import psycopg

    from sapsam.cli.bootstrap import results_follower

    poll_seconds = 60.0  # a stop that waited for the poll would fail the bound below
    follower = results_follower(ResultsProcess(services.tournaments), poll_seconds)
    follower.start()
    try:
        deadline = time.monotonic() + 30
        async with await psycopg.AsyncConnection.connect(
            services.database_url, autocommit=True
        ) as connection:
            # Its LISTEN ran (it holds the lock and has caught up): it waits for the log now.
            while not await (
                await connection.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = current_database()"
                    " AND query LIKE 'LISTEN%%' AND state = 'idle'"
                )
            ).fetchone():
                assert time.monotonic() < deadline, "the follower never listened"
                await asyncio.sleep(0.02)
    finally:
        started = time.monotonic()
        await follower.stop()
    assert time.monotonic() - started < 2.0
    assert follower.failures == 0


async def test_which_tournament_a_table_belongs_to_is_asked_once_per_table(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sapsam.audit.sample_play import play_deal, seated_table
    from sapsam.store.session import PostgresSession

    asked: list[str] = []
    real = PostgresSession.tournament_of_table

    async def counted(self: PostgresSession, table_id: str) -> uuid.UUID | None:
        asked.append(table_id)
        return await real(self, table_id)

    monkeypatch.setattr(PostgresSession, "tournament_of_table", counted)
    table = await seated_table(services.tables, 2)  # a table of no tournament
    process = ResultsProcess(services.tournaments)
    for number in (1, 2, 3):
        await play_deal(services.tables, table, number)
        assert await process.process_available() == 0
    assert asked == [str(table)]  # three deals scored, one question

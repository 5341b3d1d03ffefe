"""The results process racing a cancellation: a deal scored before the cancellation is being
credited when the operator cancels. The credit, decided on the running tournament, loses the
append race, decides again on the cancelled one and credits nothing, without an error or a
parked table; the standings the cancellation recorded stay the final ones. The cancellation is
made at the exact moment (the results process's ``decided`` step: credit decided, not yet
appended), from another store on another thread, so the interleaving is forced."""

from __future__ import annotations

import asyncio
import threading
import uuid

from tournament_play import Services, started_tournament

from sapsam.app.store_interface import RESULTS_PROCESS
from sapsam.app.tables import TableService
from sapsam.app.tournament_control import TournamentControl
from sapsam.app.tournament_results import ResultsProcess
from sapsam.audit.sample_play import play_deal
from sapsam.domain.tournament import TournamentPhase
from sapsam.domain.tournament_events import DealCredited, TournamentCancelled
from sapsam.store.event_store import EventStore
from sapsam.store.projections import registered_projectors
from sapsam.store.table_projections import projectors as table_projectors


def _cancel_elsewhere(database_url: str, tournament_id: uuid.UUID) -> None:
    """The operator's cancellation, from a store (and an event loop) of its own."""

    async def cancel() -> None:
        store = await EventStore.connect(
            database_url, projectors=[*table_projectors(), *registered_projectors()]
        )
        store.prepare()
        try:
            control = TournamentControl(store, TableService(store))
            await control.cancel(tournament_id, "the venue closed", "cancel")
        finally:
            await store.close()

    failures: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(cancel())
        except BaseException as error:  # handed to the test below
            failures.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert not failures, failures


async def test_a_deal_credited_while_the_tournament_is_cancelled_counts_for_nothing(
    services: Services,
) -> None:
    tournaments, tables = services.tournaments, services.tables
    tournament_id = await started_tournament(tournaments, 4, seats=2, rounds=2, deals=2)
    first, second = (await tournaments.load(tournament_id)).round_tables(1)
    cancelled_once: list[str] = []

    def cancel_when_decided(step: str) -> None:
        if step == "decided" and not cancelled_once:
            cancelled_once.append(step)
            _cancel_elsewhere(services.database_url, tournament_id)

    process = ResultsProcess(tournaments, crash_hook=cancel_when_decided)
    await play_deal(tables, first.table_id, 1)
    assert await process.process_available() == 0  # decided, lost the race, nothing credited
    assert cancelled_once
    state = await tournaments.load(tournament_id)
    assert state.phase is TournamentPhase.CANCELLED
    recorded = [tournaments.decode(item) for item in await tournaments.events(tournament_id)]
    assert not any(isinstance(event, DealCredited) for event in recorded)
    [cancellation] = [event for event in recorded if isinstance(event, TournamentCancelled)]
    assert set(cancellation.totals) == {0}  # nothing was credited before the cancellation
    # A deal the other table scores after the cancellation: no error, nothing credited, no
    # table parked, the checkpoint past both.
    await play_deal(tables, second.table_id, 1)
    assert await process.process_available() == 0
    after = [tournaments.decode(item) for item in await tournaments.events(tournament_id)]
    assert after == recorded
    async with services.store.session() as session:
        assert not await session.failing_tables(RESULTS_PROCESS)
        checkpoint = await session.read_checkpoint(process.name)
    [scored] = [item for item in await tables.events(second.table_id) if item.type == "DealScored"]
    assert checkpoint == scored.position  # moved past it with the decision to credit nothing
    async with services.store.session() as session:
        lines, _ = await session.standings_page(str(tournament_id), "total", 0, 10)
    assert {line.total for line in lines} == {0}

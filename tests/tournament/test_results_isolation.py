"""The results process credits every other table while one table's deal keeps failing: that table
is parked (logged, recorded, backed off) and credited once it can be, exactly once."""

from __future__ import annotations

import logging
import uuid

import pytest
from tournament_play import Services, credited_deals, play_round_deal, started_tournament

from sapsam.app.tournament_results import ResultsProcess
from sapsam.domain.tournament import CreditDeal, TournamentPhase
from sapsam.log.records import RecordedEvent
from sapsam.store.table_failures import RESULTS_PROCESS, failing_tables


class FakeClock:
    def __init__(self) -> None:
        self.now_ms = 1_000_000

    def __call__(self) -> int:
        return self.now_ms


class ProcessWithABrokenTable(ResultsProcess):
    """The real results process, except that crediting the ``broken`` table always raises."""

    broken: uuid.UUID | None = None

    async def _credit(  # type: ignore[override]
        self,
        connection: object,
        tournament_id: uuid.UUID,
        command: CreditDeal,
        event: RecordedEvent,
    ) -> bool:
        if command.table_id == self.broken:
            raise ZeroDivisionError("this table's credit always fails")
        return await super()._credit(connection, tournament_id, command, event)  # type: ignore[arg-type]


async def test_a_failing_table_is_parked_and_the_others_are_credited(
    services: Services, caplog: pytest.LogCaptureFixture
) -> None:
    tournaments, tables = services.tournaments, services.tables
    tournament_id = await started_tournament(tournaments, 12, seats=4, rounds=1, deals=1)
    clock = FakeClock()
    process = ProcessWithABrokenTable(tournaments, clock=clock)
    played = await play_round_deal(tables, await tournaments.load(tournament_id), 1)
    process.broken = played[0]
    with caplog.at_level(logging.ERROR, logger="sapsam.app.tournament_results"):
        assert await process.process_available() == 2
    assert f"results process failed at table {played[0]}" in caplog.text
    assert "always fails" not in caplog.text
    counts = await credited_deals(tournaments, tournament_id)
    assert sorted(counts) == sorted(f"{table}/1" for table in played[1:])
    async with services.store.connection() as connection:
        (failure,) = await failing_tables(connection, RESULTS_PROCESS)
    assert failure.table_id == str(played[0]) and failure.last_error == "ZeroDivisionError"
    assert len(failure.pending_positions) == 1
    # Backed off: not tried before its time, even when the log moves on.
    process.broken = None
    assert await process.process_available() == 0
    clock.now_ms = failure.retry_at_ms
    assert await process.process_available() == 1
    state = await tournaments.load(tournament_id)
    assert state.phase is TournamentPhase.COMPLETE
    assert set((await credited_deals(tournaments, tournament_id)).values()) == {1}
    async with services.store.connection() as connection:
        assert await failing_tables(connection) == []

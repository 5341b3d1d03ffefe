"""Re-seats racing each other: a re-seat is two appends (the table's ``SeatReplaced``, then the
tournament's ``SeatReassigned``), so two at once, in one process or in two, must not both pass the
tournament's check and change their tables when only one can be recorded in the tournament. The
one refused changes nothing, and the table and the tournament agree on every seat's holder (the
audit holds)."""

from __future__ import annotations

import asyncio
import uuid

import psycopg
from tournament_play import Services, started_tournament

from sapsam.app.tournament_control import TournamentControl
from sapsam.app.tournament_results import ResultsProcess
from sapsam.audit.sample_play import play_deal
from sapsam.audit.tournament_audit import verify_tournament
from sapsam.domain.errors import DomainError, Reason


async def _two_forfeited_seats(
    services: Services,
) -> tuple[uuid.UUID, uuid.UUID, uuid.UUID]:
    """A started tournament of two 2-seat tables, one deal played at each, and seat 1's player
    of each table forfeited."""
    control = services.tournaments
    tournament_id = await started_tournament(control, 4, seats=2, rounds=2, deals=3)
    first, second = (await control.load(tournament_id)).round_tables(1)
    for table in (first, second):
        await play_deal(services.tables, table.table_id, 1)
    await ResultsProcess(control).process_available()
    await control.forfeit(tournament_id, first.players[1], "left", "forfeit-first")
    await control.forfeit(tournament_id, second.players[1], "left", "forfeit-second")
    return tournament_id, first.table_id, second.table_id


async def _agree_and_audit(
    services: Services, tournament_id: uuid.UUID, table_ids: tuple[uuid.UUID, ...]
) -> None:
    state = await services.tournaments.load(tournament_id)
    for table_id in table_ids:
        seats = (await services.tables.load(table_id)).seats
        assert seats == state.tables[table_id].holders
        await play_deal(services.tables, table_id, 2)
    await ResultsProcess(services.tournaments).process_available()
    with psycopg.connect(services.database_url) as connection:
        report = verify_tournament(connection, tournament_id)
    assert report.holds, [(check.name, check.detail) for check in report.failed]


def _refusals(results: list[object]) -> list[Reason]:
    return [result.reason for result in results if isinstance(result, DomainError)]


async def test_one_newcomer_for_two_tables_at_once_takes_one_seat(services: Services) -> None:
    tournament_id, first, second = await _two_forfeited_seats(services)
    # Two services over one database: two server processes.
    other = TournamentControl(services.store, services.tables)
    results = await asyncio.gather(
        services.tournaments.replace_seat(tournament_id, first, 1, "newcomer", "reseat-1"),
        other.replace_seat(tournament_id, second, 1, "newcomer", "reseat-2"),
        return_exceptions=True,
    )
    assert _refusals(results) == [Reason.ALREADY_REGISTERED], results
    seated = [
        table_id
        for table_id in (first, second)
        if "newcomer" in (await services.tables.load(table_id)).seats
    ]
    assert len(seated) == 1
    await _agree_and_audit(services, tournament_id, (first, second))


async def test_two_newcomers_for_one_seat_at_once_one_is_seated(services: Services) -> None:
    tournament_id, first, _ = await _two_forfeited_seats(services)
    results = await asyncio.gather(
        services.tournaments.replace_seat(tournament_id, first, 1, "newcomer-a", "reseat-a"),
        services.tournaments.replace_seat(tournament_id, first, 1, "newcomer-b", "reseat-b"),
        return_exceptions=True,
    )
    assert _refusals(results) == [Reason.PLAYER_SEATED], results
    await _agree_and_audit(services, tournament_id, (first,))


async def test_a_retry_racing_its_original_gets_the_original_answer(services: Services) -> None:
    tournament_id, first, _ = await _two_forfeited_seats(services)
    original, retry = await asyncio.gather(
        services.tournaments.replace_seat(tournament_id, first, 1, "newcomer", "reseat"),
        services.tournaments.replace_seat(tournament_id, first, 1, "newcomer", "reseat"),
    )
    assert retry.replayed and retry.events == original.events
    await _agree_and_audit(services, tournament_id, (first,))

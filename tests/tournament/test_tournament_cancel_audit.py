"""The tournament audit of a cancelled tournament: a deal that finishes at one of its tables after
the cancellation counts for nothing (it is not a credit still pending), and the standings the
cancellation records are checked against the verified deals as final standings are.

The first deal's outcome is chosen, not left to the cards: ``player-01`` sets its rows out of
order (a foul), so ``player-00`` wins every row and the totals are never level (level totals
swapped would be the honest standings, not a forgery)."""

from __future__ import annotations

import dataclasses
import uuid

import psycopg
from tournament_play import Services, started_tournament

from sapsam.app.tournament_results import ResultsProcess
from sapsam.app.tournaments import stream_id_for
from sapsam.audit.report import AuditReport, Status
from sapsam.audit.sample_play import play_deal
from sapsam.audit.tournament_audit import verify_tournament
from sapsam.domain.tournament_events import TournamentCancelled

LOSER = "player-01"
"""The player who fouls deal 1 (``started_tournament`` registers player-00 and player-01)."""


def _audit(services: Services, tournament_id: uuid.UUID) -> AuditReport:
    with psycopg.connect(services.database_url) as connection:
        return verify_tournament(connection, tournament_id)


async def _cancelled_with_a_deal_after(services: Services) -> tuple[uuid.UUID, uuid.UUID]:
    tournaments, tables = services.tournaments, services.tables
    tournament_id = await started_tournament(tournaments, 2, seats=2, rounds=2, deals=2)
    [table] = (await tournaments.load(tournament_id)).round_tables(1)
    process = ResultsProcess(tournaments)
    await play_deal(tables, table.table_id, 1, fouls=(LOSER,))
    assert await process.process_available() == 1
    await tournaments.cancel(tournament_id, "venue closed", "cancel")
    await play_deal(tables, table.table_id, 2)  # the players finish the deal in play
    await process.process_available()  # counts for nothing
    return tournament_id, table.table_id


async def test_a_cancelled_tournament_verifies_with_a_deal_finished_after_the_cancellation(
    services: Services,
) -> None:
    tournament_id, _ = await _cancelled_with_a_deal_after(services)
    report = _audit(services, tournament_id)
    assert report.holds, [(check.name, check.status, check.detail) for check in report.checks]
    assert "after the cancellation" in report.named("credits").detail
    assert "cancellation" in report.named("standings").detail
    assert report.deals_verified == 1


async def test_a_cancellations_standings_are_checked_against_the_verified_deals(
    services: Services,
) -> None:
    tournaments = services.tournaments
    tournament_id = await started_tournament(tournaments, 2, seats=2, rounds=2, deals=2)
    [table] = (await tournaments.load(tournament_id)).round_tables(1)
    await play_deal(services.tables, table.table_id, 1, fouls=(LOSER,))
    assert await ResultsProcess(tournaments).process_available() == 1
    state = await tournaments.load(tournament_id)
    honest = TournamentCancelled(
        reason="venue closed", cancelled_at_ms=1, players=(), totals=(), places=()
    )
    standing = state.standings()
    # The cancellation as decide would record it, but with the first two totals swapped.
    forged = dataclasses.replace(
        honest,
        players=tuple(item.player_id for item in standing),
        totals=tuple(reversed([item.total for item in standing])),
        places=tuple(item.place for item in standing),
    )
    # player-01's foul: player-00 won every row, so the totals differ and the swap is a forgery.
    assert [(item.player_id, item.total > 0) for item in standing] == [
        ("player-00", True),
        (LOSER, False),
    ]
    assert forged.totals != tuple(item.total for item in standing)
    async with services.store.session() as session:
        await session.append(
            stream_id_for(tournament_id),
            state.version,
            [tournaments.encode(forged)],
            "forged-cancel",
            "operator",
        )
    report = _audit(services, tournament_id)
    assert report.named("standings").status is Status.FAILED

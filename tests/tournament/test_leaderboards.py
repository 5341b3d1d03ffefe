"""Leaderboards across tournaments (overall, per rule set, per period), paged, with the caller's
neighbourhood; and the tournament read models rebuilt from the log to the same rows."""

from __future__ import annotations

import uuid

import psycopg
from tournament_play import Services, play_round_deal, settings

from sapsam.app.tournament_results import ResultsProcess
from sapsam.app.tournaments import TournamentService
from sapsam.domain.tournament import TieBreak, rank_players
from sapsam.rules.presets import preset
from sapsam.store.projections import rebuild_projections, registered_projectors
from sapsam.store.table_projections import projectors as table_projectors
from sapsam.store.tournament_queries import (
    leaderboard_around,
    leaderboard_page,
    standings_page,
)

JANUARY = 1_768_435_200_000  # 2026-01-15 00:00 UTC
FEBRUARY = 1_771_113_600_000  # 2026-02-15 00:00 UTC


async def play_tournament(
    services: Services, now_ms: int, rule_set: str, players: list[str]
) -> uuid.UUID:
    tournaments = TournamentService(services.store, services.tables, clock=lambda: now_ms)
    created = await tournaments.create(
        settings(seats=2, rounds=1, deals=1, rule_set=preset(rule_set)),
        "operator",
        f"create-{uuid.uuid4()}",
    )
    tournament_id = created.tournament_id
    for player in players:
        await tournaments.register(tournament_id, player, f"register-{tournament_id}")
    await tournaments.start(tournament_id, "operator", f"start-{tournament_id}")
    await play_round_deal(services.tables, await tournaments.load(tournament_id), 1)
    await ResultsProcess(tournaments).process_available()
    return tournament_id


async def rows(services: Services, sql: str) -> list[tuple[object, ...]]:
    async with services.store.connection() as connection:
        return [tuple(row) for row in await (await connection.execute(sql)).fetchall()]


async def test_leaderboards_by_rule_set_and_period_paged_and_around_me(services: Services) -> None:
    players = [f"p{index}" for index in range(6)]
    first = await play_tournament(services, JANUARY, "pagat", players[:4])
    second = await play_tournament(services, FEBRUARY, "two_four", players[2:])
    tournaments = services.tournaments
    totals = {
        tournament: dict((await tournaments.load(tournament)).totals)
        for tournament in (first, second)
    }
    overall: dict[str, int] = {}
    for board in totals.values():
        for player, total in board.items():
            overall[player] = overall.get(player, 0) + total
    async with services.store.connection() as connection:
        page, size = await leaderboard_page(connection, None, None, 0, 100)
        assert size == 6 and {row.player_id: row.total for row in page} == overall
        assert {row.player_id: row.tournaments_played for row in page}["p2"] == 2
        by_rule, _ = await leaderboard_page(connection, "pagat", None, 0, 100)
        assert {row.player_id: row.total for row in by_rule} == totals[first]
        by_period, _ = await leaderboard_page(connection, None, "2026-02", 0, 100)
        assert {row.player_id: row.total for row in by_period} == totals[second]
        assert await leaderboard_page(connection, None, "2025-12", 0, 100) == ([], 0)
        # Pages of 4 and 2 make the whole board; places are shared on equal totals.
        first_page, _ = await leaderboard_page(connection, None, None, 0, 4)
        second_page, _ = await leaderboard_page(connection, None, None, 4, 4)
        assert first_page + second_page == page and len(second_page) == 2
        # A page past the end is empty but still says the board's size.
        assert await leaderboard_page(connection, None, None, 6, 4) == ([], 6)
        for index, row in enumerate(page):
            if index and row.total == page[index - 1].total:
                assert row.place == page[index - 1].place
            else:
                assert row.place == index + 1
        # Around me: the caller's line with up to one line above and below.
        middle = page[2].player_id
        around = await leaderboard_around(connection, None, None, middle, 1)
        assert [row.player_id for row in around] == [row.player_id for row in page[1:4]]
        assert await leaderboard_around(connection, None, None, "stranger", 2) == []
        standings, count = await standings_page(connection, str(first), "none", 0, 10)
        assert count == 4 and {row.player_id: row.total for row in standings} == totals[first]
        # The SQL places agree with the aggregate's, with and without the tie-break.
        state = await tournaments.load(first)
        for tie_break in (TieBreak.NONE, TieBreak.DEALS_WON):
            ranked = rank_players(
                state.entrants, state.totals, state.deals_won, state.deals_played, tie_break
            )
            lines, _ = await standings_page(connection, str(first), tie_break.value, 0, 10)
            expected = {item.player_id: item.place for item in ranked}
            assert {row.player_id: row.place for row in lines} == expected


async def test_tournament_read_models_rebuild_to_the_same_rows(services: Services) -> None:
    await play_tournament(services, JANUARY, "pagat", ["a", "b", "c", "d", "e"])
    queries = [
        "SELECT * FROM tournaments ORDER BY tournament_id",
        "SELECT * FROM tournament_entries ORDER BY tournament_id, player_id",
        "SELECT * FROM tournament_tables ORDER BY table_id",
    ]
    before = [await rows(services, query) for query in queries]
    with psycopg.connect(services.database_url, autocommit=True) as connection:
        rebuild_projections(connection, [*table_projectors(), *registered_projectors()])
    assert [await rows(services, query) for query in queries] == before
    assert len(before[1]) == 5 and len(before[2]) == 2

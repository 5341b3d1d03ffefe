"""Named queries over the tournament read models: standings, leaderboards, lists
(the statements are in ``store/sql/tournaments.sql``).

Places are SQL ``rank()``: equal keys share a place and the next place skips (1, 1, 3), exactly as
``sapsam.domain.tournament.rank_players``. Lines sharing a place are listed by player id so that
pages are stable; that order carries no meaning.

Leaderboards are sums of ``tournament_entries`` over the tournaments that started, optionally only
those of one rule set and one period (the UTC month a tournament started in).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from sapsam.store.queries import query

Connection = psycopg.AsyncConnection[Any]


@dataclass(frozen=True)
class StandingRow:
    """One line of a tournament's standings."""

    player_id: str
    total: int
    deals_won: int
    deals_played: int
    place: int


@dataclass(frozen=True)
class LeaderboardRow:
    """One line of a leaderboard; ``line`` is its 1-based position in the whole board."""

    player_id: str
    total: int
    deals_played: int
    tournaments_played: int
    place: int
    line: int


async def standings_page(
    connection: Connection, tournament_id: str, tie_break: str, offset: int, limit: int
) -> tuple[list[StandingRow], int]:
    """A page of standings from ``offset`` and the number of lines in all."""
    if tie_break == "deals_won":
        statement = query("tournaments.standings_deals_won")
    else:
        statement = query("tournaments.standings")
    rows = await (
        await connection.execute(
            statement, {"tournament": tournament_id, "offset": offset, "limit": limit}
        )
    ).fetchall()
    count = await (
        await connection.execute(query("tournaments.standings_size"), {"tournament": tournament_id})
    ).fetchone()
    page = [StandingRow(str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows]
    return page, int(count[0]) if count else 0


def _leaderboard_rows(rows: list[Any]) -> list[LeaderboardRow]:
    return [
        LeaderboardRow(str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5]))
        for r in rows
    ]


async def leaderboard_page(
    connection: Connection, rule_set: str | None, period: str | None, offset: int, limit: int
) -> tuple[list[LeaderboardRow], int]:
    """A page of the leaderboard from ``offset`` and the number of players on it."""
    parameters = {"rule_set": rule_set, "period": period, "offset": offset, "limit": limit}
    rows = await (await connection.execute(query("tournaments.leaderboard"), parameters)).fetchall()
    # Every row carries the board's size; past the end, the one row has only that.
    size = int(rows[0][6])
    return _leaderboard_rows([row for row in rows if row[0] is not None]), size


async def leaderboard_around(
    connection: Connection, rule_set: str | None, period: str | None, player_id: str, radius: int
) -> list[LeaderboardRow]:
    """The player's line with up to ``radius`` lines above and below; empty if not on the board."""
    rows = await (
        await connection.execute(
            query("tournaments.leaderboard_around"),
            {"rule_set": rule_set, "period": period, "player": player_id, "radius": radius},
        )
    ).fetchall()
    return _leaderboard_rows(rows)


async def tournament_ids_page(
    connection: Connection, phases: list[str] | None, after: tuple[int, str] | None, limit: int
) -> list[tuple[str, int]]:
    """Tournament ids (with their creation time), newest first, after a page boundary."""
    rows = await (
        await connection.execute(
            query("tournaments.page"),
            {
                "phases": phases,
                "after_time": None if after is None else after[0],
                "after_id": None if after is None else after[1],
                "limit": limit,
            },
        )
    ).fetchall()
    return [(str(row[0]), int(row[1])) for row in rows]


async def running_tournament_ids(connection: Connection) -> list[uuid.UUID]:
    """Every tournament in play (phase ``RUNNING``)."""
    rows = await (await connection.execute(query("tournaments.running"))).fetchall()
    return [uuid.UUID(str(row[0])) for row in rows]


@contextlib.asynccontextmanager
async def tournament_control_lock(
    connection: Connection, tournament_id: uuid.UUID
) -> AsyncIterator[None]:
    """Hold the tournament's control lock (across server processes) until the block ends; a
    session lock, released at the end, or with the connection if the process dies."""
    key = {"key": int.from_bytes(tournament_id.bytes[:4], "big", signed=True)}
    await connection.execute(query("tournaments.hold_control_lock"), key)
    try:
        yield
    finally:
        await connection.execute(query("tournaments.release_control_lock"), key)


@contextlib.asynccontextmanager
async def tournament_pause_lock(
    connection: Connection, tournament_id: uuid.UUID, *, shared: bool
) -> AsyncIterator[None]:
    """Hold the tournament's pause lock until the block ends: exclusively (a pause) or shared (a
    deal's start at one of its tables). A session lock, released at the end, or with the
    connection if the process dies."""
    key = {"key": int.from_bytes(tournament_id.bytes[:4], "big", signed=True)}
    if shared:
        hold, release = (
            query("tournaments.hold_pause_lock_shared"),
            query("tournaments.release_pause_lock_shared"),
        )
    else:
        hold, release = (
            query("tournaments.hold_pause_lock"),
            query("tournaments.release_pause_lock"),
        )
    await connection.execute(hold, key)
    try:
        yield
    finally:
        await connection.execute(release, key)


async def tournament_phase_of_table(connection: Connection, table_id: str) -> str | None:
    """The phase of the tournament a table belongs to (``PAUSED`` …), None for no tournament."""
    row = await (
        await connection.execute(query("tournaments.phase_of_table"), {"table": table_id})
    ).fetchone()
    return None if row is None else str(row[0])


async def tournament_of_table(connection: Connection, table_id: str) -> uuid.UUID | None:
    """The tournament a table was created for, if any."""
    row = await (
        await connection.execute(query("tournaments.of_table"), {"table": table_id})
    ).fetchone()
    return None if row is None else uuid.UUID(str(row[0]))


async def tables_of_paused_tournaments(
    connection: Connection, table_ids: Sequence[str]
) -> set[str]:
    """Those of ``table_ids`` whose tournament is paused now."""
    if not table_ids:
        return set()
    cursor = await connection.execute(query("tournaments.paused_tables"), {"tables": table_ids})
    return {str(row[0]) for row in await cursor.fetchall()}

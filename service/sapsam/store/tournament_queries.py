"""Named queries over the tournament read models: standings, leaderboards, lists.

Places are SQL ``rank()``: equal keys share a place and the next place skips (1, 1, 3), exactly as
``sapsam.domain.tournament.rank_players``. Lines sharing a place are listed by player id so that
pages are stable; that order carries no meaning.

Leaderboards are sums of ``tournament_entries`` over the tournaments that started, optionally only
those of one rule set and one period (the UTC month a tournament started in).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Final

import psycopg

Connection = psycopg.Connection[Any]

_STANDINGS: Final = {
    "none": """
        SELECT player_id, total, deals_won, deals_played,
            rank() OVER (ORDER BY total DESC) AS place
        FROM tournament_entries WHERE tournament_id = %(tournament)s
        ORDER BY place, player_id OFFSET %(offset)s LIMIT %(limit)s
    """,
    "deals_won": """
        SELECT player_id, total, deals_won, deals_played,
            rank() OVER (ORDER BY total DESC, deals_won DESC) AS place
        FROM tournament_entries WHERE tournament_id = %(tournament)s
        ORDER BY place, player_id OFFSET %(offset)s LIMIT %(limit)s
    """,
}

_LEADERBOARD: Final = """
    WITH board AS (
        SELECT entry.player_id, sum(entry.total)::bigint AS total,
            sum(entry.deals_played) AS deals_played, count(*) AS tournaments_played
        FROM tournament_entries entry JOIN tournaments USING (tournament_id)
        WHERE tournaments.started_at_ms IS NOT NULL
            AND (%(rule_set)s::text IS NULL OR tournaments.rule_set_name = %(rule_set)s)
            AND (%(period)s::text IS NULL OR tournaments.period = %(period)s)
        GROUP BY entry.player_id
    ), ranked AS (
        SELECT player_id, total, deals_played, tournaments_played,
            rank() OVER (ORDER BY total DESC) AS place,
            row_number() OVER (ORDER BY total DESC, player_id) AS line,
            count(*) OVER () AS size
        FROM board
    )
"""


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


def standings_page(
    connection: Connection, tournament_id: str, tie_break: str, offset: int, limit: int
) -> tuple[list[StandingRow], int]:
    """A page of standings from ``offset`` and the number of lines in all."""
    rows = connection.execute(
        _STANDINGS["deals_won" if tie_break == "deals_won" else "none"],
        {"tournament": tournament_id, "offset": offset, "limit": limit},
    ).fetchall()
    count = connection.execute(
        "SELECT count(*) FROM tournament_entries WHERE tournament_id = %s", [tournament_id]
    ).fetchone()
    page = [StandingRow(str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows]
    return page, int(count[0]) if count else 0


def _leaderboard_rows(rows: list[Any]) -> list[LeaderboardRow]:
    return [
        LeaderboardRow(str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5]))
        for r in rows
    ]


def leaderboard_page(
    connection: Connection, rule_set: str | None, period: str | None, offset: int, limit: int
) -> tuple[list[LeaderboardRow], int]:
    """A page of the leaderboard from ``offset`` and the number of players on it."""
    parameters = {"rule_set": rule_set, "period": period, "offset": offset, "limit": limit}
    rows = connection.execute(
        _LEADERBOARD
        + "SELECT player_id, total, deals_played, tournaments_played, place, line, size"
        " FROM ranked ORDER BY line OFFSET %(offset)s LIMIT %(limit)s",
        parameters,
    ).fetchall()
    size = connection.execute(_LEADERBOARD + "SELECT count(*) FROM ranked", parameters).fetchone()
    return _leaderboard_rows(rows), int(size[0]) if size else 0


def leaderboard_around(
    connection: Connection, rule_set: str | None, period: str | None, player_id: str, radius: int
) -> list[LeaderboardRow]:
    """The player's line with up to ``radius`` lines above and below; empty if not on the board."""
    rows = connection.execute(
        _LEADERBOARD
        + """
        SELECT player_id, total, deals_played, tournaments_played, place, line, size
        FROM ranked WHERE line BETWEEN
            (SELECT line FROM ranked WHERE player_id = %(player)s) - %(radius)s
            AND (SELECT line FROM ranked WHERE player_id = %(player)s) + %(radius)s
        ORDER BY line
        """,
        {"rule_set": rule_set, "period": period, "player": player_id, "radius": radius},
    ).fetchall()
    return _leaderboard_rows(rows)


def tournament_ids_page(
    connection: Connection, phases: list[str] | None, after: tuple[int, str] | None, limit: int
) -> list[tuple[str, int]]:
    """Tournament ids (with their creation time), newest first, after a page boundary."""
    rows = connection.execute(
        """
        SELECT tournament_id::text, created_at_ms FROM tournaments
        WHERE (%(phases)s::text[] IS NULL OR phase = ANY(%(phases)s))
            AND (%(after_time)s::bigint IS NULL
                 OR (created_at_ms, tournament_id) < (%(after_time)s, %(after_id)s::uuid))
        ORDER BY created_at_ms DESC, tournament_id DESC LIMIT %(limit)s
        """,
        {
            "phases": phases,
            "after_time": None if after is None else after[0],
            "after_id": None if after is None else after[1],
            "limit": limit,
        },
    ).fetchall()
    return [(str(row[0]), int(row[1])) for row in rows]


def running_tournament_ids(connection: Connection) -> list[uuid.UUID]:
    """Every tournament in play (phase ``RUNNING``)."""
    rows = connection.execute(
        "SELECT tournament_id FROM tournaments WHERE phase = 'RUNNING'"
    ).fetchall()
    return [uuid.UUID(str(row[0])) for row in rows]


def tournament_of_table(connection: Connection, table_id: str) -> uuid.UUID | None:
    """The tournament a table was created for, if any."""
    row = connection.execute(
        "SELECT tournament_id FROM tournament_tables WHERE table_id = %s", [table_id]
    ).fetchone()
    return None if row is None else uuid.UUID(str(row[0]))

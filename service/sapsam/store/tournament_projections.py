"""Tournament read models: ``tournaments``, ``tournament_entries`` and ``tournament_tables``.

Kept current inside each append's transaction like the table read models, and rebuilt from the
log by ``sapsam projections rebuild`` to the same rows. Each row belongs to one tournament stream
(totals are sums over that stream's ``DealCredited`` events), so appends to different streams
commute, as ``sapsam.store.projections`` requires.

- ``tournaments``: one row per tournament (settings, phase — ``PAUSED`` and ``CANCELLED``
  included —, current round, the month it started in, for the leaderboards' periods).
- ``tournament_entries``: one row per registered player (and per player re-seated in): total,
  deals won and played. Standings
  are this table ranked by total (``rank()``: equal totals share a place), and the leaderboards
  are its sums across tournaments, filtered by rule set and period.
- ``tournament_tables``: which tournament, round and seats each tournament table belongs to; the
  results process reads it to know whose deal a ``DealScored`` is.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from psycopg.types.json import Jsonb

from sapsam.app.tournaments import STREAM_PREFIX as STREAM_PREFIX  # re-exported
from sapsam.log.records import RecordedEvent
from sapsam.store.projections import Projector, SqlProjector, StatementSink

TOURNAMENTS_SQL = """
CREATE TABLE tournaments (
    tournament_id uuid PRIMARY KEY,
    name text NOT NULL,
    rule_set_name text NOT NULL,
    seats_per_table integer NOT NULL,
    rounds integer NOT NULL,
    deals_per_round integer NOT NULL,
    reseating text NOT NULL,
    tie_break text NOT NULL,
    registration_opens_ms bigint NOT NULL,
    registration_closes_ms bigint NOT NULL,
    max_entrants integer NOT NULL,
    created_at_ms bigint NOT NULL,
    started_at_ms bigint,
    period text,
    phase text NOT NULL,
    current_round integer NOT NULL,
    rounds_completed integer NOT NULL,
    entrant_count integer NOT NULL,
    version integer NOT NULL
)
"""
TOURNAMENTS_INDEX_SQL = (
    "CREATE INDEX tournaments_created ON tournaments (created_at_ms, tournament_id)"
)
ENTRIES_SQL = """
CREATE TABLE tournament_entries (
    tournament_id uuid NOT NULL,
    player_id text NOT NULL,
    total bigint NOT NULL,  -- up to rounds x deals x a deal's ~3.0e9 (rules.scoring)
    deals_won integer NOT NULL,
    deals_played integer NOT NULL,
    PRIMARY KEY (tournament_id, player_id)
)
"""
ENTRIES_INDEX_SQL = "CREATE INDEX tournament_entries_player ON tournament_entries (player_id)"
TABLES_SQL = """
CREATE TABLE tournament_tables (
    table_id uuid PRIMARY KEY,
    tournament_id uuid NOT NULL,
    round integer NOT NULL,
    table_index integer NOT NULL,
    players jsonb NOT NULL
)
"""


def period_of(unix_ms: int) -> str:
    """The leaderboard period (UTC month, ``YYYY-MM``) a tournament started in."""
    return datetime.fromtimestamp(unix_ms / 1000, UTC).strftime("%Y-%m")


def _tournament_id(event: RecordedEvent) -> str:
    return event.stream_id.removeprefix(STREAM_PREFIX)


def _int(value: Any) -> int:
    assert isinstance(value, int)
    return value


def apply_tournament(connection: StatementSink, event: RecordedEvent) -> None:
    """Fold one tournament event into the tournament read models; other streams are ignored."""
    if not event.stream_id.startswith(STREAM_PREFIX):
        return
    tournament_id = _tournament_id(event)
    data = event.data
    if event.type == "TournamentCreated":
        rule_set = data["rule_set"]
        assert isinstance(rule_set, dict)
        connection.execute(
            """
            INSERT INTO tournaments (tournament_id, name, rule_set_name, seats_per_table, rounds,
                deals_per_round, reseating, tie_break, registration_opens_ms,
                registration_closes_ms, max_entrants, created_at_ms, phase, current_round,
                rounds_completed, entrant_count, version)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'REGISTRATION', 0, 0, 0, %s)
            """,
            [
                tournament_id,
                data["name"],
                rule_set["name"],
                data["seats_per_table"],
                data["rounds"],
                data["deals_per_round"],
                data["reseating"],
                data["tie_break"],
                data["registration_opens_ms"],
                data["registration_closes_ms"],
                data["max_entrants"],
                data["created_at_ms"],
                event.version,
            ],
        )
        return
    connection.execute(
        "UPDATE tournaments SET version = %s WHERE tournament_id = %s",
        [event.version, tournament_id],
    )
    if event.type == "PlayerRegistered":
        connection.execute(
            "INSERT INTO tournament_entries VALUES (%s, %s, 0, 0, 0)",
            [tournament_id, data["player_id"]],
        )
        _count_entrants(connection, tournament_id)
    elif event.type == "PlayerUnregistered":
        connection.execute(
            "DELETE FROM tournament_entries WHERE tournament_id = %s AND player_id = %s",
            [tournament_id, data["player_id"]],
        )
        _count_entrants(connection, tournament_id)
    elif event.type == "TournamentStarted":
        started = _int(data["started_at_ms"])
        connection.execute(
            "UPDATE tournaments SET started_at_ms = %s, period = %s, phase = 'RUNNING'"
            " WHERE tournament_id = %s",
            [started, period_of(started), tournament_id],
        )
    elif event.type == "RoundSeated":
        table_ids = data["table_ids"]
        seatings = data["seatings"]
        assert isinstance(table_ids, list) and isinstance(seatings, list)
        for index, (table_id, players) in enumerate(zip(table_ids, seatings, strict=True)):
            connection.execute(
                "INSERT INTO tournament_tables VALUES (%s, %s, %s, %s, %s)",
                [table_id, tournament_id, data["round"], index, Jsonb(players)],
            )
        connection.execute(
            "UPDATE tournaments SET current_round = %s, phase = 'RUNNING' WHERE tournament_id = %s",
            [data["round"], tournament_id],
        )
    elif event.type == "DealCredited":
        players = data["players"]
        deltas = data["deltas"]
        assert isinstance(players, list) and isinstance(deltas, list)
        for player, delta in zip(players, deltas, strict=True):
            connection.execute(
                """
                UPDATE tournament_entries
                SET total = total + %s, deals_won = deals_won + %s,
                    deals_played = deals_played + 1
                WHERE tournament_id = %s AND player_id = %s
                """,
                [delta, 1 if _int(delta) > 0 else 0, tournament_id, player],
            )
    elif event.type == "RoundCompleted":
        # A round may complete during a pause: the tournament stays paused.
        connection.execute(
            "UPDATE tournaments SET rounds_completed = %s,"
            " phase = CASE WHEN phase = 'PAUSED' THEN 'PAUSED' ELSE 'BETWEEN_ROUNDS' END"
            " WHERE tournament_id = %s",
            [data["round"], tournament_id],
        )
    elif event.type == "TournamentPaused":
        connection.execute(
            "UPDATE tournaments SET phase = 'PAUSED' WHERE tournament_id = %s", [tournament_id]
        )
    elif event.type == "TournamentResumed":
        # Between rounds, the next round's RoundSeated follows in the same append.
        connection.execute(
            "UPDATE tournaments SET phase = CASE WHEN rounds_completed >= current_round"
            " THEN 'BETWEEN_ROUNDS' ELSE 'RUNNING' END WHERE tournament_id = %s",
            [tournament_id],
        )
    elif event.type == "TournamentCancelled":
        connection.execute(
            "UPDATE tournaments SET phase = 'CANCELLED' WHERE tournament_id = %s", [tournament_id]
        )
    elif event.type == "SeatReassigned":
        # The new player is an entrant from now on (a forfeited one keeps its row).
        connection.execute(
            "INSERT INTO tournament_entries VALUES (%s, %s, 0, 0, 0) ON CONFLICT DO NOTHING",
            [tournament_id, data["player_id"]],
        )
        _count_entrants(connection, tournament_id)
    elif event.type == "TournamentCompleted":
        connection.execute(
            "UPDATE tournaments SET phase = 'COMPLETE' WHERE tournament_id = %s", [tournament_id]
        )


def _count_entrants(connection: StatementSink, tournament_id: str) -> None:
    connection.execute(
        """
        UPDATE tournaments SET entrant_count =
            (SELECT count(*) FROM tournament_entries WHERE tournament_id = %s)
        WHERE tournament_id = %s
        """,
        [tournament_id, tournament_id],
    )


def projectors() -> Sequence[Projector]:
    """The tournament read models (listed in ``sapsam.store.projectors.PROJECTOR_MODULES``)."""
    return [
        SqlProjector(
            name="tournaments",
            tables=("tournaments", "tournament_entries", "tournament_tables"),
            create_statements=(
                TOURNAMENTS_SQL,
                TOURNAMENTS_INDEX_SQL,
                ENTRIES_SQL,
                ENTRIES_INDEX_SQL,
                TABLES_SQL,
            ),
            apply_event=apply_tournament,
            stream_prefix=STREAM_PREFIX,
        )
    ]

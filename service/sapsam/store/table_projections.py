"""The game's read models: ``table_state`` (one row per table) and ``seat_scores`` (per deal).

Both are kept current inside each append's transaction and can be rebuilt from the log at any
time (``sapsam projections rebuild``) to the same rows. They hold public facts only: never a card
before the seed is revealed, never a nonce or a seed.

``table_state.phase`` follows the domain's ``TablePhase``; the per-seat ``seat_status`` array says
for each seat whether it committed, confirmed, revealed or timed out in the current deal, which
is what a lobby or a spectator needs without reading the log.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from sapsam.store.projections import Projector, SqlProjector
from sapsam.store.records import RecordedEvent

Connection = psycopg.Connection[Any]

TABLE_STATE_SQL = """
CREATE TABLE table_state (
    table_id uuid PRIMARY KEY,
    rule_set_name text NOT NULL,
    seat_count integer NOT NULL,
    series_length integer NOT NULL,
    created_by text NOT NULL,
    created_at text NOT NULL,
    players jsonb NOT NULL,
    phase text NOT NULL,
    dealer integer,
    deal_number integer NOT NULL,
    deals_scored integer NOT NULL,
    seat_status jsonb NOT NULL,
    series_totals jsonb NOT NULL,
    deadline_ms bigint,
    version integer NOT NULL,
    last_position bigint NOT NULL
)
"""
TABLE_STATE_INDEX_SQL = "CREATE INDEX table_state_phase ON table_state (phase, table_id)"
# The deadline sweeper looks up tables whose current deadline has passed.
TABLE_STATE_DEADLINE_INDEX_SQL = (
    "CREATE INDEX table_state_deadline ON table_state (deadline_ms) WHERE deadline_ms IS NOT NULL"
)
SEAT_SCORES_SQL = """
CREATE TABLE seat_scores (
    table_id uuid NOT NULL,
    deal_number integer NOT NULL,
    seat integer NOT NULL,
    player_id text NOT NULL,
    delta integer NOT NULL,
    series_total integer NOT NULL,
    fouled boolean NOT NULL,
    PRIMARY KEY (table_id, deal_number, seat)
)
"""
SEAT_SCORES_PLAYER_INDEX_SQL = "CREATE INDEX seat_scores_player ON seat_scores (player_id)"

_FRESH_SEAT = {"committed": False, "confirmed": False, "revealed": False, "timed_out": None}


def _table_id(event: RecordedEvent) -> str:
    return event.stream_id.removeprefix("table-")


def _load(connection: Connection, event: RecordedEvent) -> dict[str, Any] | None:
    row = connection.execute(
        "SELECT seat_count, players, phase, seat_status FROM table_state WHERE table_id = %s",
        [_table_id(event)],
    ).fetchone()
    if row is None:
        return None
    return {"seat_count": row[0], "players": row[1], "phase": row[2], "seat_status": row[3]}


def _phase_after_reveal(seat_status: Sequence[dict[str, Any]]) -> str:
    waiting = any(not seat["revealed"] and seat["timed_out"] is None for seat in seat_status)
    return "REVEALING" if waiting else "AWAITING_SEED"


def apply_table_state(connection: Connection, event: RecordedEvent) -> None:
    """Fold one event into its table's ``table_state`` row."""
    data = event.data
    if event.type == "TableCreated":
        rule_set = data["rule_set"]
        assert isinstance(rule_set, dict)
        seat_count = data["seat_count"]
        assert isinstance(seat_count, int)
        connection.execute(
            """
            INSERT INTO table_state (table_id, rule_set_name, seat_count, series_length,
                created_by, created_at, players, phase, dealer, deal_number, deals_scored,
                seat_status, series_totals, version, last_position)
            VALUES (%s, %s, %s, %s, %s, %s, %s, 'SEATING', NULL, 0, 0, %s, %s, %s, %s)
            """,
            [
                _table_id(event),
                rule_set["name"],
                seat_count,
                rule_set["series_length"],
                data["created_by"],
                event.metadata.get("recorded_at", ""),
                Jsonb([None] * seat_count),
                Jsonb([_FRESH_SEAT] * seat_count),
                Jsonb([0] * seat_count),
                event.version,
                event.position,
            ],
        )
        return
    row = _load(connection, event)
    if row is None:  # not a table stream
        return
    changes: dict[str, Any] = {}
    players: list[str | None] = list(row["players"])
    seat_status: list[dict[str, Any]] = [dict(seat) for seat in row["seat_status"]]
    seat = data.get("seat")
    if event.type == "PlayerSeated":
        assert isinstance(seat, int)
        players[seat] = str(data["player_id"])
        changes["players"] = Jsonb(players)
        if all(player is not None for player in players):
            changes["phase"] = "AWAITING_DEALER"
    elif event.type == "DealerChosen":
        changes.update(phase="BETWEEN_DEALS", dealer=data["dealer"])
    elif event.type == "DealStarted":
        changes.update(
            phase="AWAITING_CUT",
            dealer=data["dealer"],
            deal_number=data["deal_number"],
            seat_status=Jsonb([_FRESH_SEAT] * row["seat_count"]),
        )
    elif event.type == "DeckCut":
        changes["phase"] = "DEALING"
    elif event.type == "CardsDealt":
        changes.update(phase="ARRANGING", deadline_ms=data["arrange_deadline_ms"])
    elif event.type in ("ArrangementCommitted", "SeatConfirmed", "ArrangementRevealed"):
        assert isinstance(seat, int)
        flag = {
            "ArrangementCommitted": "committed",
            "SeatConfirmed": "confirmed",
            "ArrangementRevealed": "revealed",
        }[event.type]
        seat_status[seat][flag] = True
        changes["seat_status"] = Jsonb(seat_status)
        if event.type == "ArrangementRevealed":
            changes["phase"] = _phase_after_reveal(seat_status)
    elif event.type == "SeatTimedOut":
        assert isinstance(seat, int)
        seat_status[seat]["timed_out"] = data["stage"]
        changes["seat_status"] = Jsonb(seat_status)
        if row["phase"] == "REVEALING":
            changes["phase"] = _phase_after_reveal(seat_status)
    elif event.type == "RevealsOpened":
        changes.update(
            phase=_phase_after_reveal(seat_status), deadline_ms=data["reveal_deadline_ms"]
        )
    elif event.type == "DealScored":
        changes.update(
            phase="BETWEEN_DEALS",
            deadline_ms=None,
            deals_scored=data["deal_number"],
            series_totals=Jsonb(data["series_totals"]),
        )
    elif event.type == "SeriesCompleted":
        changes["phase"] = "SERIES_COMPLETE"
    elif event.type == "SeriesStarted":  # a table that plays on (after_series = new_series)
        changes.update(phase="BETWEEN_DEALS", series_totals=Jsonb([0] * len(players)))
    changes.update(version=event.version, last_position=event.position)
    assignments = ", ".join(f"{column} = %s" for column in changes)
    connection.execute(
        f"UPDATE table_state SET {assignments} WHERE table_id = %s",  # columns are fixed names
        [*changes.values(), _table_id(event)],
    )


def apply_seat_scores(connection: Connection, event: RecordedEvent) -> None:
    """One row per seat for every scored deal."""
    if event.type != "DealScored":
        return
    row = connection.execute(
        "SELECT players FROM table_state WHERE table_id = %s", [_table_id(event)]
    ).fetchone()
    players = row[0] if row else []
    data = event.data
    totals = data["totals"]
    series_totals = data["series_totals"]
    fouls = data["fouls"]
    assert isinstance(totals, list) and isinstance(series_totals, list)
    assert isinstance(fouls, list)
    for seat, delta in enumerate(totals):
        connection.execute(
            """
            INSERT INTO seat_scores (table_id, deal_number, seat, player_id, delta,
                series_total, fouled)
            VALUES (%s, %s, %s, %s, %s, %s, %s)
            """,
            [
                _table_id(event),
                data["deal_number"],
                seat,
                players[seat] if seat < len(players) else "",
                delta,
                series_totals[seat],
                fouls[seat],
            ],
        )


def _sql_projector(
    name: str,
    tables: tuple[str, ...],
    statements: tuple[str, ...],
    apply: Callable[[Connection, RecordedEvent], None],
) -> SqlProjector:
    return SqlProjector(
        name=name, tables=tables, create_statements=statements, apply_event=_tables_only(apply)
    )


def _tables_only(
    apply: Callable[[Connection, RecordedEvent], None],
) -> Callable[[Connection, RecordedEvent], None]:
    # Other aggregates' streams (tournament-<uuid>) share the log; these read models are tables'.
    def apply_table_events(connection: Connection, event: RecordedEvent) -> None:
        if event.stream_id.startswith("table-"):
            apply(connection, event)

    return apply_table_events


TABLE_STATE = _sql_projector(
    "table_state",
    ("table_state",),
    (TABLE_STATE_SQL, TABLE_STATE_INDEX_SQL, TABLE_STATE_DEADLINE_INDEX_SQL),
    apply_table_state,
)
# seat_scores reads table_state's players, so it is listed (and applied) after it.
SEAT_SCORES = _sql_projector(
    "seat_scores",
    ("seat_scores",),
    (SEAT_SCORES_SQL, SEAT_SCORES_PLAYER_INDEX_SQL),
    apply_seat_scores,
)


def projectors() -> Sequence[Projector]:
    """The game's read models, in the order they must be applied."""
    return (TABLE_STATE, SEAT_SCORES)


def tables_past_deadline(connection: Connection, now_ms: int, limit: int = 100) -> list[str]:
    """Ids of tables whose arranging or reveal deadline has passed by ``now_ms``."""
    rows = connection.execute(
        """
        SELECT table_id::text FROM table_state
        WHERE deadline_ms <= %s AND phase IN ('ARRANGING', 'REVEALING')
        ORDER BY deadline_ms LIMIT %s
        """,
        [now_ms, limit],
    ).fetchall()
    return [row[0] for row in rows]


def table_rows_as_json(connection: Connection) -> str:
    """Both read models as canonical JSON text, for comparing a rebuild with the live rows."""
    tables = connection.execute(
        "SELECT row_to_json(t)::text FROM table_state t ORDER BY table_id"
    ).fetchall()
    scores = connection.execute(
        "SELECT row_to_json(s)::text FROM seat_scores s ORDER BY table_id, deal_number, seat"
    ).fetchall()
    return json.dumps([[row[0] for row in tables], [row[0] for row in scores]])

"""The ``seat_scores`` read model: one row per seat of every scored deal.

Why apart: it changes on one event only (``DealScored``) and is written from that event's totals
alone, the player of each seat read from ``table_state`` (``sapsam.store.table_state_projection``,
so it is applied after it); the leaderboards and a player's history read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sapsam.log.records import RecordedEvent
from sapsam.store.projections import (
    NOT_INLINED,
    BatchedPart,
    InlineStatement,
    NotInlined,
    PendingEvent,
    StatementSink,
)
from sapsam.store.table_state_projection import table_id_of, table_projector

SEAT_SCORES_SQL = """
CREATE TABLE seat_scores (
    table_id uuid NOT NULL,
    deal_number integer NOT NULL,
    seat integer NOT NULL,
    player_id text NOT NULL,
    delta bigint NOT NULL,
    series_total bigint NOT NULL,
    fouled boolean NOT NULL,
    PRIMARY KEY (table_id, deal_number, seat)
)
"""
# Amounts are bigint: a deal's delta reaches about 1.2e10 under the rule-set maxima (beyond an
# integer's 2.1e9) and a series total about 1.2e14 (rules.scoring.worst_series_total, held below
# bigint's 9.2e18 by a test), so no insert can fail on a number the rules produced. Sums over
# bigint (leaderboards) are numeric in PostgreSQL and cannot overflow at all. table_state's
# series_totals is jsonb, whose numbers are numeric too.
SEAT_SCORES_PLAYER_INDEX_SQL = "CREATE INDEX seat_scores_player ON seat_scores (player_id)"

_ONCE_IF_INSERTED = ", (SELECT 1 FROM inserted LIMIT 1) AS inserted"


# One row per seat of a scored deal, the player read from ``table_state``. The values are
# placeholders: parameters for one event, or the batch statement's JSON (``_SCORES_BATCH_SQL``).
_SEAT_SCORES_INSERT = """
        INSERT INTO seat_scores (table_id, deal_number, seat, player_id, delta, series_total,
            fouled)
        SELECT {table_id}, {deal_number}, score.seat - 1,
            COALESCE((SELECT players->>(score.seat::int - 1) FROM table_state
                WHERE table_id = {table_id}), ''),
            score.delta, score.series_total, score.fouled
        FROM {before}unnest({totals}::bigint[], {series_totals}::bigint[], {fouls}::boolean[])
            WITH ORDINALITY AS score(delta, series_total, fouled, seat){source}
        """
_SCORES_PARAMETERS = ("table_id", "deal_number", "totals", "series_totals", "fouls")
# The same for every scored deal of a commit group's batch statement
# (sapsam.store.batch_statement).
_SCORES_BATCH_SQL = (
    "seat_scores_written AS ("
    + _SEAT_SCORES_INSERT.format(
        table_id="(part.x->>'table_id')::uuid",
        deal_number="(part.x->>'deal_number')::int",
        before="appended AS a, jsonb_array_elements(a.parts->'seat_scores') AS part(x), ",
        source="",
        **{
            name: f"ARRAY(SELECT jsonb_array_elements_text(part.x->'{name}'))"
            for name in ("totals", "series_totals", "fouls")
        },
    )
    + ")"
)


def _seat_scores_statement(
    event: RecordedEvent | PendingEvent, inside: bool, source: str | None = None
) -> tuple[str, dict[str, Any]] | None:
    """One row per seat for a scored deal (the player read from ``table_state``); None for any
    other event. ``source``: what the rows are conditioned on (default: ``inserted`` inside the
    insert, nothing after it)."""
    if event.type != "DealScored":
        return None
    if source is None:
        source = ", inserted" if inside else ""
    sql = _seat_scores_sql(source)
    return sql, _scores_values(event)


@lru_cache(maxsize=8)
def _seat_scores_sql(source: str) -> str:
    return _SEAT_SCORES_INSERT.format(
        before="", source=source, **{name: f"%({name})s" for name in _SCORES_PARAMETERS}
    )


def _scores_values(event: RecordedEvent | PendingEvent) -> dict[str, Any]:
    data = event.data
    return {
        "table_id": table_id_of(event),
        "deal_number": data["deal_number"],
        "totals": data["totals"],
        "series_totals": data["series_totals"],
        "fouls": data["fouls"],
    }


def apply_seat_scores(connection: StatementSink, event: RecordedEvent) -> None:
    """One row per seat for every scored deal."""
    statement = _seat_scores_statement(event, inside=False)
    if statement is not None:
        connection.execute(*statement)


def _inline_seat_scores(event: PendingEvent) -> InlineStatement | None:
    statement = _seat_scores_statement(event, inside=True)
    return None if statement is None else _with_scores_part(event, statement)


def _with_scores_part(
    event: PendingEvent, statement: tuple[str, dict[str, Any]]
) -> InlineStatement:
    sql, parameters = statement
    return InlineStatement(
        sql, parameters, BatchedPart("seat_scores", _SCORES_BATCH_SQL, parameters)
    )


def _inline_seat_scores_batch(
    events: Sequence[PendingEvent],
) -> Sequence[InlineStatement] | NotInlined:
    """Each scored deal's rows; the players are read from ``table_state`` as the statement
    starts, so a batch that seats a player first takes the transaction path."""
    statements: list[InlineStatement] = []
    players_change = False
    for event in events:
        players_change = players_change or event.type in ("TableCreated", "PlayerSeated")
        statement = _seat_scores_statement(event, inside=True, source=_ONCE_IF_INSERTED)
        if statement is not None:
            if players_change:
                return NOT_INLINED
            statements.append(_with_scores_part(event, statement))
    return statements


# seat_scores reads table_state's players, so it is listed (and applied) after it.
SEAT_SCORES = table_projector(
    "seat_scores",
    ("seat_scores",),
    (SEAT_SCORES_SQL, SEAT_SCORES_PLAYER_INDEX_SQL),
    apply_seat_scores,
    _inline_seat_scores,
    _inline_seat_scores_batch,
)

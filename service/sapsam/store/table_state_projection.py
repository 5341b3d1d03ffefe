"""The ``table_state`` read model: one row per table, folded from its events by SQL alone.

``table_state.phase`` follows the domain's ``TablePhase``; the per-seat ``seat_status`` array says
for each seat whether it committed, confirmed, revealed or timed out in the current deal, which
is what a lobby or a spectator needs without reading the log.

Why apart: it is the larger of the game's two read models (``sapsam.store.table_projections``
lists both): each event's change to the row is an SQL expression (``_ASSIGNMENTS``), said as one
statement per event, inside the append's insert, or for a whole batch as one chained update. It
also has what both read models use: ``table_id_of`` and ``table_projector``; ``seat_scores``
(``sapsam.store.seat_scores_projection``) reads this table's players and is applied after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from psycopg.types.json import Jsonb

from sapsam.log.records import RecordedEvent
from sapsam.store.projections import (
    NOT_INLINED,
    BatchedPart,
    InlineStatement,
    NotInlined,
    PendingEvent,
    SqlProjector,
    StatementSink,
)

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

_PARAMETER = re.compile(r"%\((\w+)\)s")
_FRESH_SEAT = {"committed": False, "confirmed": False, "revealed": False, "timed_out": None}


def table_id_of(event: RecordedEvent | PendingEvent) -> str:
    return event.stream_id.removeprefix("table-")


# The phase once a seat settles during the reveals, from the seat statuses given (an SQL
# expression): still REVEALING while some seat has neither revealed nor timed out.
_PHASE_AFTER_REVEAL = """CASE WHEN EXISTS (
        SELECT 1 FROM jsonb_array_elements({status}) AS seat
        WHERE seat->'revealed' = 'false' AND seat->'timed_out' = 'null'
    ) THEN 'REVEALING' ELSE 'AWAITING_SEED' END"""
_SEAT_FLAG = "jsonb_set(seat_status, ARRAY[%(seat)s::text, '{flag}'], 'true')"
_TIMED_OUT = "jsonb_set(seat_status, ARRAY[%(seat)s::text, 'timed_out'], to_jsonb(%(stage)s::text))"
_SEATED = "jsonb_set(players, ARRAY[%(seat)s::text], to_jsonb(%(player)s::text))"

# Each event's change to its table's row, as (column, expression) assignments computed by the
# database from the row itself: one statement per event, with no read of the row first (so an
# append's projection never waits for a reply in between). Types not listed change only the
# version and position. Every expression reads the row as it was before this event, which is what
# lets a batch's events be chained inside one statement (``_inline_table_state_batch``).
_ASSIGNMENTS: dict[str, tuple[tuple[str, str], ...]] = {
    "PlayerSeated": (
        ("players", _SEATED),
        ("phase", f"CASE WHEN {_SEATED} @> '[null]' THEN phase ELSE 'AWAITING_DEALER' END"),
    ),
    "DealerChosen": (("phase", "'BETWEEN_DEALS'"), ("dealer", "%(dealer)s")),
    "DealStarted": (
        ("phase", "'AWAITING_CUT'"),
        ("dealer", "%(dealer)s"),
        ("deal_number", "%(deal_number)s"),
        (
            "seat_status",
            # No aggregate over the parameter: in the batch statement it is a column of the
            # level below, and an aggregate of outer columns only would belong to that level.
            "to_jsonb(array_fill(%(fresh_seat)s::jsonb, ARRAY[seat_count]))",
        ),
    ),
    "DeckCut": (("phase", "'DEALING'"),),
    "CardsDealt": (("phase", "'ARRANGING'"), ("deadline_ms", "%(arrange_deadline_ms)s")),
    "ArrangementCommitted": (("seat_status", _SEAT_FLAG.format(flag="committed")),),
    "SeatConfirmed": (("seat_status", _SEAT_FLAG.format(flag="confirmed")),),
    "ArrangementRevealed": (
        ("seat_status", _SEAT_FLAG.format(flag="revealed")),
        ("phase", _PHASE_AFTER_REVEAL.format(status=_SEAT_FLAG.format(flag="revealed"))),
    ),
    "SeatTimedOut": (
        ("seat_status", _TIMED_OUT),
        (
            "phase",
            "CASE WHEN phase = 'REVEALING' THEN "
            + _PHASE_AFTER_REVEAL.format(status=_TIMED_OUT)
            + " ELSE phase END",
        ),
    ),
    "RevealsOpened": (
        ("phase", _PHASE_AFTER_REVEAL.format(status="seat_status")),
        ("deadline_ms", "%(reveal_deadline_ms)s"),
    ),
    "DealScored": (
        ("phase", "'BETWEEN_DEALS'"),
        ("deadline_ms", "NULL"),
        ("deals_scored", "%(deal_number)s"),
        ("series_totals", "%(series_totals)s"),
    ),
    "DeadlinesExtended": (("deadline_ms", "%(deadline_ms)s"),),
    # Surrender (docs/rules.md §2.8): each turn has its own deadline; the last announcement's is
    # NULL, and the RevealsOpened of the same append sets the reveal deadline after it.
    "AnnouncementsOpened": (("phase", "'ANNOUNCING'"), ("deadline_ms", "%(deadline_ms)s")),
    "SurrenderAnnounced": (
        ("seat_status", _SEAT_FLAG.format(flag="announced")),
        ("deadline_ms", "%(deadline_ms)s"),
    ),
    # A voided deal ends unscored: nothing is awaited, and the totals stay as they were.
    "DealVoided": (("phase", "'BETWEEN_DEALS'"), ("deadline_ms", "NULL")),
    # Another player holds the seat from the next deal on (its scores so far stay its own).
    "SeatReplaced": (("players", _SEATED),),
    "SeriesCompleted": (("phase", "'SERIES_COMPLETE'"),),
    # Open face (issue #18): a deal's placements run from its first street to its score, in phase
    # PLAYING; each street and each placement sets when the next seat's placement is due.
    "StreetDealt": (("phase", "'PLAYING'"), ("deadline_ms", "%(deadline_ms)s")),
    "CardsPlaced": (("deadline_ms", "%(deadline_ms)s"),),
    # ... and the reveals of the committed Fantasyland hands have their own deadline.
    "FantasylandRevealsOpened": (("deadline_ms", "%(deadline_ms)s"),),
    "SeriesStarted": (
        ("phase", "'BETWEEN_DEALS'"),
        ("series_totals", "(SELECT jsonb_agg(0) FROM generate_series(1, seat_count))"),
    ),
}
# The columns events change, with their types, and the one the expressions read besides them.
_CHANGING_COLUMNS: tuple[tuple[str, str], ...] = (
    ("players", "jsonb"),
    ("phase", "text"),
    ("dealer", "integer"),
    ("deal_number", "integer"),
    ("deals_scored", "integer"),
    ("seat_status", "jsonb"),
    ("series_totals", "jsonb"),
    ("deadline_ms", "bigint"),
)
_READ_ONLY_COLUMNS = ("seat_count",)
# Where the event's position comes from: a parameter when applied after the insert, the row of
# the append's ``inserted`` CTE when run inside it (no row there: the statement changes nothing).
_AFTER_INSERT = ("%(position)s", "")
_INSIDE_INSERT = ("inserted.position", " FROM inserted")
# The SQL type of each value ``_state_change`` gives (the parameters of ``_ASSIGNMENTS``), as
# the batch statement reads them from JSON.
_PARAMETER_TYPES: dict[str, str] = {
    "seat": "integer",
    "player": "text",
    "dealer": "integer",
    "deal_number": "integer",
    "fresh_seat": "jsonb",
    "arrange_deadline_ms": "bigint",
    "stage": "text",
    "reveal_deadline_ms": "bigint",
    "deadline_ms": "bigint",
    "series_totals": "jsonb",
}
_ASSIGNMENT_PARAMETERS = {
    name
    for assignments in _ASSIGNMENTS.values()
    for _, expression in assignments
    for name in _PARAMETER.findall(expression)
}
if not _PARAMETER_TYPES.keys() >= _ASSIGNMENT_PARAMETERS:  # pragma: no cover - a guard
    raise RuntimeError(f"no type for {_ASSIGNMENT_PARAMETERS - _PARAMETER_TYPES.keys()}")


def _state_batch_sql() -> str:
    """``table_state``'s change for every member of a commit group's batch statement
    (``sapsam.store.batch_statement``), written from ``_ASSIGNMENTS``: a recursive fold takes
    each member's row through its events, one level per event, each column by its event type's
    expression over the level below (what ``_inline_table_state_batch`` nests); the last level
    is written."""
    names = [column for column, _ in _CHANGING_COLUMNS]
    values = ", ".join(
        f"(s.e->'{name}')" if kind == "jsonb" else f"(s.e->>'{name}')::{kind}"
        for name, kind in _PARAMETER_TYPES.items()
    )
    value_names = ", ".join(f"p_{name}" for name in _PARAMETER_TYPES)
    steps = []
    for column, kind in _CHANGING_COLUMNS:
        whens = "".join(
            f" WHEN '{event_type}' THEN "
            + _PARAMETER.sub(lambda match: f"step.p_{match.group(1)}", expression)
            for event_type, assignments in _ASSIGNMENTS.items()
            for assigned, expression in assignments
            if assigned == column
        )
        steps.append(f"CAST(CASE step.event_type{whens} ELSE fold.{column} END AS {kind})")
    return f"""table_state_fold (i, n, last_n, table_id, {", ".join(names)},
        {", ".join(_READ_ONLY_COLUMNS)}) AS (
    SELECT a.i, 0::bigint, jsonb_array_length(part.x->'events'), t.table_id,
        {", ".join(f"t.{name}" for name in (*names, *_READ_ONLY_COLUMNS))}
    FROM appended AS a, jsonb_array_elements(a.parts->'table_state') AS part(x),
        LATERAL (  -- OFFSET 0: kept a subquery, so each row is one probe of the key
            SELECT * FROM table_state WHERE table_id = (part.x->>'table_id')::uuid OFFSET 0
        ) AS t
    UNION ALL
    SELECT fold.i, step.n, fold.last_n, fold.table_id, {", ".join(steps)},
        {", ".join(f"fold.{name}" for name in _READ_ONLY_COLUMNS)}
    FROM table_state_fold AS fold JOIN (
        SELECT a.i, s.n, s.e->>'type', {values}
        FROM appended AS a, jsonb_array_elements(a.parts->'table_state') AS part(x),
            jsonb_array_elements(part.x->'events') WITH ORDINALITY AS s(e, n)
    ) AS step (i, n, event_type, {value_names}) ON step.i = fold.i AND step.n = fold.n + 1
), table_state_written AS (
    UPDATE table_state SET ({", ".join(names)}) = (
            {", ".join(f"fold.{name}" for name in names)}),
        version = a.last_version, last_position = a.last_position
    FROM table_state_fold AS fold JOIN appended AS a ON a.i = fold.i
    WHERE table_state.table_id = fold.table_id AND fold.n = fold.last_n
)"""


def _table_state_statement(
    event: RecordedEvent | PendingEvent, inside: bool, change: dict[str, Any] | None = None
) -> tuple[str, dict[str, Any]]:
    """The one statement that folds ``event`` into its table's ``table_state`` row (``change``:
    its ``_state_change``, when the caller has it already)."""
    data = event.data
    parameters: dict[str, Any] = {"table_id": table_id_of(event), "version": event.version}
    if event.type == "TableCreated":
        rule_set = data["rule_set"]
        seat_count = data["seat_count"]
        assert isinstance(rule_set, dict) and isinstance(seat_count, int)
        parameters.update(
            rule_set_name=rule_set["name"],
            seat_count=seat_count,
            series_length=rule_set["series_length"],
            created_by=data["created_by"],
            created_at=event.metadata.get("recorded_at", ""),
            players=Jsonb([None] * seat_count),
            seat_status=Jsonb([_FRESH_SEAT] * seat_count),
            series_totals=Jsonb([0] * seat_count),
        )
        return _table_state_sql(event.type, inside), parameters
    for name, value in (_state_change(event) if change is None else change).items():
        parameters[name] = Jsonb(value) if _PARAMETER_TYPES[name] == "jsonb" else value
    return _table_state_sql(event.type, inside), parameters


def _state_change(event: RecordedEvent | PendingEvent) -> dict[str, Any]:
    """The values ``_ASSIGNMENTS``' expressions read for ``event`` (any type but
    ``TableCreated``), by parameter name, as plain JSON values."""
    data = event.data
    change: dict[str, Any] = {"seat": data.get("seat")}
    if event.type in ("PlayerSeated", "SeatReplaced"):
        change["player"] = str(data["player_id"])
    elif event.type == "DealerChosen":
        change["dealer"] = data["dealer"]
    elif event.type == "DealStarted":
        change.update(
            dealer=data["dealer"], deal_number=data["deal_number"], fresh_seat=_FRESH_SEAT
        )
    elif event.type == "CardsDealt":
        change["arrange_deadline_ms"] = data["arrange_deadline_ms"]
    elif event.type == "SeatTimedOut":
        change["stage"] = data["stage"]
    elif event.type == "RevealsOpened":
        change["reveal_deadline_ms"] = data["reveal_deadline_ms"]
    elif event.type in (
        "DeadlinesExtended",
        "AnnouncementsOpened",
        "SurrenderAnnounced",
        "StreetDealt",
        "CardsPlaced",
        "FantasylandRevealsOpened",
    ):
        change["deadline_ms"] = data["deadline_ms"]
    elif event.type == "DealScored":
        change.update(deal_number=data["deal_number"], series_totals=data["series_totals"])
    return change


@lru_cache(maxsize=64)
def _table_state_sql(event_type: str, inside: bool) -> str:
    """The statement text for one event type, written once per type and place."""
    position, source = _INSIDE_INSERT if inside else _AFTER_INSERT
    if event_type == "TableCreated":
        return (
            "INSERT INTO table_state (table_id, rule_set_name, seat_count, series_length,"
            " created_by, created_at, players, phase, dealer, deal_number, deals_scored,"
            " seat_status, series_totals, version, last_position)"
            " SELECT %(table_id)s, %(rule_set_name)s, %(seat_count)s, %(series_length)s,"
            " %(created_by)s, %(created_at)s, %(players)s, 'SEATING', NULL, 0, 0,"
            f" %(seat_status)s, %(series_totals)s, %(version)s, {position}{source}"
        )
    assignments = _ASSIGNMENTS.get(event_type, ())
    changes = "".join(f"{column} = {expression}, " for column, expression in assignments)
    return (
        f"UPDATE table_state SET {changes}version = %(version)s, last_position = {position}"
        f"{source} WHERE table_id = %(table_id)s"
    )


def apply_table_state(connection: StatementSink, event: RecordedEvent) -> None:
    """Fold one event into its table's ``table_state`` row (one statement, no read first)."""
    sql, parameters = _table_state_statement(event, inside=False)
    parameters["position"] = event.position
    connection.execute(sql, parameters)


# A batch's ``inserted`` has a row per event: a scored deal's rows are written once, not per event.
def _inline_table_state(event: PendingEvent) -> InlineStatement:
    if event.type == "TableCreated":
        return InlineStatement(*_table_state_statement(event, inside=True))
    # One event's change, worked out once for both forms (every game write makes both).
    change = _state_change(event)
    sql, parameters = _table_state_statement(event, inside=True, change=change)
    part = BatchedPart(
        "table_state",
        _STATE_BATCH_SQL,
        {"table_id": parameters["table_id"], "events": [{"type": event.type, **change}]},
    )
    return InlineStatement(sql, parameters, part)


def _renamed(expression: str, prefix: str) -> str:
    return _PARAMETER.sub(lambda match: f"%({prefix}{match.group(1)})s", expression)


def _inline_table_state_batch(
    events: Sequence[PendingEvent],
) -> Sequence[InlineStatement] | NotInlined:
    """A batch's change to its table's row as ONE update inside the insert.

    A statement may change a row only once, so the events are chained in a nested SELECT: each
    level computes every changing column from the level below it, exactly as one event's UPDATE
    computes it from the row; the outermost level is written. The table's first event inserts
    the row and is not chained (such a batch takes the transaction path). The text depends on
    the events' types alone, so it is written once per sequence of types
    (``_chained_update_sql``); each append only renames its events' parameters apart."""
    if any(event.type == "TableCreated" for event in events):
        return NOT_INLINED
    parameters: dict[str, Any] = {
        "table_id": table_id_of(events[0]),
        "version": events[-1].version,
    }
    changes = [_state_change(event) for event in events]  # once, for both forms
    for index, (event, change) in enumerate(zip(events, changes, strict=True)):
        prefix = f"e{index}_"
        _, event_parameters = _table_state_statement(event, inside=True, change=change)
        parameters.update({prefix + name: value for name, value in event_parameters.items()})
    sql = _chained_update_sql(tuple(event.type for event in events))
    part = BatchedPart(
        "table_state",
        _STATE_BATCH_SQL,
        {
            "table_id": parameters["table_id"],
            "events": [
                {"type": event.type, **change}
                for event, change in zip(events, changes, strict=True)
            ],
        },
    )
    return [InlineStatement(sql, parameters, part)]


@lru_cache(maxsize=256)
def _chained_update_sql(event_types: tuple[str, ...]) -> str:
    """The chained update of ``_inline_table_state_batch`` for events of these types, in order
    (a handful of sequences per process: a cut with its deal, the last confirmation with the
    reveals' opening, the last reveal with the seed and the score)."""
    level = "SELECT " + ", ".join(
        f"table_state.{column} AS {column}"
        for column in (*(name for name, _ in _CHANGING_COLUMNS), *_READ_ONLY_COLUMNS)
    )
    for index, event_type in enumerate(event_types):
        prefix = f"e{index}_"
        assignments = dict(_ASSIGNMENTS.get(event_type, ()))
        columns = ", ".join(
            f"CAST({_renamed(assignments.get(column, column), prefix)} AS {kind}) AS {column}"
            for column, kind in _CHANGING_COLUMNS
        )
        level = f"SELECT {columns}, {', '.join(_READ_ONLY_COLUMNS)} FROM ({level}) AS level{index}"
    names = ", ".join(name for name, _ in _CHANGING_COLUMNS)
    return (
        f"UPDATE table_state SET ({names}) = (SELECT {names} FROM ({level}) AS last_level),"
        " version = %(version)s, last_position = inserted.position"
        " FROM (SELECT max(position) AS position FROM inserted HAVING count(*) > 0) AS inserted"
        " WHERE table_id = %(table_id)s"
    )


def table_projector(
    name: str,
    tables: tuple[str, ...],
    statements: tuple[str, ...],
    apply: Callable[[StatementSink, RecordedEvent], None],
    inline: Callable[[PendingEvent], InlineStatement | None],
    inline_batch: Callable[[Sequence[PendingEvent]], Sequence[InlineStatement] | NotInlined],
) -> SqlProjector:
    return SqlProjector(
        name=name,
        tables=tables,
        create_statements=statements,
        apply_event=_tables_only(apply),
        stream_prefix="table-",
        inline_event=inline,
        inline_batch_events=inline_batch,
    )


def _tables_only(
    apply: Callable[[StatementSink, RecordedEvent], None],
) -> Callable[[StatementSink, RecordedEvent], None]:
    # Other aggregates' streams (tournament-<uuid>) share the log; these read models are tables'.
    def apply_table_events(connection: StatementSink, event: RecordedEvent) -> None:
        if event.stream_id.startswith("table-"):
            apply(connection, event)

    return apply_table_events


TABLE_STATE = table_projector(
    "table_state",
    ("table_state",),
    (TABLE_STATE_SQL, TABLE_STATE_INDEX_SQL, TABLE_STATE_DEADLINE_INDEX_SQL),
    apply_table_state,
    _inline_table_state,
    _inline_table_state_batch,
)

_STATE_BATCH_SQL = _state_batch_sql()

"""Read models: rebuilding them from the log, and making them match their definitions at start-up.

Read models are a function of the log (what a projector is and how an append applies it:
``sapsam.store.projectors``), so they can be dropped and replayed at any time
(``rebuild_projections``, ``sapsam projections rebuild``), and the result must be identical row
for row.

Read-model tables are created by their projector, not by alembic: their definition is code, and a
changed definition (detected through ``definition_hash``) is applied by rebuilding from the log
(``prepare_projections``, at start-up). The ``projections`` table (created by the migrations)
records, per projector, that hash and the log position its last rebuild replayed to.

A rebuild drops and recreates tables, so it carries each existing table's owner and grants over to
its new table (``sapsam.store.read_model_access``); a role that could not give a table back to its
owner is refused before anything changes (``ReadModelOwnerError``).

The projector names other modules import from here (``Projector``, ``SqlProjector``, ...) live in
``sapsam.store.projectors`` and are re-exported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from sapsam.log.records import RecordedEvent
from sapsam.store.offline_reads import iterate_all
from sapsam.store.projectors import (
    GAME_PROJECTOR_MODULE,
    NOT_INLINED,
    PROJECTOR_MODULES,
    BatchedPart,
    InlineStatement,
    NotInlined,
    PendingEvent,
    Projector,
    SqlProjector,
    StatementSink,
    all_projectors,
    apply_projectors,
    check_names,
    definition_hash,
    registered_projectors,
)
from sapsam.store.read_model_access import (
    ReadModelOwnerError,
    TableAccess,
    access_of,
    restore_access,
)
from sapsam.store.reads import event_from_row

__all__ = [  # the projector's names stay importable from here, where they used to live
    "APPEND_LOCK_KEY",
    "GAME_PROJECTOR_MODULE",
    "NOT_INLINED",
    "PROJECTOR_MODULES",
    "BatchedPart",
    "InlineStatement",
    "NotInlined",
    "PendingEvent",
    "ProjectionReport",
    "Projector",
    "ReadModelOwnerError",
    "SqlProjector",
    "StatementSink",
    "all_projectors",
    "apply_projectors",
    "definition_hash",
    "iterate_streams",
    "prepare_projections",
    "rebuild_projections",
    "registered_projectors",
]

Connection = psycopg.Connection[Any]

# Every insert into events holds this advisory lock in shared mode (the migration's
# events_mark_inserts trigger). Rebuilds take it exclusively: they wait for appends in flight and
# hold new ones off, so the rebuilt read models match the log exactly at the recorded position.
APPEND_LOCK_KEY = 7526466447829417325


@dataclass(frozen=True)
class ProjectionReport:
    """What preparing or rebuilding one projector did."""

    name: str
    action: str  # "rebuilt" or "current"
    events_applied: int
    position: int


def _reset_projectors(connection: Connection, projectors: Sequence[Projector]) -> list[TableAccess]:
    """Drop and recreate every projector's tables; returns what ``restore_access`` must give
    back once they are filled (the creating role writes them meanwhile as their owner).

    Every table is looked at before any is dropped, so a refusal changes nothing. A table that
    did not exist goes to the owner of the first one that did (the role that created the read
    models, usually the service's), else stays with the role running this.
    """
    found = {
        table: access_of(connection, table)
        for projector in projectors
        for table in projector.tables
    }
    existing = [access for access in found.values() if access is not None]
    kept = list(existing)
    if existing:
        kept += [
            TableAccess(table, existing[0].owner, ())
            for table, access in found.items()
            if access is None
        ]
    for projector in projectors:
        for table in projector.tables:
            connection.execute(
                sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(sql.Identifier(table))
            )
        for statement in projector.create_statements:
            connection.execute(statement)
    return kept


Progress = Callable[[int], None]
"""Told the number of events read so far, now and then, by a rebuild (a command's progress)."""


def event_count(connection: Connection) -> int:
    """How many events the log holds (a rebuild's progress counts up to it)."""
    row = connection.execute("SELECT count(*) FROM events").fetchone()
    return int(row[0]) if row else 0


def _replay(
    connection: Connection,
    projectors: Sequence[Projector],
    after_position: int,
    progress: Progress | None = None,
) -> tuple[int, int]:
    """Apply every event after ``after_position``; returns (events applied, last position)."""
    count = 0
    position = after_position
    for event in iterate_all(connection, after_position):
        for projector in projectors:
            projector.apply(connection, event)
        count += 1
        position = event.position
        if progress is not None and count % 1000 == 0:
            progress(count)
    return count, position


def iterate_streams(
    connection: Connection, batch_size: int = 5000
) -> Iterator[list[RecordedEvent]]:
    """Every stream of the log, whole and in version order, one after another (by stream id)."""
    current: list[RecordedEvent] = []
    after: tuple[str, int] = ("", 0)
    while True:
        rows = connection.execute(
            "SELECT position, stream_id, version, type, schema_version, data, metadata, hash"
            " FROM events WHERE (stream_id, version) > (%s, %s) ORDER BY stream_id, version"
            " LIMIT %s",
            [after[0], after[1], batch_size],
        ).fetchall()
        if not rows:
            break
        for row in rows:
            event = event_from_row(row)
            if current and event.stream_id != current[0].stream_id:
                yield current
                current = []
            current.append(event)
        after = (str(rows[-1][1]), int(rows[-1][2]))
    if current:
        yield current


def _all_folded(projectors: Sequence[Projector]) -> bool:
    """Whether every projector has an in-memory fold of exactly its tables."""
    from sapsam.store.projection_folds import FOLDS  # the folds import the projectors' modules

    return bool(projectors) and all(
        projector.name in FOLDS and set(FOLDS[projector.name]().rows()) == set(projector.tables)
        for projector in projectors
    )


def _fill_from_folds(
    connection: Connection, projectors: Sequence[Projector], progress: Progress | None = None
) -> tuple[int, int]:
    """Rebuild the projectors' (empty, new) tables from their in-memory folds of the log, one
    insert per table; returns (events read, last position).

    Replaying the SQL updates a table's ``table_state`` row once per event in this one
    transaction, and each update walks the row's chain of versions: a long-lived table's rebuild
    grew with the square of its length. The folds give the same rows (held to the SQL by
    ``tests/tournament/test_audit_folds.py``) in time linear in the log.
    """
    from sapsam.store.projection_folds import FOLDS

    folds = {projector.name: FOLDS[projector.name]() for projector in projectors}
    count = position = 0
    for stream in iterate_streams(connection):
        count += len(stream)
        position = max(position, max(event.position for event in stream))
        for fold in folds.values():
            fold.fold_stream(stream)
        if progress is not None:
            progress(count)
    for projector in projectors:
        rows = folds[projector.name].rows()
        for table in projector.tables:
            connection.execute(
                sql.SQL(
                    "INSERT INTO {0} SELECT * FROM jsonb_populate_recordset(NULL::{0}, %s)"
                ).format(sql.Identifier(table)),
                [Jsonb(rows.get(table, []))],
            )
    return count, position


def _rebuild_from_log(
    connection: Connection, projectors: Sequence[Projector], progress: Progress | None = None
) -> tuple[int, int]:
    """Fill the projectors' new tables from the whole log: by their folds when every one has a
    fold (the game's read models), else by replaying every event through their SQL."""
    if _all_folded(projectors):
        return _fill_from_folds(connection, projectors, progress)
    return _replay(connection, projectors, 0, progress)


def _record(connection: Connection, projector: Projector, position: int) -> None:
    connection.execute(
        """
        INSERT INTO projections (name, definition_hash, position, rebuilt_at)
        VALUES (%s, %s, %s, now())
        ON CONFLICT (name) DO UPDATE
        SET definition_hash = excluded.definition_hash, position = excluded.position,
            rebuilt_at = excluded.rebuilt_at
        """,
        [projector.name, definition_hash(projector), position],
    )


def rebuild_projections(
    connection: Connection, projectors: Sequence[Projector], progress: Progress | None = None
) -> list[ProjectionReport]:
    """Drop and recreate every projector's tables and replay the whole log into them;
    ``progress`` is told the events read so far, now and then.

    Runs in one transaction holding the append lock, so appends wait and the rebuilt read models
    match the log exactly at the recorded position. Each table keeps its owner and grants
    (``ReadModelOwnerError``, before anything changes, for a role that could not keep them).
    """
    check_names(projectors)
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", [APPEND_LOCK_KEY])
        kept = _reset_projectors(connection, projectors)
        count, position = _rebuild_from_log(connection, projectors, progress)
        for access in kept:
            restore_access(connection, access)
        for projector in projectors:
            _record(connection, projector, position)
    return [ProjectionReport(p.name, "rebuilt", count, position) for p in projectors]


def prepare_projections(
    connection: Connection, projectors: Sequence[Projector]
) -> list[ProjectionReport]:
    """Make every projector's tables exist and match its definition; call once at start-up.

    A projector never seen, or whose definition changed, is rebuilt from the log (holding off
    appends while it runs); the others are left as they are.
    """
    check_names(projectors)
    reports: list[ProjectionReport] = []
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", [APPEND_LOCK_KEY])
        stale: list[Projector] = []
        for projector in projectors:
            row = connection.execute(
                "SELECT definition_hash, position FROM projections WHERE name = %s",
                [projector.name],
            ).fetchone()
            if row is None or bytes(row[0]) != definition_hash(projector):
                stale.append(projector)
            else:
                reports.append(ProjectionReport(projector.name, "current", 0, int(row[1])))
        if stale:
            kept = _reset_projectors(connection, stale)
            count, position = _rebuild_from_log(connection, stale)
            for access in kept:
                restore_access(connection, access)
            for projector in stale:
                _record(connection, projector, position)
                reports.append(ProjectionReport(projector.name, "rebuilt", count, position))
    return reports

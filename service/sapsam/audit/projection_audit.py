"""Every read model rebuilt from the log and compared with the live one, row by row.

Read models are a function of the log, so rebuilding them from the log must give exactly the live
rows. Both sides come from one REPEATABLE READ snapshot (the caller's transaction, or one opened
here), so appends running meanwhile cannot make a false difference, and nothing is locked.

The game's read models (``table_state``, ``seat_scores``, the tournaments') are rebuilt in memory
by their folds (``projection_folds``), one stream at a time as the whole-database audit reads the
log, and compared with one read of each live table: linear in the log. Any other projector (one
added with ``--module``) is replayed through its own SQL into a scratch schema
(``audit_scratch_<random>``) that comes first on the transaction's ``search_path``, so its create
statements and ``apply`` write there while ``events`` still resolves to the live schema; the
transaction is rolled back at the end, which drops the scratch schema with everything in it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from sapsam.audit.report import AuditCheck, Status
from sapsam.log.records import RecordedEvent
from sapsam.plurals import numbered, plural
from sapsam.store.projection_folds import FOLDS, TABLE_PREFIX, ReadModelFold, Row, TableStateFold
from sapsam.store.projections import Projector, all_projectors, iterate_streams
from sapsam.store.reads import decode_json, event_from_row

Connection = psycopg.Connection[Any]
LIVE_SCHEMA = "public"
MAX_DIFFERENCES_NAMED = 20


def _snapshot_events(connection: Connection, batch_size: int = 5000) -> Iterator[RecordedEvent]:
    """Every event of the transaction's snapshot in global order.

    Not ``reads.iterate_all``: that one guards a live reader in READ COMMITTED against late
    commits; here one REPEATABLE READ snapshot already fixes the set of events, and it is the same
    set the live read models were written from.
    """
    checkpoint = 0
    while True:
        rows = connection.execute(
            "SELECT position, stream_id, version, type, schema_version, data, metadata, hash"
            " FROM events WHERE position > %s ORDER BY position LIMIT %s",
            [checkpoint, batch_size],
        ).fetchall()
        if not rows:
            return
        for row in rows:
            yield event_from_row(row)
        checkpoint = int(rows[-1][0])


def default_projectors() -> list[Projector]:
    """The game's read models plus any registered ones, each once, in apply order."""
    return all_projectors()


@dataclass(frozen=True)
class RowDifference:
    """One row that differs between the live table and its rebuild."""

    table: str
    key: str
    detail: str


def _key_columns(connection: Connection, schema: str, table: str) -> list[str]:
    rows = connection.execute(
        """
        SELECT a.attname FROM pg_index i
        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
        WHERE i.indrelid = (quote_ident(%s) || '.' || quote_ident(%s))::regclass
          AND i.indisprimary
        ORDER BY array_position(i.indkey, a.attnum)
        """,
        [schema, table],
    ).fetchall()
    return [str(row[0]) for row in rows]


def _table_exists(connection: Connection, schema: str, table: str) -> bool:
    row = connection.execute(
        "SELECT to_regclass(quote_ident(%s) || '.' || quote_ident(%s)) IS NOT NULL",
        [schema, table],
    ).fetchone()
    return bool(row and row[0])


def _was_prepared(connection: Connection, projector: Projector) -> bool:
    """Whether the projector has a checkpoint row in ``projections`` (it was set up here)."""
    row = connection.execute(
        "SELECT count(*) FROM projections WHERE name = %s", [projector.name]
    ).fetchone()
    return bool(row and row[0])


def _rows(connection: Connection, schema: str, table: str) -> list[dict[str, Any]]:
    # As text, decoded in one call for the whole table (a JSON list of the rows), instead of
    # psycopg's json loader once per row: the same values (reads.decode_json).
    query = sql.SQL("SELECT to_jsonb(t)::text FROM {}.{} t").format(
        sql.Identifier(schema), sql.Identifier(table)
    )
    texts = [row[0] for row in connection.execute(query).fetchall()]
    rows = decode_json("[" + ",".join(texts) + "]")
    assert isinstance(rows, list)
    return [dict(row) for row in rows]


def _key_of(row: dict[str, Any], columns: Sequence[str]) -> str:
    if not columns:
        # No primary key: the whole row is its identity.
        return repr(sorted(row.items()))
    return ", ".join(f"{column}={row.get(column)}" for column in columns)


def _differences(
    table: str, columns: Sequence[str], live_rows: list[Row], rebuilt_rows: list[Row]
) -> list[RowDifference]:
    live = {_key_of(row, columns): row for row in live_rows}
    rebuilt = {_key_of(row, columns): row for row in rebuilt_rows}
    differences: list[RowDifference] = []
    for key in sorted(set(live) | set(rebuilt)):
        live_row, rebuilt_row = live.get(key), rebuilt.get(key)
        if live_row is None:
            differences.append(RowDifference(table, key, "missing from the live table"))
        elif rebuilt_row is None:
            differences.append(RowDifference(table, key, "in the live table but not in the log"))
        elif live_row != rebuilt_row:
            changed = [
                f"{column}: live {live_row.get(column)!r}, from the log {rebuilt_row.get(column)!r}"
                for column in sorted(set(live_row) | set(rebuilt_row))
                if live_row.get(column) != rebuilt_row.get(column)
            ]
            differences.append(RowDifference(table, key, "; ".join(changed)))
    return differences


def compare_table(connection: Connection, scratch: str, table: str) -> list[RowDifference]:
    """The differences between ``public.<table>`` and ``<scratch>.<table>``."""
    columns = _key_columns(connection, scratch, table)
    return _differences(
        table, columns, _rows(connection, LIVE_SCHEMA, table), _rows(connection, scratch, table)
    )


@dataclass
class FoldedReadModels:
    """Read models folded in memory from some streams; merged across worker processes."""

    rows: dict[str, dict[str, list[Row]]] = field(default_factory=dict)
    unfoldable: dict[str, str] = field(default_factory=dict)
    events: int = 0

    def merge(self, other: FoldedReadModels) -> None:
        """Add another part's rows (each stream is folded in exactly one part)."""
        for name, tables in other.rows.items():
            mine = self.rows.setdefault(name, {})
            for table, rows in tables.items():
                mine.setdefault(table, []).extend(rows)
        for name, problem in other.unfoldable.items():
            self.unfoldable.setdefault(name, problem)
        self.events += other.events


class StreamFolds:
    """The in-memory folds of the named read models, fed one whole stream at a time."""

    def __init__(self, names: Sequence[str]) -> None:
        self.folds: dict[str, ReadModelFold] = {name: FOLDS[name]() for name in names}
        self.unfoldable: dict[str, str] = {}
        self.events = 0

    def fold_stream(self, events: Sequence[RecordedEvent]) -> None:
        """Fold one stream's events into every read model."""
        self.events += len(events)
        for name, fold in self.folds.items():
            try:
                fold.fold_stream(events)
            except (KeyError, TypeError, ValueError, AssertionError, AttributeError) as error:
                # A malformed event (the deal checks name it): the rebuild cannot be trusted.
                self.unfoldable.setdefault(
                    name, f"{events[0].stream_id} cannot be folded ({type(error).__name__})"
                )

    def table_row(self, stream_id: str) -> Row | None:
        """The ``table_state`` row folded from ``stream_id`` (None: none was folded)."""
        fold = self.folds.get(TableStateFold.name)
        return fold.tables.get(stream_id) if isinstance(fold, TableStateFold) else None

    def folds_table_state(self, stream_id: str) -> bool:
        """Whether the ``table_state`` fold takes ``stream_id`` (its row, if None, is broken)."""
        return TableStateFold.name in self.folds and stream_id.startswith(TABLE_PREFIX)

    def result(self) -> FoldedReadModels:
        """What was folded so far."""
        rows = {name: fold.rows() for name, fold in self.folds.items()}
        return FoldedReadModels(rows, dict(self.unfoldable), self.events)


def folded_names(projectors: Sequence[Projector]) -> list[str]:
    """The projectors that are rebuilt in memory (the others are replayed through their SQL)."""
    return [projector.name for projector in projectors if projector.name in FOLDS]


class ProjectionComparison:
    """Rebuilds the chosen read models from the streams it is given, then compares them.

    Give it every stream of a snapshot (``fold_stream``, or ``add`` for streams folded
    elsewhere; each stream whole and once), then call ``checks`` in the same snapshot's
    transaction. ``use_folds=False`` replays every projector through its SQL instead.
    """

    def __init__(self, projectors: Sequence[Projector], use_folds: bool = True) -> None:
        self.projectors = list(projectors)
        self.names = folded_names(self.projectors) if use_folds else []
        self.local = StreamFolds(self.names)
        self.added = FoldedReadModels()
        # The live side of each folded projector, read ahead by ``read_live`` (None: not yet).
        self.live: dict[str, AuditCheck | dict[str, tuple[list[str], list[Row]]]] | None = None

    def read_live(self, connection: Connection) -> None:
        """Read the live tables of the folded read models now (in the snapshot's transaction),
        so ``checks`` only compares: the whole-database audit reads them while its workers
        verify the streams."""
        live: dict[str, AuditCheck | dict[str, tuple[list[str], list[Row]]]] = {}
        for projector in self.projectors:
            if projector.name not in self.names:
                continue
            missing = _missing_check(connection, projector)
            live[projector.name] = (
                missing
                if missing is not None
                else {
                    table: (
                        _key_columns(connection, LIVE_SCHEMA, table),
                        _rows(connection, LIVE_SCHEMA, table),
                    )
                    for table in projector.tables
                }
            )
        self.live = live

    def fold_stream(self, events: Sequence[RecordedEvent]) -> None:
        """Fold one stream's events into every in-memory read model."""
        self.local.fold_stream(events)

    def add(self, folded: FoldedReadModels) -> None:
        """Add read models folded from other streams (by a worker process)."""
        self.added.merge(folded)

    def checks(self, connection: Connection) -> list[AuditCheck]:
        """One check per projector; runs in the caller's (snapshot) transaction."""
        folded = FoldedReadModels()
        folded.merge(self.local.result())
        folded.merge(self.added)
        replayed = [p for p in self.projectors if p.name not in self.names]
        if self.live is None:
            self.read_live(connection)
        assert self.live is not None
        scratch, events = _replay_into_scratch(connection, replayed) if replayed else ("", 0)
        checks = []
        for projector in self.projectors:
            if projector.name in self.names:
                checks.append(self._fold_check(projector, self.live[projector.name], folded))
            else:
                checks.append(_projector_check(connection, scratch, projector, events))
        return checks

    def _fold_check(
        self,
        projector: Projector,
        live: AuditCheck | dict[str, tuple[list[str], list[Row]]],
        folded: FoldedReadModels,
    ) -> AuditCheck:
        name = f"projection {projector.name}"
        if isinstance(live, AuditCheck):
            return live  # its live tables are missing
        if projector.name in folded.unfoldable:
            return AuditCheck(name, Status.FAILED, folded.unfoldable[projector.name])
        rebuilt = folded.rows.get(projector.name, {})
        differences = [
            difference
            for table in projector.tables
            for difference in _differences(
                table, live[table][0], live[table][1], rebuilt.get(table, [])
            )
        ]
        rows = sum(len(rebuilt.get(table, [])) for table in projector.tables)
        return _outcome(name, differences, rows, folded.events)


def compare_projections(
    connection: Connection, projectors: Sequence[Projector]
) -> list[AuditCheck]:
    """One check per projector: its tables rebuilt from the log equal the live ones.

    Runs in its own REPEATABLE READ transaction (``connection`` must be in autocommit mode,
    outside one); ``sapsam.audit.database.audit_database`` does the same within its own pass.
    """
    with connection.transaction() as transaction:
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        comparison = ProjectionComparison(projectors)
        for stream in iterate_streams(connection):
            comparison.fold_stream(stream)
        checks = comparison.checks(connection)
        raise psycopg.Rollback(transaction)
    return checks


def _replay_into_scratch(
    connection: Connection, projectors: Sequence[Projector]
) -> tuple[str, int]:
    """Replay the snapshot's log into the projectors' tables in a new scratch schema (dropped
    when the caller's transaction rolls back); returns the schema's name and the events read."""
    scratch = f"audit_scratch_{uuid.uuid4().hex[:12]}"
    connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(scratch)))
    connection.execute(
        sql.SQL("SET LOCAL search_path TO {}, {}").format(
            sql.Identifier(scratch), sql.Identifier(LIVE_SCHEMA)
        )
    )
    for projector in projectors:
        for statement in projector.create_statements:
            connection.execute(statement)
    events = 0
    for event in _snapshot_events(connection):
        events += 1
        for projector in projectors:
            if projector.handles(event.stream_id):
                projector.apply(connection, event)
    connection.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(LIVE_SCHEMA)))
    return scratch, events


def _missing_check(connection: Connection, projector: Projector) -> AuditCheck | None:
    name = f"projection {projector.name}"
    missing = [
        table for table in projector.tables if not _table_exists(connection, LIVE_SCHEMA, table)
    ]
    if not missing:
        return None
    if len(missing) == len(projector.tables) and not _was_prepared(connection, projector):
        return AuditCheck(
            name,
            Status.NOT_COVERED,
            "never set up in this database (no live tables, no checkpoint): nothing to compare",
        )
    return AuditCheck(
        name,
        Status.FAILED,
        f"the live {numbered('table', missing)} {'does' if len(missing) == 1 else 'do'} not exist",
    )


def _projector_check(
    connection: Connection, scratch: str, projector: Projector, replayed: int
) -> AuditCheck:
    missing = _missing_check(connection, projector)
    if missing is not None:
        return missing
    differences = [
        difference
        for table in projector.tables
        for difference in compare_table(connection, scratch, table)
    ]
    rows = sum(len(_rows(connection, scratch, table)) for table in projector.tables)
    return _outcome(f"projection {projector.name}", differences, rows, replayed)


def _outcome(
    name: str, differences: Sequence[RowDifference], rows: int, replayed: int
) -> AuditCheck:
    if not differences:
        return AuditCheck(
            name,
            Status.PASSED,
            f"{plural(rows, 'row')} rebuilt from {plural(replayed, 'event')}"
            f" {'equals the live one' if rows == 1 else 'equal the live ones'}",
        )
    named = "; ".join(
        f"{d.table} row {d.key}: {d.detail}" for d in differences[:MAX_DIFFERENCES_NAMED]
    )
    more = len(differences) - MAX_DIFFERENCES_NAMED
    return AuditCheck(
        name,
        Status.FAILED,
        f"{plural(len(differences), 'row')} {'differs' if len(differences) == 1 else 'differ'}"
        f" from the log's rebuild: {named}" + (f" … and {more} more" if more > 0 else ""),
    )

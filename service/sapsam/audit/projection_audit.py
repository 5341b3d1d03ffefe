"""Rebuild every read model in a scratch schema and compare it with the live one, row by row.

Read models are a function of the log, so replaying the log into fresh tables must give exactly
the live rows. Here that happens in one REPEATABLE READ transaction: the replay and the live rows
are read from the same snapshot, so appends running meanwhile cannot make a false difference, and
nothing is locked. The scratch schema (``audit_scratch_<random>``) comes first on the transaction's
``search_path``, so each projector's own create statements and ``apply`` write there while
``events`` and anything else still resolve to the live schema. The transaction is rolled back at
the end, which drops the scratch schema with everything in it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from sapsam.audit.report import AuditCheck, Status
from sapsam.store import table_projections
from sapsam.store.projections import Projector, registered_projectors
from sapsam.store.reads import event_from_row
from sapsam.store.records import RecordedEvent

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
    found: list[Projector] = []
    for projector in (*table_projections.projectors(), *registered_projectors()):
        if all(projector.name != known.name for known in found):
            found.append(projector)
    return found


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
    query = sql.SQL("SELECT to_jsonb(t) FROM {}.{} t").format(
        sql.Identifier(schema), sql.Identifier(table)
    )
    return [dict(row[0]) for row in connection.execute(query).fetchall()]


def _key_of(row: dict[str, Any], columns: Sequence[str]) -> str:
    if not columns:
        # No primary key: the whole row is its identity.
        return repr(sorted(row.items()))
    return ", ".join(f"{column}={row.get(column)}" for column in columns)


def compare_table(connection: Connection, scratch: str, table: str) -> list[RowDifference]:
    """The differences between ``public.<table>`` and ``<scratch>.<table>``."""
    columns = _key_columns(connection, scratch, table)
    live = {_key_of(row, columns): row for row in _rows(connection, LIVE_SCHEMA, table)}
    rebuilt = {_key_of(row, columns): row for row in _rows(connection, scratch, table)}
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


def compare_projections(
    connection: Connection, projectors: Sequence[Projector]
) -> list[AuditCheck]:
    """One check per projector: its tables rebuilt from the log equal the live ones.

    Runs in its own transaction (``connection`` must be in autocommit mode, outside one).
    """
    scratch = f"audit_scratch_{uuid.uuid4().hex[:12]}"
    checks: list[AuditCheck] = []
    with connection.transaction() as transaction:
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(scratch)))
        connection.execute(
            sql.SQL("SET LOCAL search_path TO {}, {}").format(
                sql.Identifier(scratch), sql.Identifier(LIVE_SCHEMA)
            )
        )
        for projector in projectors:
            for statement in projector.create_statements:
                connection.execute(statement)
        replayed = 0
        for event in _snapshot_events(connection):
            for projector in projectors:
                projector.apply(connection, event)
            replayed += 1
        for projector in projectors:
            checks.append(_projector_check(connection, scratch, projector, replayed))
        # Rolling back drops the scratch schema and leaves no trace of the rebuild.
        raise psycopg.Rollback(transaction)
    return checks


def _projector_check(
    connection: Connection, scratch: str, projector: Projector, replayed: int
) -> AuditCheck:
    name = f"projection {projector.name}"
    missing = [
        table for table in projector.tables if not _table_exists(connection, LIVE_SCHEMA, table)
    ]
    if missing:
        if len(missing) == len(projector.tables) and not _was_prepared(connection, projector):
            return AuditCheck(
                name,
                Status.NOT_COVERED,
                "never set up in this database (no live tables, no checkpoint): nothing to compare",
            )
        return AuditCheck(name, Status.FAILED, f"the live table(s) {missing} do not exist")
    differences = [
        difference
        for table in projector.tables
        for difference in compare_table(connection, scratch, table)
    ]
    if not differences:
        rows = sum(len(_rows(connection, scratch, table)) for table in projector.tables)
        return AuditCheck(
            name,
            Status.PASSED,
            f"{rows} row(s) rebuilt from {replayed} events equal the live ones",
        )
    named = "; ".join(
        f"{d.table} row {d.key}: {d.detail}" for d in differences[:MAX_DIFFERENCES_NAMED]
    )
    more = len(differences) - MAX_DIFFERENCES_NAMED
    return AuditCheck(
        name,
        Status.FAILED,
        f"{len(differences)} row(s) differ from the log's rebuild: {named}"
        + (f" … and {more} more" if more > 0 else ""),
    )

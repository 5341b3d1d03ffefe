"""Read models: tables kept current from the log, inside the append's own transaction.

A projector owns some tables (never ``events``): it says how to create them and how to apply one
event to them. The store calls ``apply`` for every appended event in the append's transaction, so a
reply never shows state older than what it just wrote. Because read models are a function of the
log, they can be dropped and replayed at any time (``rebuild_projections``,
``sapsam projections rebuild``), and the result must be identical row for row.

Read-model tables are created by their projector, not by alembic: their definition is code, and a
changed definition (detected through ``definition_hash``) is applied by rebuilding from the log.
The ``projections`` table (created by the migrations) records, per projector, that hash and the
log position its last rebuild replayed to.

Appends to different streams commit concurrently, so an in-transaction projector must give the
same rows whatever order appends of *different streams* are applied in: keep its rows per stream
(a table's state, its seats' scores) or make cross-stream updates commutative (sums, counts).
Order-dependent views across streams (leaderboards, "latest N") should follow the log instead
(``sapsam.store.subscriptions.follow``) with their own checkpoint. Every process that appends must
register the same projectors (the composition root does); a read model that missed appends is
repaired by ``sapsam projections rebuild``.

Projectors are found through ``PROJECTOR_MODULES``: each listed module exposes
``projectors() -> Sequence[Projector]``. Add a module there to register its read models.
``all_projectors`` is every read model the service keeps: the game's own (``table_state``,
``seat_scores``, from ``GAME_PROJECTOR_MODULE``) and then the registered ones.

A rebuild drops and recreates tables, so it carries each existing table's owner and grants over to
its new table; a role that could not give a table back to its owner is refused before anything
changes (``ReadModelOwnerError``), so a read model never ends up out of the service's reach.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Protocol

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from sapsam.log.records import DatabaseOpenError, JsonObject, RecordedEvent
from sapsam.store.offline_reads import iterate_all
from sapsam.store.reads import event_from_row

Connection = psycopg.Connection[Any]

# Every insert into events holds this advisory lock in shared mode (the migration's
# events_mark_inserts trigger). Rebuilds take it exclusively: they wait for appends in flight and
# hold new ones off, so the rebuilt read models match the log exactly at the recorded position.
APPEND_LOCK_KEY = 7526466447829417325

# Modules exposing ``projectors() -> Sequence[Projector]``; the game's read models register here.
PROJECTOR_MODULES: tuple[str, ...] = ("sapsam.store.tournament_projections",)  # tournaments
# The tables' own read models (table_state, then seat_scores, which reads it): applied first.
GAME_PROJECTOR_MODULE = "sapsam.store.table_projections"


class StatementSink(Protocol):
    """Where a projector's ``apply`` says its statements: a synchronous connection (the rebuild
    at start-up) or, on an append's transaction path, a recorder whose statements the append then
    runs on its asynchronous connection (:func:`apply_projectors`). ``apply`` never reads back."""

    def execute(self, query: Any, params: Any = None, /) -> object:
        """Run (or record) one statement."""
        ...


class Projector(Protocol):
    """A read model: the tables it owns and how one event changes them."""

    @property
    def name(self) -> str:
        """A stable name, the key of its row in ``projections``."""
        ...

    @property
    def tables(self) -> Sequence[str]:
        """The tables it owns; a rebuild drops them (never name ``events`` here)."""
        ...

    @property
    def create_statements(self) -> Sequence[str]:
        """SQL that creates its tables (and indexes) in an empty schema."""
        ...

    def apply(self, connection: StatementSink, event: RecordedEvent) -> None:
        """Bring the tables up to date with one event; must not commit or roll back."""
        ...

    def handles(self, stream_id: str) -> bool:
        """False when events of ``stream_id`` never change its tables (a hint to the append)."""
        ...

    def inline(self, event: PendingEvent) -> InlineStatement | NotInlined | None:
        """The change ``apply`` would make for ``event``, as one statement to run inside the
        append's own INSERT (None: no change), or ``NOT_INLINED`` if it cannot be said so."""
        ...


@dataclass(frozen=True)
class PendingEvent:
    """An event being appended, before the database has given it a position."""

    stream_id: str
    version: int
    type: str
    data: JsonObject
    metadata: JsonObject


@dataclass(frozen=True)
class InlineStatement:
    """A data-modifying statement that runs as a CTE of the append's INSERT, so a one-event
    append with its read models stays a single statement (one round trip, no BEGIN/COMMIT).

    ``sql`` may read the CTE ``inserted(position, version)``, which holds the new event's row, or
    none if the insert was refused (the statement must then change nothing: take the position
    from ``inserted`` in a FROM or a SELECT). Its named parameters (``%(name)s``) are its own:
    the append renames them apart.
    """

    sql: str
    parameters: dict[str, Any]


class NotInlined(Enum):
    """The answer of a projector that can only ``apply`` after the insert."""

    NOT_INLINED = "not inlined"


NOT_INLINED: Final = NotInlined.NOT_INLINED


@dataclass(frozen=True)
class SqlProjector:
    """A Projector assembled from a name, its tables' SQL and an apply function.

    ``stream_prefix``: only streams whose id starts with it change its tables (None: any).
    ``inline_event``: how to say ``apply_event``'s change for one event as an ``InlineStatement``
    (None: the projector runs only after the insert, in the append's transaction);
    ``inline_batch_events`` the same for a batch of several events; all must give the same rows,
    which the rebuild tests check.
    """

    name: str
    tables: tuple[str, ...]
    create_statements: tuple[str, ...]
    apply_event: Callable[[StatementSink, RecordedEvent], None]
    stream_prefix: str | None = None
    inline_event: Callable[[PendingEvent], InlineStatement | None] | None = None
    inline_batch_events: (
        Callable[[Sequence[PendingEvent]], Sequence[InlineStatement] | NotInlined] | None
    ) = None

    def apply(self, connection: StatementSink, event: RecordedEvent) -> None:
        """Apply one event (delegates to ``apply_event``)."""
        self.apply_event(connection, event)

    def handles(self, stream_id: str) -> bool:
        """Whether events of this stream can change its tables."""
        return self.stream_prefix is None or stream_id.startswith(self.stream_prefix)

    def inline(self, event: PendingEvent) -> InlineStatement | NotInlined | None:
        """``inline_event``'s statement for ``event``, or ``NOT_INLINED`` without one."""
        if self.inline_event is None:
            return NOT_INLINED
        return self.inline_event(event)

    def inline_batch(
        self, events: Sequence[PendingEvent]
    ) -> Sequence[InlineStatement] | NotInlined:
        """The statements for a batch of one stream's events (``inline_batch_events``; a
        one-event batch also by ``inline``), or ``NOT_INLINED``."""
        if len(events) == 1:
            statement = self.inline(events[0])
            if statement is NOT_INLINED:
                return NOT_INLINED
            return [] if statement is None else [statement]
        if self.inline_batch_events is None:
            return NOT_INLINED
        return self.inline_batch_events(events)


@dataclass(frozen=True)
class ProjectionReport:
    """What preparing or rebuilding one projector did."""

    name: str
    action: str  # "rebuilt" or "current"
    events_applied: int
    position: int


def registered_projectors(extra_modules: Sequence[str] = ()) -> list[Projector]:
    """Every projector of the modules in ``PROJECTOR_MODULES`` (and of ``extra_modules``)."""
    found: list[Projector] = []
    for module_name in (*PROJECTOR_MODULES, *extra_modules):
        found.extend(importlib.import_module(module_name).projectors())
    return found


def all_projectors(extra_modules: Sequence[str] = ()) -> list[Projector]:
    """Every read model the service keeps, each once, in apply order: the game's
    (``GAME_PROJECTOR_MODULE``), the registered ones, then those of ``extra_modules``.

    What ``sapsam projections rebuild`` rebuilds and ``sapsam audit verify --all`` compares."""
    found: list[Projector] = []
    game = importlib.import_module(GAME_PROJECTOR_MODULE).projectors()
    for projector in (*game, *registered_projectors(extra_modules)):
        if all(projector.name != known.name for known in found):
            found.append(projector)
    return found


def definition_hash(projector: Projector) -> bytes:
    """SHA-256 over the projector's table names and create statements."""
    digest = hashlib.sha256(projector.name.encode())
    for text in (*projector.tables, "\x00", *projector.create_statements):
        digest.update(b"\x00" + text.encode())
    return digest.digest()


def _check_names(projectors: Sequence[Projector]) -> None:
    names = [projector.name for projector in projectors]
    if len(set(names)) != len(names):
        raise ValueError(f"projector names must be unique: {names}")
    for projector in projectors:
        if any(table in ("events", "processed_requests") for table in projector.tables):
            raise ValueError(f"projector {projector.name!r} may not own the store's own tables")


class _RecordedStatements:
    """A ``StatementSink`` that keeps the statements said to it, in order."""

    def __init__(self) -> None:
        self.statements: list[tuple[Any, Any]] = []

    def execute(self, query: Any, params: Any = None, /) -> None:
        self.statements.append((query, params))


async def apply_projectors(
    connection: psycopg.AsyncConnection[Any],
    projectors: Sequence[Projector],
    events: Sequence[RecordedEvent],
) -> None:
    """Apply freshly appended events to every projector (inside the append's transaction)."""
    recorder = _RecordedStatements()
    for projector in projectors:
        for event in events:
            projector.apply(recorder, event)
    for statement, parameters in recorder.statements:
        await connection.execute(statement, parameters)


class ReadModelOwnerError(DatabaseOpenError):
    """A rebuild would take a read model away from its owner: run it as that role instead."""


@dataclass(frozen=True)
class _TableAccess:
    """Who owns an existing read-model table and what others were granted on it."""

    table: str
    owner: str
    grants: tuple[tuple[str | None, str, bool], ...]  # grantee (None: PUBLIC), privilege, option


def _access_of(connection: Connection, table: str) -> _TableAccess | None:
    """The table's owner and grants (None: no such table); ``ReadModelOwnerError`` when the
    connected role could not give a rebuilt table back to that owner."""
    row = connection.execute(
        "SELECT pg_get_userbyid(relowner), pg_has_role(relowner, 'MEMBER'), current_user"
        " FROM pg_class WHERE oid = to_regclass(quote_ident(%s))",
        [table],
    ).fetchone()
    if row is None:
        return None
    owner, may_act_as_owner, current = str(row[0]), bool(row[1]), str(row[2])
    if not may_act_as_owner:
        raise ReadModelOwnerError(
            f"the read model {table} belongs to the role {owner}, and {current} may not give a"
            f" rebuilt table back to it: run `sapsam projections rebuild` as {owner} (or as a"
            " role that is a member of it), so that the read models keep their owner and grants"
        )
    grants = connection.execute(
        "SELECT CASE WHEN acl.grantee = 0 THEN NULL ELSE pg_get_userbyid(acl.grantee) END,"
        " acl.privilege_type, acl.is_grantable"
        " FROM pg_class c, aclexplode(c.relacl) AS acl"
        " WHERE c.oid = to_regclass(quote_ident(%s)) AND acl.grantee <> c.relowner"
        " ORDER BY 1, 2",
        [table],
    ).fetchall()
    return _TableAccess(table, owner, tuple((g, str(p), bool(o)) for g, p, o in grants))


# What aclexplode can name on a table (MAINTAIN since PostgreSQL 17).
_TABLE_PRIVILEGES = frozenset(
    {"SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "MAINTAIN"}
)


def _restore_access(connection: Connection, access: _TableAccess) -> None:
    """Give the recreated table its old owner and grants (the creator's own are dropped with
    ownership, as they were before)."""
    table = sql.Identifier(access.table)
    current = connection.execute("SELECT current_user").fetchone()
    if current is None or current[0] != access.owner:
        connection.execute(
            sql.SQL("ALTER TABLE {} OWNER TO {}").format(table, sql.Identifier(access.owner))
        )
    for grantee, privilege, grantable in access.grants:
        if privilege not in _TABLE_PRIVILEGES:
            raise ValueError(f"unexpected privilege {privilege!r} on {access.table}")
        connection.execute(
            sql.SQL("GRANT {} ON {} TO {}{}").format(
                sql.SQL(privilege),
                table,
                sql.SQL("PUBLIC") if grantee is None else sql.Identifier(grantee),
                sql.SQL(" WITH GRANT OPTION" if grantable else ""),
            )
        )


def _reset_projectors(
    connection: Connection, projectors: Sequence[Projector]
) -> list[_TableAccess]:
    """Drop and recreate every projector's tables; returns what ``_restore_access`` must give
    back once they are filled (the creating role writes them meanwhile as their owner).

    Every table is looked at before any is dropped, so a refusal changes nothing. A table that
    did not exist goes to the owner of the first one that did (the role that created the read
    models, usually the service's), else stays with the role running this.
    """
    found = {
        table: _access_of(connection, table)
        for projector in projectors
        for table in projector.tables
    }
    existing = [access for access in found.values() if access is not None]
    kept = list(existing)
    if existing:
        kept += [
            _TableAccess(table, existing[0].owner, ())
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


def _replay(
    connection: Connection, projectors: Sequence[Projector], after_position: int
) -> tuple[int, int]:
    """Apply every event after ``after_position``; returns (events applied, last position)."""
    count = 0
    position = after_position
    for event in iterate_all(connection, after_position):
        for projector in projectors:
            projector.apply(connection, event)
        count += 1
        position = event.position
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


def _fill_from_folds(connection: Connection, projectors: Sequence[Projector]) -> tuple[int, int]:
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


def _rebuild_from_log(connection: Connection, projectors: Sequence[Projector]) -> tuple[int, int]:
    """Fill the projectors' new tables from the whole log: by their folds when every one has a
    fold (the game's read models), else by replaying every event through their SQL."""
    if _all_folded(projectors):
        return _fill_from_folds(connection, projectors)
    return _replay(connection, projectors, 0)


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
    connection: Connection, projectors: Sequence[Projector]
) -> list[ProjectionReport]:
    """Drop and recreate every projector's tables and replay the whole log into them.

    Runs in one transaction holding the append lock, so appends wait and the rebuilt read models
    match the log exactly at the recorded position. Each table keeps its owner and grants
    (``ReadModelOwnerError``, before anything changes, for a role that could not keep them).
    """
    _check_names(projectors)
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", [APPEND_LOCK_KEY])
        kept = _reset_projectors(connection, projectors)
        count, position = _rebuild_from_log(connection, projectors)
        for access in kept:
            _restore_access(connection, access)
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
    _check_names(projectors)
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
                _restore_access(connection, access)
            for projector in stale:
                _record(connection, projector, position)
                reports.append(ProjectionReport(projector.name, "rebuilt", count, position))
    return reports

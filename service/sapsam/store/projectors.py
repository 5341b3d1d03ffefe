"""What a read model's projector is, and how the append applies projectors.

A projector owns some tables (never ``events``): it says how to create them and how to apply one
event to them (``Projector``; ``SqlProjector`` assembles one from functions). The store calls
``apply`` for every appended event in the append's transaction (``apply_projectors``), or runs
the projector's ``InlineStatement`` inside the append's own INSERT, so a reply never shows state
older than what it just wrote. Rebuilding them from the log is ``sapsam.store.projections``.

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
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Protocol

import psycopg

from sapsam.log.records import JsonObject, RecordedEvent

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
    batched: BatchedPart | None = None
    """The same change as part of the commit group's one statement for many appends
    (``sapsam.store.batch_statement``); None: an append with this statement is sent on its own."""


@dataclass(frozen=True)
class BatchedPart:
    """An ``InlineStatement``'s change said for many appends at once: data, and SQL reading it.

    ``sql`` is a list of CTEs (``name AS (...)``, names starting with ``name``) that reads the
    batch statement's ``appended`` CTE: one row per append whose events were all inserted, with
    ``i`` (its index in the batch), ``stream``, ``first_version``, ``last_version``,
    ``first_position``, ``last_position`` and ``parts`` (jsonb), where ``parts->'<name>'`` is the
    JSON array of every ``item`` that append's statements gave under ``name``. It has no
    parameters: one text serves every batch with this part, so PostgreSQL plans it a few times
    per connection.
    """

    name: str
    sql: str
    item: Any


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


def check_names(projectors: Sequence[Projector]) -> None:
    """Refuse (ValueError) projectors sharing a name, or owning the store's own tables."""
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

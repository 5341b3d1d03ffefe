"""The store as the application layer sees it: app owns it, ``sapsam.store`` implements it.

app decides; the store only keeps. So the application code names *what* it needs from the
database (read a stream, find a processed request id, append with these secret changes, ...)
and never how: no SQL, no connection, no driver here. ``sapsam.store.session.PostgresSession``
implements ``StoreSession`` over one pooled connection, each method one named query of
``sapsam.store.queries``; ``sapsam.store.event_store.EventStore`` implements ``Store``.

A session is one connection held for a unit of work (one attempt of a command: its reads, its
secret look-ups and its append), so a write never holds two pooled connections at once. Each
method is one statement (or, for ``append``, one append with its read models), awaited: the
store runs on psycopg's asynchronous driver and pool, on the worker's one event loop, so a call
waiting for the database holds no thread.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from sapsam.log.records import AppendResult, JsonValue, NewEvent, RecordedEvent

DEADLINES_PROCESS: Final = "deadlines"
"""The deadline sweeper's name in the failure records."""
RESULTS_PROCESS: Final = "tournament-results"
"""The tournament results process's name in the failure records."""


@dataclass(frozen=True)
class TypedPage:
    """A page of the log read for some event types only (``StoreSession.read_all_of_types``)."""

    events: list[RecordedEvent]
    """The page's events of those types, in the log's order."""
    last_position: int
    """The last position the page read, of any type (the reader's next checkpoint)."""
    caught_up: bool
    """Fewer events than asked were there: the reader has read all there is for now."""


@dataclass(frozen=True)
class SecretChanges:
    """Secrets of the appended stream to keep or forget in the append's transaction.

    ``keep``: (number, seed) pairs to store (a deal's number, 0 for a table's dealer lot, a
    round's number for a tournament's seating); ``forget``: numbers whose secret the appended
    events publish, deleted in the same transaction so a secret is never in the log and in the
    store at once, nor in neither.
    """

    keep: tuple[tuple[int, bytes], ...] = ()
    forget: tuple[int, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.keep or self.forget)


NO_SECRET_CHANGES: Final = SecretChanges()


class ProcessedRequest(Protocol):
    """A request id the log has processed: its stream and its original result."""

    @property
    def stream_id(self) -> str: ...

    @property
    def result(self) -> AppendResult: ...

    def same_request(
        self, stream_id: str, request_digest: bytes | None, fingerprint: bytes | None = None
    ) -> bool:
        """Whether a request on ``stream_id`` with this digest is a retry of this one."""
        ...


class TableFailure(Protocol):
    """A table a background process keeps failing on (``background_failures``)."""

    @property
    def table_id(self) -> str: ...

    @property
    def failures(self) -> int: ...

    @property
    def last_failed_ms(self) -> int: ...

    @property
    def retry_at_ms(self) -> int: ...

    @property
    def pending_positions(self) -> tuple[int, ...]: ...


class DueTable(Protocol):
    """A table whose deadline has passed; ``failing``: the sweeper failed on it before."""

    @property
    def table_id(self) -> str: ...

    @property
    def deadline_ms(self) -> int: ...

    @property
    def failing(self) -> bool: ...


class WaitingTable(Protocol):
    """A table with what the read model says it waits for, and since when (its last event's
    ``recorded_at``)."""

    @property
    def table_id(self) -> uuid.UUID: ...

    @property
    def phase(self) -> str: ...

    @property
    def seat_count(self) -> int: ...

    @property
    def players(self) -> tuple[str | None, ...]: ...

    @property
    def dealer(self) -> int | None: ...

    @property
    def deal_number(self) -> int: ...

    @property
    def seat_status(self) -> tuple[dict[str, Any], ...]: ...

    @property
    def deadline_ms(self) -> int | None: ...

    @property
    def waiting_since(self) -> str: ...


class TableListing(Protocol):
    """One line of a page of tables: its id and the facts of its creation."""

    @property
    def table_id(self) -> uuid.UUID: ...

    @property
    def created_at(self) -> str: ...

    @property
    def created_by(self) -> str: ...


class PlayedDealLine(Protocol):
    """One scored deal of a player, from one seat it held (the hand history)."""

    @property
    def table_id(self) -> uuid.UUID: ...

    @property
    def deal_number(self) -> int: ...

    @property
    def seat(self) -> int: ...

    @property
    def delta(self) -> int: ...

    @property
    def series_total(self) -> int: ...

    @property
    def fouled(self) -> bool: ...

    @property
    def rule_set_name(self) -> str: ...

    @property
    def seat_count(self) -> int: ...

    @property
    def scored_at(self) -> str | None: ...

    @property
    def sort_key(self) -> tuple[str, uuid.UUID, int, int]: ...


class StandingLine(Protocol):
    """One line of a tournament's standings."""

    @property
    def player_id(self) -> str: ...

    @property
    def total(self) -> int: ...

    @property
    def deals_won(self) -> int: ...

    @property
    def deals_played(self) -> int: ...

    @property
    def place(self) -> int: ...


class LeaderboardLine(Protocol):
    """One line of a leaderboard across tournaments."""

    @property
    def player_id(self) -> str: ...

    @property
    def total(self) -> int: ...

    @property
    def deals_played(self) -> int: ...

    @property
    def tournaments_played(self) -> int: ...

    @property
    def place(self) -> int: ...


class StoreSession(Protocol):
    """One connection's worth of store operations (see the module docstring)."""

    # -- the log ---------------------------------------------------------------------------------

    async def read_stream(
        self, stream_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """One stream's events from ``from_version`` (to ``to_version``), in order."""
        ...

    async def read_stream_tails(
        self, from_versions: Sequence[tuple[str, int]]
    ) -> dict[str, list[RecordedEvent]]:
        """Each named stream's events from its own from-version on, in order: one round trip."""
        ...

    async def read_all(self, after_position: int, limit: int) -> list[RecordedEvent]:
        """Up to ``limit`` events after a global position, in the log's order."""
        ...

    async def read_all_of_types(
        self, after_position: int, limit: int, types: Sequence[str]
    ) -> TypedPage:
        """Those of ``types`` among the next ``limit`` events after a global position."""
        ...

    async def stream_version(self, stream_id: str) -> int:
        """The stream's current version (0 if it has none)."""
        ...

    async def find_processed_request(self, request_id: str) -> ProcessedRequest | None:
        """The processed request of that id, or None."""
        ...

    async def append(
        self,
        stream_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        request_id: str,
        actor: str,
        *,
        response: JsonValue = None,
        secrets: SecretChanges = NO_SECRET_CHANGES,
        request_digest: bytes | None = None,
        handed_to: str | None = None,
        wake_type_listeners: bool = True,
    ) -> AppendResult:
        """Append with optimistic concurrency, the read models and ``secrets``, atomically.

        ``handed_to``: the wake-up listener of this process's live feed when the caller hands
        it the committed events itself (``TableRunner.on_appended``): it is sent no wake-up.
        ``wake_type_listeners`` False: the listeners that follow event types (the results
        process, for ``DealScored``) are not woken by these events; the caller knows none of them
        wants them (a table of no tournament). The stream's watchers elsewhere still are.

        Raises ``ConcurrencyConflict`` for a version taken meanwhile and ``RequestIdReused``
        for a request id processed for another stream or request; a processed request id
        returns the original result (``replayed``) and appends nothing.
        """
        ...

    def transaction(self) -> AbstractAsyncContextManager[object]:
        """A transaction around several operations (nested ones become savepoints)."""
        ...

    async def rollback(self) -> None:
        """End whatever a failed operation left open."""
        ...

    # -- secrets ---------------------------------------------------------------------------------

    async def load_secret(self, stream_id: str, number: int) -> bytes | None:
        """A kept secret seed (None once published or never kept)."""
        ...

    # -- read models -----------------------------------------------------------------------------

    async def table_page(
        self, phases: Sequence[str] | None, after: tuple[str, uuid.UUID] | None, limit: int
    ) -> Sequence[TableListing]:
        """Up to ``limit`` tables newest first (by creation time, then id), only those in
        ``phases`` unless None, after ``after`` (a creation time and id)."""
        ...

    async def deal_history_page(
        self, player_id: str, after: tuple[str, uuid.UUID, int, int] | None, limit: int
    ) -> Sequence[PlayedDealLine]:
        """Up to ``limit`` of a player's scored deals, newest table first (by creation time and
        id), its latest deal first, after ``after`` (a line's ``sort_key``)."""
        ...

    async def tournament_page(
        self, phases: Sequence[str] | None, after: tuple[int, str] | None, limit: int
    ) -> list[tuple[str, int]]:
        """Tournament ids with their creation time (ms), newest first, only those in
        ``phases`` unless None, after ``after`` (a creation time and id)."""
        ...

    async def standings_page(
        self, tournament_id: str, tie_break: str, offset: int, limit: int
    ) -> tuple[Sequence[StandingLine], int]:
        """A page of a tournament's standings from ``offset``, and the number of lines."""
        ...

    async def leaderboard_page(
        self, rule_set: str | None, period: str | None, offset: int, limit: int
    ) -> tuple[Sequence[LeaderboardLine], int]:
        """A page of a leaderboard from ``offset``, and the number of players on it."""
        ...

    async def leaderboard_around(
        self, rule_set: str | None, period: str | None, player_id: str, radius: int
    ) -> Sequence[LeaderboardLine]:
        """A player's leaderboard line with up to ``radius`` lines either side."""
        ...

    async def waiting_tables(
        self, phases: Sequence[str] | None, limit: int
    ) -> Sequence[WaitingTable]:
        """Up to ``limit`` tables in ``phases`` (None: every one not complete), longest waiting
        first."""
        ...

    async def waiting_past_deadline(self, now_ms: int, limit: int) -> Sequence[WaitingTable]:
        """Up to ``limit`` tables not complete whose deadline passed by ``now_ms``, longest
        waiting first."""
        ...

    async def tables_past_deadline(self, now_ms: int, limit: int) -> Sequence[DueTable]:
        """Tables in play whose deadline passed by ``now_ms`` (backed-off ones left out)."""
        ...

    async def tournament_of_table(self, table_id: str) -> uuid.UUID | None:
        """The tournament a table belongs to, if any."""
        ...

    async def running_tournaments(self) -> list[uuid.UUID]:
        """Every tournament in play."""
        ...

    async def tournament_phase_of_table(self, table_id: str) -> str | None:
        """The phase of the tournament a table belongs to (``PAUSED`` …), None for none."""
        ...

    def tournament_pause_lock(
        self, tournament_id: uuid.UUID, *, shared: bool
    ) -> AbstractAsyncContextManager[None]:
        """Hold the tournament's pause lock for the block, across server processes:
        exclusively over a pause's append, shared over a deal's start at one of its tables."""
        ...

    async def tables_of_paused_tournaments(self, table_ids: Sequence[str]) -> set[str]:
        """Those of ``table_ids`` whose tournament is paused now (held, not stuck)."""
        ...

    def tournament_control_lock(
        self, tournament_id: uuid.UUID
    ) -> AbstractAsyncContextManager[None]:
        """Hold the tournament's control lock for the block, across server processes (one
        re-seat at a time: its steps span the table's stream and the tournament's)."""
        ...

    # -- background processes' own state ---------------------------------------------------------

    async def read_checkpoint(self, name: str) -> int:
        """The last log position process ``name`` has fully handled (0 if it never ran)."""
        ...

    async def save_checkpoint(self, name: str, position: int) -> None:
        """Move process ``name``'s checkpoint forward to ``position`` (never back)."""
        ...

    async def record_failure(
        self,
        process: str,
        table_id: uuid.UUID | str,
        error: BaseException,
        now_ms: int,
        pending_positions: Sequence[int] = (),
    ) -> TableFailure:
        """Count one more failure of ``process`` at a table and back it off."""
        ...

    async def clear_failure(self, process: str, table_id: uuid.UUID | str) -> None:
        """The table succeeded: forget its failures."""
        ...

    async def failing_tables(self, process: str) -> Sequence[TableFailure]:
        """Every table ``process`` keeps failing on, longest failing first."""
        ...

    async def add_pending_position(self, process: str, table_id: str, position: int) -> None:
        """Park one more log position behind a failing table's earlier ones."""
        ...

    async def remove_pending_position(self, process: str, table_id: str, position: int) -> None:
        """A parked position was handled."""
        ...

    async def pending_count(self, process: str, table_id: str) -> int | None:
        """How many positions a failing table still has parked (locking its row); None if it is
        not failing."""
        ...


class StopSignal(Protocol):
    """A stop request that ends a background loop's waits at once (as
    ``sapsam.store.background.StopSignal`` does)."""

    def is_set(self) -> bool:
        """True once the stop was asked for."""
        ...

    async def wait(self, seconds: float) -> bool:
        """Pause ``seconds`` unless the stop comes first; True if stopping."""
        ...

    async def wait_for(self, awaitable: Awaitable[Any], seconds: float) -> bool:
        """Wait for ``awaitable``, ``seconds``, or the stop, whichever is first; True if
        stopping."""
        ...


class Store(Protocol):
    """Where sessions come from, and the store's view of its own failures."""

    @property
    def outage_errors(self) -> tuple[type[Exception], ...]:
        """The errors meaning the database itself is out of reach (not one table's problem)."""
        ...

    @property
    def database_errors(self) -> tuple[type[Exception], ...]:
        """Every error the database or its driver raises."""
        ...

    def session(self) -> AbstractAsyncContextManager[StoreSession]:
        """A session on one pooled connection, returned to the pool at the end of the block."""
        ...

    def write_stamp(self, stream_id: str) -> int:
        """The stream's write stamp now, without a statement: it changes (before the write is
        acknowledged) whenever any process of this machine appends to the stream. A copy made
        from a log read started after this call is current while the stamp stays the same
        (``sapsam.store.write_stamps``)."""
        ...

    def stamp_after_own_write(self, stream_id: str, before: int) -> int | None:
        """The stamp of the state a process's own append produced, ``before`` read before it:
        None if some other write may have come in between (the copy is then not current)."""
        ...

    def bump_write_stamp(self, stream_id: str) -> None:
        """Count an acknowledgment of a write not made through this call's append (a retried
        request answered from the processed ids): copies made before it stop being current."""
        ...

    def follow_log(
        self,
        lock_key: int,
        stop: StopSignal,
        poll_seconds: float,
        gather_seconds: float,
        event_types: Sequence[str] | None = None,
    ) -> AsyncIterator[None]:
        """Yield once this process alone follows the log (holding ``lock_key``), then again each
        time events were appended (or ``poll_seconds`` passed), waiting ``gather_seconds`` after
        a wake-up so that a busy log's appends are handled together; ends as soon as ``stop`` is
        set, whatever it waits for. Woken only by appends of ``event_types`` (None: by every
        append); the others wait for the poll.
        """
        ...

"""The results process: follows the log and credits each finished tournament deal exactly once.

It reads the global order (``read_all``) from its checkpoint. For a ``DealScored`` of a table that
belongs to a tournament (``tournament_tables``), it appends ``DealCredited`` to the tournament's
stream — and, when that completes a round, the next round's seating — **and** advances its
checkpoint row to that event's position, in one transaction. So after any crash the log and the
checkpoint agree: either both happened or neither did, and the event is handled again from the
same state. The append's request id is derived from the table and deal (``credit/<table>/<deal>``)
and the aggregate refuses a second credit of a deal (``ALREADY_CREDITED``): two more guards
against double counting, should a checkpoint ever be restored from an older backup.

Events of no interest move the checkpoint forward in a separate, later write, at most every
``IDLE_CHECKPOINT_SECONDS`` (the process remembers its position meanwhile); nothing depends on
them, and a restart reads them again for nothing. So a busy log of game events costs the follower
reads, not a disk flush per wake-up.

After a round is seated, the process creates its tables through ``TableService``; that is
idempotent and repeated for every running tournament when the process starts, so a crash between
the commit and the tables costs nothing.

Each table on its own: a table whose deal cannot be credited (any error but the database's own
unavailability) is *parked*: the failure is recorded in ``background_failures`` with the event's
log position, in the same transaction as the checkpoint moving past it, and logged with the
table's id. Later events of a parked table join its pending positions in order; every other table
goes on. The parked events are tried again, in order, with an exponential back-off
(``sapsam.store.table_failures``), and the table leaves the list once all are credited.
``sapsam tables stuck`` shows the parked tables.

One process follows the log at a time (a session advisory lock); every server process runs one,
and another takes over when the holder dies. ``crash_hook`` is called with the name of each step
(``read``, ``decided``, ``appended``, ``checkpointed``, ``committed``, ``tables``): the tests raise
there to kill the process between any two steps.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any, Final

import psycopg
from psycopg import sql

from sapsam.app.tournaments import TournamentService, stream_id_for
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DealScored, Event
from sapsam.domain.tournament import CreditDeal, TournamentPhase, decide, evolve
from sapsam.log.records import ConcurrencyConflict, RecordedEvent
from sapsam.store import appends, reads
from sapsam.store.background import StopSignal
from sapsam.store.table_failures import (
    RESULTS_PROCESS,
    TableFailure,
    clear_failure,
    failing_tables,
    record_failure,
)

Connection = psycopg.Connection[Any]

PROCESS_NAME: Final = "tournament-results"
# Held (session level) by the one process following the log; any value unique to this purpose.
FOLLOWER_LOCK_KEY: Final = 7526466447829417399
CONFLICT_RETRIES: Final = 8
IDLE_CHECKPOINT_SECONDS: Final = 5.0
FOLLOW_PAUSE_SECONDS: Final = 0.2
CHECKPOINTS_SQL: Final = """
CREATE TABLE IF NOT EXISTS tournament_checkpoints (
    name text PRIMARY KEY,
    position bigint NOT NULL
)
"""
STEPS: Final = ("read", "decided", "appended", "checkpointed", "committed", "tables")

_logger = logging.getLogger("sapsam.app.tournament_results")


class SimulatedCrash(Exception):  # noqa: N818 - a crash, not an error to handle
    """Raised by a test's crash hook to stop the process between two steps."""


def _no_crash(step: str) -> None:
    return None


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def ensure_checkpoint_table(connection: Connection) -> None:
    """Create the checkpoint table if it is missing (it is process state, not a read model)."""
    connection.execute(CHECKPOINTS_SQL)


def read_checkpoint(connection: Connection, name: str = PROCESS_NAME) -> int:
    """The last log position the process has fully handled (0 if it never ran)."""
    ensure_checkpoint_table(connection)
    row = connection.execute(
        "SELECT position FROM tournament_checkpoints WHERE name = %s", [name]
    ).fetchone()
    return int(row[0]) if row else 0


def _save_checkpoint(connection: Connection, name: str, position: int) -> None:
    # GREATEST: a checkpoint never moves back, whoever writes it.
    connection.execute(
        """
        INSERT INTO tournament_checkpoints (name, position) VALUES (%s, %s)
        ON CONFLICT (name) DO UPDATE
        SET position = GREATEST(tournament_checkpoints.position, excluded.position)
        """,
        [name, position],
    )


class ResultsProcess:
    """Credits finished tournament deals from the log; see the module docstring."""

    def __init__(
        self,
        tournaments: TournamentService,
        name: str = PROCESS_NAME,
        crash_hook: Callable[[str], None] = _no_crash,
        clock: Callable[[], int] = _wall_clock_ms,
    ) -> None:
        self.tournaments = tournaments
        self.store = tournaments.store
        self.name = name
        self.crash_hook = crash_hook
        self.clock = clock
        # Tables whose events wait in background_failures (None: not read yet).
        self._parked: set[str] | None = None
        # A failure may have come between a credit and its round's tables: set them up again.
        self.reconcile_wanted = False
        # How far this process has handled the log (None: not yet read from its checkpoint),
        # the position its checkpoint row holds, and when it last wrote one for events of no
        # interest.
        self._position: int | None = None
        self._checkpointed = 0
        self._idle_saved_at = 0.0

    def checkpoint(self) -> int:
        """The process's checkpoint."""
        with self.store.connection() as connection:
            return read_checkpoint(connection, self.name)

    def reconcile(self) -> int:
        """Finish setting up the current round's tables of every running tournament."""
        with self.store.connection() as connection:
            rows = connection.execute(
                "SELECT tournament_id FROM tournaments WHERE phase = 'RUNNING'"
            ).fetchall()
        created = 0
        for row in rows:
            try:
                created += self.tournaments.ensure_round_tables(uuid.UUID(str(row[0])))
            except psycopg.OperationalError:
                raise
            except Exception as error:  # one tournament must not hold up the others
                _logger.error(
                    "results process: setting up tournament %s's tables failed: %s",
                    row[0],
                    type(error).__name__,
                )
                self.reconcile_wanted = True
        return created

    def process_available(self, batch_size: int = 500) -> int:
        """Handle every event after the checkpoint, until caught up; returns deals credited."""
        credited = 0
        with self.store.connection() as connection:
            if self._position is None:
                self._position = self._checkpointed = read_checkpoint(connection, self.name)
            credited += self._retry_parked(connection)
            parked = self._parked
            assert parked is not None
            while True:
                batch = reads.read_all(connection, self._position, batch_size)
                if not batch:
                    break
                for event in batch:
                    table = _table_of(event)
                    if table is not None and table in parked:
                        self._park(connection, table, event, None)  # behind its earlier ones
                    else:
                        try:
                            handled = self._handle(connection, event)
                        except (psycopg.OperationalError, SimulatedCrash):
                            raise  # the database, not this table (or a test's crash)
                        except Exception as error:  # one table must not hold up the others
                            if table is None:
                                raise
                            self._park(connection, table, event, error)
                            handled = 0
                        if handled:
                            credited += 1
                            self._checkpointed = event.position  # in the credit's transaction
                    self._position = event.position
            now = time.monotonic()
            idle_for = now - self._idle_saved_at
            if self._position != self._checkpointed and idle_for >= IDLE_CHECKPOINT_SECONDS:
                # The rest changed nothing: just remember it was read.
                _save_checkpoint(connection, self.name, self._position)
                self._checkpointed = self._position
                self._idle_saved_at = now
        return credited

    def _park(
        self,
        connection: Connection,
        table: str,
        event: RecordedEvent,
        error: Exception | None,
    ) -> None:
        """Set ``event`` aside behind the table's earlier parked events, moving the checkpoint
        past it in the same transaction, so that the log's other tables go on."""
        assert self._parked is not None
        connection.rollback()  # whatever the failed attempt left open
        with connection.transaction():
            if error is None:
                connection.execute(
                    "UPDATE background_failures SET pending_positions = pending_positions"
                    " || %s::bigint WHERE process = %s AND table_id = %s",
                    [event.position, RESULTS_PROCESS, table],
                )
            else:
                failure = record_failure(
                    connection, RESULTS_PROCESS, table, error, self.clock(), [event.position]
                )
                _logger.error(
                    "results process failed at table %s (position %d): %s (failure %d in a row;"
                    " its events wait, the other tables go on)",
                    table,
                    event.position,
                    type(error).__name__,
                    failure.failures,
                )
            _save_checkpoint(connection, self.name, event.position)
        self._parked.add(table)
        self._checkpointed = event.position
        self.reconcile_wanted = error is not None

    def _retry_parked(self, connection: Connection) -> int:
        """Try the parked tables whose back-off is over; returns the deals credited."""
        failures = failing_tables(connection, RESULTS_PROCESS)
        self._parked = {failure.table_id for failure in failures}
        credited = 0
        for failure in failures:
            if failure.retry_at_ms <= self.clock():
                credited += self._retry_table(connection, failure)
        return credited

    def _retry_table(self, connection: Connection, failure: TableFailure) -> int:
        assert self._parked is not None
        credited = 0
        for position in failure.pending_positions:
            batch = reads.read_all(connection, position - 1, 1)
            try:
                if batch and batch[0].position == position:
                    credited += self._handle(connection, batch[0])
            except (psycopg.OperationalError, SimulatedCrash):
                raise
            except Exception as error:
                connection.rollback()
                with connection.transaction():
                    again = record_failure(
                        connection, RESULTS_PROCESS, failure.table_id, error, self.clock()
                    )
                _logger.error(
                    "results process failed again at table %s: %s (failure %d in a row)",
                    failure.table_id,
                    type(error).__name__,
                    again.failures,
                )
                return credited
            connection.execute(
                "UPDATE background_failures SET pending_positions ="
                " array_remove(pending_positions, %s::bigint) WHERE process = %s AND table_id = %s",
                [position, RESULTS_PROCESS, failure.table_id],
            )
        with connection.transaction():
            row = connection.execute(
                "SELECT cardinality(pending_positions) FROM background_failures"
                " WHERE process = %s AND table_id = %s FOR UPDATE",
                [RESULTS_PROCESS, failure.table_id],
            ).fetchone()
            if row is not None and row[0] == 0:
                clear_failure(connection, RESULTS_PROCESS, failure.table_id)
                self._parked.discard(failure.table_id)
                _logger.warning("results process: table %s is credited again", failure.table_id)
        return credited

    def _tournament_of(self, connection: Connection, event: RecordedEvent) -> uuid.UUID | None:
        if event.type != DealScored.TYPE or not event.stream_id.startswith("table-"):
            return None
        row = connection.execute(
            "SELECT tournament_id FROM tournament_tables WHERE table_id = %s",
            [event.stream_id.removeprefix("table-")],
        ).fetchone()
        return None if row is None else uuid.UUID(str(row[0]))

    def _handle(self, connection: Connection, event: RecordedEvent) -> int:
        tournament_id = self._tournament_of(connection, event)
        if tournament_id is None:
            return 0
        self.crash_hook("read")
        scored = self.store_decode(event)
        assert isinstance(scored, DealScored)
        table_id = uuid.UUID(event.stream_id.removeprefix("table-"))
        command = CreditDeal(table_id, scored.deal_number, scored.totals, event.position)
        for _attempt in range(CONFLICT_RETRIES):
            try:
                seated_next = self._credit(connection, tournament_id, command, event)
            except ConcurrencyConflict:
                continue  # a registration or another writer moved the stream: decide again
            self.crash_hook("committed")
            if seated_next:
                self.tournaments.ensure_round_tables(tournament_id)
                self.crash_hook("tables")
            return 1
        raise ConcurrencyConflict(stream_id_for(tournament_id), -1, -1)

    def store_decode(self, event: RecordedEvent) -> Event:
        """A table event, decoded."""
        return self.tournaments.tables.decode(event)

    def _credit(
        self,
        connection: Connection,
        tournament_id: uuid.UUID,
        command: CreditDeal,
        event: RecordedEvent,
    ) -> bool:
        """In one transaction: the credit (and the next round's seating) and the checkpoint."""
        with connection.transaction():
            state = self.tournaments.load(tournament_id, connection)
            try:
                events = decide(state, command)
            except DomainError as error:
                if error.reason is not Reason.ALREADY_CREDITED:
                    raise
                events = []  # credited before (e.g. a restored checkpoint): only move on
            after = state
            for produced in events:
                after = evolve(after, produced)
            work = None
            if events and after.phase is TournamentPhase.BETWEEN_ROUNDS:
                next_round, work = self.tournaments.next_round_command(connection, after)
                events += decide(after, next_round)
            self.crash_hook("decided")
            if events:
                appends.append(
                    connection,
                    stream_id_for(tournament_id),
                    state.version,
                    [self.tournaments.encode(item) for item in events],
                    f"credit/{command.table_id}/{command.deal_number}",
                    "results",
                    response={"tournament_id": str(tournament_id)},
                    projectors=self.store.projectors,
                    project=None if work is None else (lambda conn, recorded: work(conn)),
                )
            self.crash_hook("appended")
            _save_checkpoint(connection, self.name, event.position)
            self.crash_hook("checkpointed")
        return work is not None

    def run(self, stop: StopSignal, poll_seconds: float = 1.0) -> None:
        """Follow the log until ``stop`` is set: take the lock, reconcile, then handle events
        as they commit (woken by NOTIFY, polling every ``poll_seconds`` otherwise). Every wait
        ends as soon as ``stop`` is set."""
        conninfo = self.store.pool.conninfo
        assert isinstance(conninfo, str)  # the pool was opened with a connection string
        with psycopg.connect(conninfo, autocommit=True) as listener:
            while True:
                if stop.is_set():
                    return
                row = listener.execute(
                    "SELECT pg_try_advisory_lock(%s)", [FOLLOWER_LOCK_KEY]
                ).fetchone()
                if row is not None and row[0]:
                    break
                # Another process follows: nothing to do here until it stops holding the lock.
                stop.wait(poll_seconds)
            # LISTEN before the first read: anything committed after that read wakes us.
            listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(appends.NOTIFY_CHANNEL)))
            needs_reconcile = True
            while not stop.is_set():
                try:
                    if needs_reconcile or self.reconcile_wanted:
                        # At the start, and after a failure (which may have come between a
                        # round's seating and its tables): finish every round's set-up.
                        needs_reconcile = self.reconcile_wanted = False
                        self.reconcile()
                    self.process_available()
                except (ConcurrencyConflict, DomainError, psycopg.Error) as error:
                    _logger.error("results process step failed: %s", type(error).__name__)
                    needs_reconcile = True
                # Every notification read so far came before the read above; wait for the
                # next one on the socket (or the stop, or the poll interval).
                if stop.wait_readable(listener.fileno(), poll_seconds):
                    return
                # Let a busy log's appends gather: one read then handles them all (a credit
                # waits at most this long), instead of a read for every append.
                if stop.wait(FOLLOW_PAUSE_SECONDS):
                    return
                for _ in listener.notifies(timeout=0):
                    pass


def _table_of(event: RecordedEvent) -> str | None:
    """The table a scored deal belongs to (None for any other event)."""
    if event.type != DealScored.TYPE or not event.stream_id.startswith("table-"):
        return None
    return event.stream_id.removeprefix("table-")

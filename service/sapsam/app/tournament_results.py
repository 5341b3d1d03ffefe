"""The results process: follows the log and credits each finished tournament deal exactly once.

It reads the global order from its checkpoint, only its ``DealScored`` events decoded
(``read_all_of_types``: the positions of the rest are read, for the proof that none is skipped,
but not their columns; a deal's twenty-odd other events cost it no decoding). For a
``DealScored`` of a table that
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

import dataclasses
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

from sapsam.app.store_interface import (
    RESULTS_PROCESS,
    SecretChanges,
    StopSignal,
    StoreSession,
    TableFailure,
)
from sapsam.app.tournaments import TournamentService, stream_id_for
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DealScored, Event, SeriesCompleted
from sapsam.domain.tournament import CreditDeal, TournamentPhase, decide, evolve
from sapsam.log.records import ConcurrencyConflict, RecordedEvent

PROCESS_NAME: Final = "tournament-results"
# Held (session level) by the one process following the log; any value unique to this purpose.
FOLLOWER_LOCK_KEY: Final = 7526466447829417399
CONFLICT_RETRIES: Final = 8
IDLE_CHECKPOINT_SECONDS: Final = 5.0
TOURNAMENT_OF_TABLE_CACHE_SIZE: Final = 16_384
FOLLOW_PAUSE_SECONDS: Final = 0.2
"""After a wake-up, appends gather this long so one read handles them all (a credit waits at
most this long) instead of one read per append."""
STEPS: Final = ("read", "decided", "appended", "checkpointed", "committed", "tables")

_logger = logging.getLogger("sapsam.app.tournament_results")


class SimulatedCrash(Exception):  # noqa: N818 - a crash, not an error to handle
    """Raised by a test's crash hook to stop the process between two steps."""


def _no_crash(step: str) -> None:
    return None


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


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
        # Raised on, never parked: the database being out of reach, or a test's crash.
        self._unhandled: tuple[type[Exception], ...] = (*self.store.outage_errors, SimulatedCrash)
        # A follower step failing with these is logged and tried again.
        self._step_failures: tuple[type[Exception], ...] = (
            ConcurrencyConflict,
            DomainError,
            *self.store.database_errors,
        )
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
        # Which tournament each table that scored a deal belongs to (None: none), asked once per
        # table: a tournament's round seating commits its tables' rows in tournament_tables
        # before the tables exist, so the answer at a scored deal never changes.
        self._tournament_by_table: OrderedDict[str, uuid.UUID | None] = OrderedDict()

    async def checkpoint(self) -> int:
        """The process's checkpoint."""
        async with self.store.session() as session:
            return await session.read_checkpoint(self.name)

    async def reconcile(self) -> int:
        """Finish setting up the current round's tables of every running tournament."""
        async with self.store.session() as session:
            running = await session.running_tournaments()
        created = 0
        for tournament_id in running:
            try:
                created += await self.tournaments.ensure_round_tables(tournament_id)
            except self.store.outage_errors:
                raise
            except Exception as error:  # one tournament must not hold up the others
                _logger.error(
                    "results process: setting up tournament %s's tables failed: %s",
                    tournament_id,
                    type(error).__name__,
                )
                self.reconcile_wanted = True
        return created

    async def process_available(self, batch_size: int = 500) -> int:
        """Handle every event after the checkpoint, until caught up; returns deals credited."""
        credited = 0
        async with self.store.session() as session:
            if self._position is None:
                self._position = self._checkpointed = await session.read_checkpoint(self.name)
            credited += await self._retry_parked(session)
            parked = self._parked
            assert parked is not None
            while True:
                page = await session.read_all_of_types(
                    self._position, batch_size, (DealScored.TYPE,)
                )
                for event in page.events:
                    table = _table_of(event)
                    if table is not None and table in parked:
                        await self._park(session, table, event, None)  # behind its earlier ones
                    else:
                        try:
                            handled = await self._handle(session, event)
                        except self._unhandled:
                            raise  # the database, not this table (or a test's crash)
                        except Exception as error:  # one table must not hold up the others
                            if table is None:
                                raise
                            await self._park(session, table, event, error)
                            handled = 0
                        if handled:
                            credited += 1
                            self._checkpointed = event.position  # in the credit's transaction
                    self._position = event.position
                self._position = page.last_position
                if page.caught_up:
                    # Caught up: what commits later is the next wake-up's or poll's (a read
                    # for nothing here cost a statement per wake-up).
                    break
            now = time.monotonic()
            idle_for = now - self._idle_saved_at
            if self._position != self._checkpointed and idle_for >= IDLE_CHECKPOINT_SECONDS:
                # The rest changed nothing: just remember it was read.
                await session.save_checkpoint(self.name, self._position)
                self._checkpointed = self._position
                self._idle_saved_at = now
        return credited

    async def _park(
        self,
        session: StoreSession,
        table: str,
        event: RecordedEvent,
        error: Exception | None,
    ) -> None:
        """Set ``event`` aside behind the table's earlier parked events, moving the checkpoint
        past it in the same transaction, so that the log's other tables go on."""
        assert self._parked is not None
        await session.rollback()  # whatever the failed attempt left open
        async with session.transaction():
            if error is None:
                await session.add_pending_position(RESULTS_PROCESS, table, event.position)
            else:
                failure = await session.record_failure(
                    RESULTS_PROCESS, table, error, self.clock(), [event.position]
                )
                _logger.error(
                    "results process failed at table %s (position %d): %s (failure %d in a row;"
                    " its events wait, the other tables go on)",
                    table,
                    event.position,
                    type(error).__name__,
                    failure.failures,
                )
            await session.save_checkpoint(self.name, event.position)
        self._parked.add(table)
        self._checkpointed = event.position
        self.reconcile_wanted = error is not None

    async def _retry_parked(self, session: StoreSession) -> int:
        """Try the parked tables whose back-off is over; returns the deals credited."""
        failures = await session.failing_tables(RESULTS_PROCESS)
        self._parked = {failure.table_id for failure in failures}
        credited = 0
        for failure in failures:
            if failure.retry_at_ms <= self.clock():
                credited += await self._retry_table(session, failure)
        return credited

    async def _retry_table(self, session: StoreSession, failure: TableFailure) -> int:
        assert self._parked is not None
        credited = 0
        for position in failure.pending_positions:
            batch = await session.read_all(position - 1, 1)
            try:
                if batch and batch[0].position == position:
                    credited += await self._handle(session, batch[0])
            except self._unhandled:
                raise
            except Exception as error:
                await session.rollback()
                async with session.transaction():
                    again = await session.record_failure(
                        RESULTS_PROCESS, failure.table_id, error, self.clock()
                    )
                _logger.error(
                    "results process failed again at table %s: %s (failure %d in a row)",
                    failure.table_id,
                    type(error).__name__,
                    again.failures,
                )
                return credited
            await session.remove_pending_position(RESULTS_PROCESS, failure.table_id, position)
        async with session.transaction():
            if await session.pending_count(RESULTS_PROCESS, failure.table_id) == 0:
                await session.clear_failure(RESULTS_PROCESS, failure.table_id)
                self._parked.discard(failure.table_id)
                _logger.warning("results process: table %s is credited again", failure.table_id)
        return credited

    async def _tournament_of(self, session: StoreSession, event: RecordedEvent) -> uuid.UUID | None:
        table = _table_of(event)
        if table is None:
            return None
        if table in self._tournament_by_table:
            self._tournament_by_table.move_to_end(table)
            return self._tournament_by_table[table]
        found = await session.tournament_of_table(table)
        self._tournament_by_table[table] = found
        if len(self._tournament_by_table) > TOURNAMENT_OF_TABLE_CACHE_SIZE:
            self._tournament_by_table.popitem(last=False)
        return found

    async def _handle(self, session: StoreSession, event: RecordedEvent) -> int:
        tournament_id = await self._tournament_of(session, event)
        if tournament_id is None:
            return 0
        self.crash_hook("read")
        scored = self.store_decode(event)
        assert isinstance(scored, DealScored)
        table_id = uuid.UUID(event.stream_id.removeprefix("table-"))
        command = CreditDeal(table_id, scored.deal_number, scored.totals, event.position)
        for _attempt in range(CONFLICT_RETRIES):
            try:
                credited, seated_next = await self._credit(session, tournament_id, command, event)
            except ConcurrencyConflict:
                # A registration, a cancellation or another writer moved the stream: decide
                # again (on a cancelled tournament, the deal counts for nothing).
                continue
            self.crash_hook("committed")
            if seated_next:
                await self.tournaments.ensure_round_tables(tournament_id)
                self.crash_hook("tables")
            return 1 if credited else 0
        raise ConcurrencyConflict(stream_id_for(tournament_id), -1, -1)

    async def _ends_set(self, session: StoreSession, scored: RecordedEvent) -> bool:
        """Whether the deal ``scored`` (its ``DealScored``) ended its open-face table's set. The
        set's end is the ``SeriesCompleted`` the same append records right after the set's last
        ``DealScored`` (``sapsam.domain.open_face.table_decide``), so the stream's next event
        answers, one row read: not the whole table loaded (a full replay of its stream in a
        process that does not serve it) per credited deal. A closed table plays no sets (False)."""
        following = await session.read_stream(
            scored.stream_id, scored.version + 1, scored.version + 1
        )
        return bool(following) and following[0].type == SeriesCompleted.TYPE

    def store_decode(self, event: RecordedEvent) -> Event:
        """A table event, decoded."""
        return self.tournaments.tables.decode(event)

    async def _credit(
        self,
        session: StoreSession,
        tournament_id: uuid.UUID,
        command: CreditDeal,
        event: RecordedEvent,
    ) -> tuple[bool, bool]:
        """In one transaction: the credit (and the next round's seating) and the checkpoint.
        Whether the deal was credited now (not before, nor after a cancellation), and whether
        the next round was seated."""
        async with session.transaction():
            state = await self.tournaments.load(tournament_id, session)
            if state.plays_sets:  # open face: a table's round ends with its set
                ends = await self._ends_set(session, event)
                command = dataclasses.replace(command, set_over=ends)
            try:
                events = decide(state, command)
            except DomainError as error:
                if error.reason not in (Reason.ALREADY_CREDITED, Reason.TOURNAMENT_CANCELLED):
                    raise
                # Credited before (e.g. a restored checkpoint), or a deal finished after the
                # tournament was cancelled (it counts for nothing): only move on.
                events = []
            after = state
            for produced in events:
                after = evolve(after, produced)
            secrets = SecretChanges()
            # A round completing during a pause is followed by the next one at the resume.
            seated_next = events and after.phase is TournamentPhase.BETWEEN_ROUNDS
            if seated_next:
                next_round, secrets = await self.tournaments.next_round_command(session, after)
                events += decide(after, next_round)
            self.crash_hook("decided")
            if events:
                await session.append(
                    stream_id_for(tournament_id),
                    state.version,
                    [self.tournaments.encode(item) for item in events],
                    f"credit/{command.table_id}/{command.deal_number}",
                    "results",
                    response={"tournament_id": str(tournament_id)},
                    secrets=secrets,
                )
            self.crash_hook("appended")
            await session.save_checkpoint(self.name, event.position)
            self.crash_hook("checkpointed")
        return bool(events), bool(seated_next)

    async def run(self, stop: StopSignal, poll_seconds: float = 1.0) -> None:
        """Follow the log until ``stop`` is set: take the lock, reconcile, then handle events
        as they commit (woken by NOTIFY, polling every ``poll_seconds`` otherwise). Every wait
        ends as soon as ``stop`` is set."""
        needs_reconcile = True
        # Woken only by scored deals: nothing else it reads needs handling at once.
        async for _wakeup in self.store.follow_log(
            FOLLOWER_LOCK_KEY, stop, poll_seconds, FOLLOW_PAUSE_SECONDS, (DealScored.TYPE,)
        ):
            try:
                if needs_reconcile or self.reconcile_wanted:
                    # At the start, and after a failure (which may have come between a round's
                    # seating and its tables): finish every round's set-up.
                    needs_reconcile = self.reconcile_wanted = False
                    await self.reconcile()
                await self.process_available()
            except self._step_failures as error:
                _logger.error("results process step failed: %s", type(error).__name__)
                needs_reconcile = True


def _table_of(event: RecordedEvent) -> str | None:
    """The table a scored deal belongs to (None for any other event)."""
    if event.type != DealScored.TYPE or not event.stream_id.startswith("table-"):
        return None
    return event.stream_id.removeprefix("table-")

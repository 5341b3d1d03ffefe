"""Running a table's commands against the log: the one way they reach it, one transaction each.

``TableRunner`` loads a table (the stream, folded), decides a plan's commands on it and appends the
events with the stream version it decided on, together with the read models and the deal secrets,
in the append's transaction. ``sapsam.app.tables.TableService`` builds on it, one plan per
command. What it keeps lives beside it: the remembered tables (``sapsam.app.table_memory``), the
secret seeds (``sapsam.app.secret_seeds``), the per-table lock (``sapsam.app.table_locks``); what
a plan and an outcome are, in ``sapsam.app.table_plans``.

Retries: every mutating call takes a request id. A repeated id returns the original outcome and
appends nothing (the store keeps processed ids durably). A lost race (another writer appended
first) is retried against the fresh state a few times, then reported as a conflict.

Memory: each process remembers the tables it served, folded, and decides a command on that state
without reading the log first; the append is the check (a version taken meanwhile is a conflict,
a processed request id a retry). Only a refusal is re-checked against the log before it is
returned, so a stale memory costs a retry, never a wrong answer. A write is thus one transaction
and no read, whichever process served the table last.

Reads (``load``, and ``TableService``'s events and hands) are answered from that memory with no
statement when the copy is *current*: the table's write stamp (``Store.write_stamp``, shared by
every process of the machine, bumped by every append before it can be acknowledged) still holds
the value it had when the copy was made. Otherwise the log's tail is read, as before. So a read
never returns a state older than a write whose acknowledgment its caller could have seen, on
whichever worker or server it lands (``sapsam.store.write_stamps``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from sapsam import fairness
from sapsam.app.open_face_play import require_family_move, settling_step
from sapsam.app.receipts import ReceiptSigner, sign_if_enabled
from sapsam.app.secret_seeds import SecretSeeds, secret_changes
from sapsam.app.solver_processes import SolverProcesses
from sapsam.app.store_interface import Store, StoreSession
from sapsam.app.table_locks import TableLocks
from sapsam.app.table_memory import TableMemory
from sapsam.app.table_plans import (
    CONFLICT_RETRIES,
    STREAM_PREFIX,
    DealtFor,
    Plan,
    PlanFor,
    SeatDealt,
    SecretMissingError,
    StaleVersionError,
    TableNotFoundError,
    TableOutcome,
    stream_id_for,
    wall_clock_ms,
)
from sapsam.app.tournament_pause import PausedTournamentGate
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.event_codec import DEFAULT_CODEC, EventCodec
from sapsam.domain.events import Event
from sapsam.domain.table import INITIAL_STATE, TableState, decide_folded, evolve
from sapsam.log.records import ConcurrencyConflict, NewEvent, RecordedEvent, RequestIdReused


class TableRunner:
    """Runs plans of table commands against the log, over a ``Store``
    (``sapsam.app.store_interface``), remembering folded tables and secret seeds."""

    def __init__(
        self,
        store: Store,
        clock: Callable[[], int] = wall_clock_ms,
        codec: EventCodec = DEFAULT_CODEC,
        receipts: ReceiptSigner | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.codec = codec
        self.receipts = receipts
        """Signs each outcome's receipt (None: no receipts)."""
        self.memory = TableMemory()
        """The tables this process served, folded: decided on, and read from when current."""
        self.secrets = SecretSeeds()
        """The secret seeds of running deals and lots, read from ``deal_secrets`` once."""
        self.locks = TableLocks()
        """One command of a table at a time in this process (see _execute)."""
        self.deal_seeds: Callable[[], bytes] = fairness.new_seed
        """Where a deal's secret seed comes from (``StartDeal``): the system's CSPRNG. Only a
        test sets another source, to deal chosen cards (an open-face deal that earns a
        Fantasyland); the seed is committed and revealed as any other."""
        self.paused_tournaments = PausedTournamentGate()
        """Refuses a deal's start at a paused tournament's table (``app.tournament_pause``)."""
        self.on_appended: Callable[[str, Sequence[RecordedEvent]], None] | None = None
        """Told of every append of this runner once it is committed (the stream, its events):
        the server's live feed sends them to this process's watchers without reading them."""
        self.feed_listener: Callable[[], str | None] = lambda: None
        """The wake-up listener of the feed ``on_appended`` hands the appends to (its id, None
        while it listens to nothing): the append sends it no wake-up, only other processes."""
        self.lagging_reads: Callable[[], Store] = lambda: self.store
        """Where a read that may lag goes (ListTables): this store, unless the server reads
        such reads from a standby (``sapsam.store.standby_reads``)."""
        self.solvers = SolverProcesses()
        """The solver processes that answer ``GetSuggestion`` (``sapsam.app.suggestions``),
        started on the first; the server sets its own size and bound and stops them."""

    # -- reads ---------------------------------------------------------------------------------

    async def load(self, table_id: uuid.UUID, session: StoreSession | None = None) -> TableState:
        """The table as its events describe it now; ``TableNotFoundError`` if it has none.

        From memory when the remembered copy is current (no statement), else from the log."""
        current = self.current_copy(table_id)
        if current is not None:
            return current
        return await self.load_from_log(table_id, session)

    async def load_from_log(
        self, table_id: uuid.UUID, session: StoreSession | None = None
    ) -> TableState:
        """The table as the log describes it now: the remembered state plus the log's tail."""
        if session is None:
            async with self.store.session() as own:
                return await self.load_from_log(table_id, own)
        stream_id = stream_id_for(table_id)
        stamp = self.store.write_stamp(stream_id)  # before the read: see write_stamps
        state = self.memory.state(table_id) or INITIAL_STATE
        tail = await session.read_stream(stream_id, state.version + 1)
        decoded = [self.decode(recorded) for recorded in tail]
        for event in decoded:
            state = evolve(state, event)
        if state.table_id is None:
            raise TableNotFoundError(table_id)
        self.memory.remember(table_id, state, stamp, tail, decoded)
        return state

    def current_copy(self, table_id: uuid.UUID) -> TableState | None:
        """The remembered state if no write to the table can have been acknowledged since it
        was made (its write stamp is unchanged), else None."""
        return self.memory.copy_current_at(
            table_id, self.store.write_stamp(stream_id_for(table_id))
        )

    async def load_many(
        self, table_ids: Sequence[uuid.UUID], session: StoreSession, remember: bool = True
    ) -> list[TableState]:
        """Each table as :meth:`load` gives it, all their log tails read in one statement.
        ``remember=False`` for a session that may lag (a standby's): what it read is not kept
        as this process's current copy, which it may not be."""
        current = {table_id: self.current_copy(table_id) for table_id in table_ids}
        stale = [table_id for table_id in table_ids if current[table_id] is None]
        stamps = {table_id: self.store.write_stamp(stream_id_for(table_id)) for table_id in stale}
        cached = {table_id: self.memory.state(table_id) or INITIAL_STATE for table_id in stale}
        tails = (
            await session.read_stream_tails(
                [(stream_id_for(table_id), cached[table_id].version + 1) for table_id in stale]
            )
            if stale
            else {}
        )
        states = []
        for table_id in table_ids:
            state = current[table_id]
            if state is None:
                state = cached[table_id]
                tail = tails[stream_id_for(table_id)]
                decoded = [self.decode(recorded) for recorded in tail]
                for event in decoded:
                    state = evolve(state, event)
                if state.table_id is None:
                    raise TableNotFoundError(table_id)
                if remember:
                    self.memory.remember(table_id, state, stamps[table_id], tail, decoded)
            states.append(state)
        return states

    def decode(self, recorded: RecordedEvent) -> Event:
        """The domain event for a recorded one."""
        return self.codec.decode(recorded.type, recorded.schema_version, recorded.data)

    def decode_remembered(self, table_id: uuid.UUID, recorded: RecordedEvent) -> Event:
        """The domain event for one of the table's recorded events: as this process decided or
        decoded it, while it is among the remembered ones, else decoded now."""
        remembered = self.memory.decoded(table_id, recorded)
        return self.decode(recorded) if remembered is None else remembered

    # -- the one way commands reach the log ---------------------------------------------------

    async def _execute(
        self,
        table_id: uuid.UUID,
        actor: str,
        request_id: str,
        plan: PlanFor,
        new_table: bool = False,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Decide ``plan`` and append it, once no other command of this table runs here: the
        table's lock (``sapsam.app.table_locks``, which says why) is taken before a pooled
        connection is."""
        async with self.locks.of(table_id):
            return await self._execute_now(
                table_id, actor, request_id, plan, new_table, expected_version, request_digest
            )

    async def _seat_move(
        self,
        table_id: uuid.UUID,
        player_id: str,
        request_id: str,
        commands: Callable[[SeatDealt], list[object]],
        expected_version: int | None,
        request_digest: bytes | None,
        dealt: DealtFor | None = None,
    ) -> TableOutcome:
        """A seat's move in a deal, the one path of every family's player commands: on the state
        it is decided on, the seat's :class:`SeatDealt` is read (``dealt``; none when the move
        needs no cards nor seed), its ``commands`` made with it, and they are run as
        ``player_id``'s (:meth:`_execute`), the seed revealed in the same append if they settle
        the deal."""

        async def plan(state: TableState, session: StoreSession) -> Plan:
            seat_dealt = SeatDealt() if dealt is None else await dealt(state, session)
            return Plan(commands(seat_dealt), seed_to_reveal=seat_dealt.seed)

        return await self._execute(
            table_id,
            player_id,
            request_id,
            plan,
            expected_version=expected_version,
            request_digest=request_digest,
        )

    async def _execute_now(
        self,
        table_id: uuid.UUID,
        actor: str,
        request_id: str,
        plan: PlanFor,
        new_table: bool,
        expected_version: int | None,
        request_digest: bytes | None,
    ) -> TableOutcome:
        stream_id = stream_id_for(table_id)
        scoped_request_id = f"{actor}/{request_id}"
        decided_on: int | None = None
        for _attempt in range(CONFLICT_RETRIES):
            async with self.store.session() as session:
                # Optimistic: decide on the state this process last saw, without asking the
                # database first. The append is what checks it: it refuses a version someone
                # else took (a conflict: reload and decide again) and a request id already
                # processed (answered as a retry). Only a refusal is re-checked against the log
                # before it is returned, so a stale memory never refuses a valid command.
                state = None if new_table else self.memory.state(table_id)
                if state is None:
                    earlier = await self._earlier(
                        table_id, scoped_request_id, session, request_digest
                    )
                    if earlier is not None:
                        return earlier
                    state = (
                        INITIAL_STATE if new_table else await self.load_from_log(table_id, session)
                    )
                    try:
                        decided = await self._decide(
                            state, plan, session, stream_id, expected_version
                        )
                    except SecretMissingError:
                        # Another process settled the deal (its seed published and forgotten)
                        # between our log read and our secret read: a lost race, decide again.
                        self.forget(table_id)
                        continue
                else:
                    try:
                        decided = await self._decide(
                            state, plan, session, stream_id, expected_version
                        )
                    except (DomainError, StaleVersionError, SecretMissingError):
                        earlier = await self._earlier(
                            table_id, scoped_request_id, session, request_digest
                        )
                        if earlier is not None:
                            return earlier
                        state = await self.load_from_log(table_id, session)
                        try:
                            decided = await self._decide(
                                state, plan, session, stream_id, expected_version
                            )
                        except SecretMissingError:  # as above: a lost race
                            self.forget(table_id)
                            continue
                events, final_state, planned = decided
                decided_on = state.version
                stamp_before = self.store.write_stamp(stream_id)
                try:
                    # In the session already held: a second connection per write would halve
                    # what the pool can serve.
                    result = await session.append(
                        stream_id,
                        decided_on,
                        [NewEvent(*_encoded(self.codec, event)) for event in events],
                        scoped_request_id,
                        actor,
                        # str(table_id) from the stream id already made (str(uuid) is Python).
                        response={"table_id": stream_id.removeprefix(STREAM_PREFIX)},
                        secrets=secret_changes(planned.keep_secret, events),
                        request_digest=request_digest,
                        handed_to=None if self.on_appended is None else self.feed_listener(),
                        # Type listeners (the results process, for DealScored) credit tournament
                        # tables only: a table known to be of none spares them the wake-up.
                        wake_type_listeners=not self.paused_tournaments.of_no_tournament(table_id),
                    )
                except RequestIdReused:
                    result = None
                except ConcurrencyConflict:
                    self.forget(table_id)
                    if expected_version is not None:
                        raise StaleVersionError(
                            stream_id, expected_version, await session.stream_version(stream_id)
                        ) from None
                    continue
                if result is None or result.replayed:
                    # The request id was processed meanwhile (a retry racing its original, or
                    # one decided on this process's memory): answer with the original outcome.
                    self.forget(table_id)
                    earlier = await self._earlier(
                        table_id, scoped_request_id, session, request_digest
                    )
                    if earlier is None:  # pragma: no cover - the append just found it
                        raise RuntimeError(f"request {scoped_request_id!r} vanished")
                    return earlier
            own_stamp = self.store.stamp_after_own_write(stream_id, stamp_before)
            self.memory.remember(table_id, final_state, own_stamp, result.events, events)
            self.secrets.forget_published(table_id, result.events)
            if self.on_appended is not None:
                self.on_appended(stream_id, result.events)
            return TableOutcome(
                table_id,
                final_state,
                result.events,
                replayed=False,
                receipt=sign_if_enabled(self.receipts, result.events),
            )
        # Every attempt lost its race: report the version last decided on and the log's now.
        async with self.store.session() as session:
            current = await session.stream_version(stream_id)
        raise ConcurrencyConflict(stream_id, current if decided_on is None else decided_on, current)

    async def _decide(
        self,
        state: TableState,
        plan: PlanFor,
        session: StoreSession,
        stream_id: str,
        expected_version: int | None,
    ) -> tuple[list[Event], TableState, Plan]:
        """The events a plan's commands produce on ``state``, the state after them, the plan."""
        if expected_version is not None and expected_version != state.version:
            # An etag check: refuse rather than retry, the caller decided on old state.
            raise StaleVersionError(stream_id, expected_version, state.version)
        planned = await plan(state, session)
        events: list[Event] = []
        after = state
        for command in planned.commands:
            require_family_move(after, command)
            # The events and the state after them, folded once (a family may fold as it decides).
            produced, after = decide_folded(after, command)
            events.extend(produced)
        seed = planned.seed_to_reveal
        if seed is not None:
            # What the service does itself once the commands made it due joins this append (its
            # family's: the closed game's seed reveal and score once every seat is settled; open
            # face's next street, forced placements, then the reveal: app.open_face_play).
            now = self.clock()
            while (settled := settling_step(after, seed, now)) is not None:
                extra, after = settled
                events.extend(extra)
        return events, after, planned

    async def _earlier(
        self,
        table_id: uuid.UUID,
        scoped_request_id: str,
        session: StoreSession,
        request_digest: bytes | None,
    ) -> TableOutcome | None:
        """The original outcome of an already processed request id, if it was processed.

        Raises REQUEST_ID_REUSED when the id was used for another table or, by its digest, for
        another request: answering that with the first result would hide the caller's bug.
        """
        earlier = await session.find_processed_request(scoped_request_id)
        if earlier is None:
            return None
        # About to acknowledge a write made earlier, perhaps by a process that died before it
        # could: copies made before now may lack it, so they stop being current.
        self.store.bump_write_stamp(stream_id_for(table_id))
        if earlier.stream_id == stream_id_for(table_id) and not earlier.same_request(
            earlier.stream_id, request_digest
        ):
            raise DomainError(
                Reason.REQUEST_ID_REUSED,
                "this request id was already used for a different request; a retry must repeat"
                " the request unchanged, and a new request needs a fresh request id",
                field="request_id",
            )
        return await self._replayed(table_id, earlier.stream_id, earlier.result, session)

    def forget(self, table_id: uuid.UUID) -> None:
        """Drop the remembered state of a table: the next use reads it from the log."""
        self.memory.forget(table_id)

    async def _replayed(
        self, table_id: uuid.UUID, stream_id: str, original: Any, session: StoreSession
    ) -> TableOutcome:
        if stream_id != stream_id_for(table_id):
            raise DomainError(
                Reason.REQUEST_ID_REUSED,
                "this request id was already used for another table; use a fresh one",
                field="request_id",
            )
        recorded = await session.read_stream(
            stream_id, original.first_version, original.last_version
        )
        state = await self.load_from_log(table_id, session)
        return TableOutcome(
            table_id,
            state,
            tuple(recorded),
            replayed=True,
            receipt=sign_if_enabled(self.receipts, recorded),
        )


def _encoded(codec: EventCodec, event: Event) -> tuple[str, dict[str, Any], int]:
    type_name, schema_version, data = codec.encode(event)
    return type_name, data, schema_version

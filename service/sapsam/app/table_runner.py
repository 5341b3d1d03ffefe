"""Running a table's commands against the log: the one way they reach it, one transaction each.

``TableRunner`` loads a table (the stream, folded), decides a plan's commands on it and appends the
events with the stream version it decided on, together with the read models and the deal secrets,
in the append's transaction. ``sapsam.app.tables.TableService`` builds on it, one plan per
command.

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

import asyncio
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sapsam import fairness
from sapsam.app.receipts import IssuedReceipt, ReceiptSigner, sign_if_enabled
from sapsam.app.store_interface import SecretChanges, Store, StoreSession
from sapsam.domain.commands import RevealSeed
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DEFAULT_CODEC, DealerChosen, Event, EventCodec, SeedRevealed
from sapsam.domain.table import INITIAL_STATE, TablePhase, TableState, decide, evolve, fold
from sapsam.log.records import ConcurrencyConflict, NewEvent, RecordedEvent, RequestIdReused
from sapsam.rules.cards import Card

STREAM_PREFIX = "table-"
# The deal number under which the dealer lot's seed waits in ``deal_secrets`` until it is drawn.
LOT_SECRET_NUMBER = 0
CONFLICT_RETRIES = 5
CACHE_SIZE = 4096
TAIL_EVENTS = 48
"""Recorded events kept per remembered table (its latest ones, up to its version): two deals of a
four-seat table, so a deal's result is read from memory."""


def stream_id_for(table_id: uuid.UUID) -> str:
    """The log stream of a table."""
    return f"{STREAM_PREFIX}{table_id}"


def wall_clock_ms() -> int:
    """Unix time in milliseconds: the only clock the game reads, here in the service layer."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class TableOutcome:
    """The result of a command: the table after it and what it appended.

    ``events`` are the events this request appended (for a retried request id, the events of the
    original append, read back from the log); ``replayed`` tells a retry apart. ``receipt``: the
    signed receipt of ``events`` (``sapsam.app.receipts``; the same bytes for a retry), None
    when the service signs none.
    """

    table_id: uuid.UUID
    state: TableState
    events: tuple[RecordedEvent, ...]
    replayed: bool
    receipt: IssuedReceipt | None = None

    @property
    def version(self) -> int:
        """The table's stream version after this command (its etag)."""
        return self.events[-1].version if self.events else self.state.version


class StaleVersionError(ConcurrencyConflict):
    """The caller's ``expected_version`` (its etag) is not the table's version: nothing was done."""

    reason = "VERSION_MISMATCH"


class TableNotFoundError(DomainError):
    """No table has that id."""

    def __init__(self, table_id: uuid.UUID) -> None:
        super().__init__(Reason.TABLE_NOT_FOUND, f"no table {table_id}", field="table")


@dataclass
class Plan:
    """Commands to decide in order, and a secret to keep in the append's transaction.

    ``keep_secret``: (number, seed) of a new secret (the dealer lot's, a deal's), stored with
    the append. ``seed_to_reveal``: the deal's secret seed, when the commands may settle the
    last seat; if they do, the seed reveal and the scoring join the same append.
    """

    commands: list[object]
    keep_secret: tuple[int, bytes] | None = None
    seed_to_reveal: bytes | None = None


class SecretMissingError(RuntimeError):
    """A running deal's seed is not in ``deal_secrets``: the state decided on is stale (the deal
    was settled meanwhile), or, on the log's current state, the database lost it."""


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
        # Folded states by table. A read folds only the log's tail after the remembered version;
        # a command is decided on the remembered state and the append checks it (see _execute).
        # No lock: every use runs on the worker's one event loop, and none awaits in between.
        self._cache: OrderedDict[uuid.UUID, TableState] = OrderedDict()
        # Each remembered table's write stamp when its copy was made (absent: not known to be
        # current, reads go to the log) and its latest recorded events, ending at its version.
        self._stamps: dict[uuid.UUID, int] = {}
        self._tails: dict[uuid.UUID, tuple[RecordedEvent, ...]] = {}
        # Secret seeds of running deals (and lots) by (table, deal number), as read from or
        # written to ``deal_secrets``: a seed never changes, so it is read once per process, not
        # at every cut, hand and reveal. Dropped once the log publishes it.
        self._secrets: OrderedDict[tuple[uuid.UUID, int], bytes] = OrderedDict()
        # One command of a table at a time in this process (see _execute); a lock lives while
        # a command holds or awaits it.
        self._locks: weakref.WeakValueDictionary[uuid.UUID, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self.on_appended: Callable[[str, Sequence[RecordedEvent]], None] | None = None
        """Told of every append of this runner once it is committed (the stream, its events):
        the server's live feed sends them to this process's watchers without reading them."""

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
        state = self._cache.get(table_id, INITIAL_STATE)
        tail = await session.read_stream(stream_id, state.version + 1)
        for recorded in tail:
            state = evolve(state, self.decode(recorded))
        if state.table_id is None:
            raise TableNotFoundError(table_id)
        self._remember(table_id, state, stamp, tail)
        return state

    def current_copy(self, table_id: uuid.UUID) -> TableState | None:
        """The remembered state if no write to the table can have been acknowledged since it
        was made (its write stamp is unchanged), else None."""
        return self.copy_current_at(table_id, self.store.write_stamp(stream_id_for(table_id)))

    def copy_current_at(self, table_id: uuid.UUID, stamp: int) -> TableState | None:
        """The remembered state if it was made at write stamp ``stamp`` (one just read), else
        None: :meth:`current_copy` for a caller that needs the stamp it compared with."""
        if self._stamps.get(table_id) != stamp:
            return None
        return self._cache.get(table_id)

    def events_in_memory(
        self, table_id: uuid.UUID, from_version: int, to_version: int | None
    ) -> list[RecordedEvent] | None:
        """The table's events from ``from_version`` (to ``to_version``) if the copy is current
        and they are among the remembered ones, else None (read the log)."""
        state = self.current_copy(table_id)
        if state is None:
            return None
        return self.remembered_events(table_id, state, from_version, to_version)

    def remembered_events(
        self, table_id: uuid.UUID, state: TableState, from_version: int, to_version: int | None
    ) -> list[RecordedEvent] | None:
        """The events from ``from_version`` (to ``to_version``) of ``state``, the table's
        remembered copy, if they are among the remembered ones, else None."""
        tail = self._tails.get(table_id, ())
        if from_version > state.version or (to_version is not None and to_version < from_version):
            return []
        if not tail or tail[0].version > max(from_version, 1):
            return None
        return [
            recorded
            for recorded in tail
            if recorded.version >= from_version
            and (to_version is None or recorded.version <= to_version)
        ]

    async def load_many(
        self, table_ids: Sequence[uuid.UUID], session: StoreSession
    ) -> list[TableState]:
        """Each table as :meth:`load` gives it, all their log tails read in one statement."""
        current = {table_id: self.current_copy(table_id) for table_id in table_ids}
        stale = [table_id for table_id in table_ids if current[table_id] is None]
        stamps = {table_id: self.store.write_stamp(stream_id_for(table_id)) for table_id in stale}
        cached = {table_id: self._cache.get(table_id, INITIAL_STATE) for table_id in stale}
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
                for recorded in tail:
                    state = evolve(state, self.decode(recorded))
                if state.table_id is None:
                    raise TableNotFoundError(table_id)
                self._remember(table_id, state, stamps[table_id], tail)
            states.append(state)
        return states

    def decode(self, recorded: RecordedEvent) -> Event:
        """The domain event for a recorded one."""
        return self.codec.decode(recorded.type, recorded.schema_version, recorded.data)

    # -- the one way commands reach the log ---------------------------------------------------

    async def _execute(
        self,
        table_id: uuid.UUID,
        actor: str,
        request_id: str,
        plan: Callable[[TableState, StoreSession], Awaitable[Plan]],
        new_table: bool = False,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Decide ``plan`` and append it, once no other command of this table runs here.

        A command decides on this process's copy and the append checks it (optimistic); two at
        once (four seats acting within a think time of each other) both decide on the same
        version and one loses: a failed append, a look-up of its request id and a reload, then
        it decides again (up to five times, then ABORTED). One at a time per table costs a wait
        of one append instead, taken before a pooled connection is (bench/capacity.py at 30
        tables: statements per call 3.46 -> 2.79; docs/performance.md). Other processes stay
        optimistic.
        """
        lock = self._locks.get(table_id)
        if lock is None:
            lock = self._locks[table_id] = asyncio.Lock()
        async with lock:
            return await self._execute_now(
                table_id, actor, request_id, plan, new_table, expected_version, request_digest
            )

    async def _execute_now(
        self,
        table_id: uuid.UUID,
        actor: str,
        request_id: str,
        plan: Callable[[TableState, StoreSession], Awaitable[Plan]],
        new_table: bool,
        expected_version: int | None,
        request_digest: bytes | None,
    ) -> TableOutcome:
        stream_id = stream_id_for(table_id)
        scoped_request_id = f"{actor}/{request_id}"
        for _attempt in range(CONFLICT_RETRIES):
            async with self.store.session() as session:
                # Optimistic: decide on the state this process last saw, without asking the
                # database first. The append is what checks it: it refuses a version someone
                # else took (a conflict: reload and decide again) and a request id already
                # processed (answered as a retry). Only a refusal is re-checked against the log
                # before it is returned, so a stale memory never refuses a valid command.
                state = None if new_table else self._cached(table_id)
                if state is None:
                    earlier = await self._earlier(
                        table_id, scoped_request_id, session, request_digest
                    )
                    if earlier is not None:
                        return earlier
                    state = (
                        INITIAL_STATE if new_table else await self.load_from_log(table_id, session)
                    )
                    decided = await self._decide(state, plan, session, stream_id, expected_version)
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
                        decided = await self._decide(
                            state, plan, session, stream_id, expected_version
                        )
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
                        response={"table_id": str(table_id)},
                        secrets=_secret_changes(planned.keep_secret, events),
                        request_digest=request_digest,
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
            self._remember(table_id, final_state, own_stamp, result.events)
            self._forget_published_secrets(table_id, result.events)
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
        raise ConcurrencyConflict(stream_id, decided_on, current)

    async def _decide(
        self,
        state: TableState,
        plan: Callable[[TableState, StoreSession], Awaitable[Plan]],
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
            produced = decide(after, command)
            after = fold(produced, after)
            events.extend(produced)
        seed = planned.seed_to_reveal
        if seed is not None and after.phase is TablePhase.AWAITING_SEED:
            # Every seat is settled: the seed reveal and the score join this append.
            extra = decide(after, RevealSeed(seed=seed))
            after = fold(extra, after)
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

    async def _secret_seed(self, session: StoreSession, table_id: uuid.UUID, number: int) -> bytes:
        """A running deal's (or, for number 0, the dealer lot's) secret seed."""
        seed = self._secrets.get((table_id, number))
        if seed is None:
            seed = await session.load_secret(stream_id_for(table_id), number)
            if seed is None:
                raise SecretMissingError(f"the seed of deal {number} of table {table_id} is gone")
            self._remember_secret(table_id, number, seed)
        return seed

    def _remember_secret(self, table_id: uuid.UUID, number: int, seed: bytes) -> None:
        self._secrets[(table_id, number)] = seed
        self._secrets.move_to_end((table_id, number))
        while len(self._secrets) > CACHE_SIZE:
            self._secrets.popitem(last=False)

    def _forget_published_secrets(
        self, table_id: uuid.UUID, recorded: Sequence[RecordedEvent]
    ) -> None:
        for event in recorded:
            number = _published_secret_recorded(event)
            if number is not None:
                self._secrets.pop((table_id, number), None)

    def _cached(self, table_id: uuid.UUID) -> TableState | None:
        return self._cache.get(table_id)

    def forget(self, table_id: uuid.UUID) -> None:
        """Drop the remembered state of a table: the next use reads it from the log."""
        self._cache.pop(table_id, None)
        self._stamps.pop(table_id, None)
        self._tails.pop(table_id, None)

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

    def _remember(
        self,
        table_id: uuid.UUID,
        state: TableState,
        stamp: int | None = None,
        recorded: Sequence[RecordedEvent] = (),
    ) -> None:
        """Keep ``state`` unless a later one is remembered; ``stamp``: its write stamp (None: not
        known to be current); ``recorded``: events just read or written, ending at its version."""
        cached = self._cache.get(table_id)
        if cached is None or cached.version < state.version:
            self._cache[table_id] = state
            self._cache.move_to_end(table_id)
            if stamp is None:
                self._stamps.pop(table_id, None)
            else:
                self._stamps[table_id] = stamp
            self._tails[table_id] = _joined(self._tails.get(table_id, ()), recorded, state.version)
        elif cached.version == state.version:
            # The same state: the later stamp is the one more likely current (both are right).
            self._cache.move_to_end(table_id)
            known = self._stamps.get(table_id)
            if stamp is not None and (known is None or stamp > known):
                self._stamps[table_id] = stamp
            tail = self._tails.get(table_id, ())
            longer = not tail or (recorded and recorded[0].version < tail[0].version)
            if recorded and recorded[-1].version == state.version and longer:
                self._tails[table_id] = tuple(recorded[-TAIL_EVENTS:])
        while len(self._cache) > CACHE_SIZE:
            evicted, _ = self._cache.popitem(last=False)
            self._stamps.pop(evicted, None)
            self._tails.pop(evicted, None)


# -- helpers -------------------------------------------------------------------------------------


def _joined(
    tail: tuple[RecordedEvent, ...], recorded: Sequence[RecordedEvent], version: int
) -> tuple[RecordedEvent, ...]:
    """The latest ``TAIL_EVENTS`` events up to ``version``: ``recorded`` after ``tail`` when they
    follow on, ``recorded`` alone when they end at ``version``, else none (unknown)."""
    if not recorded or recorded[-1].version != version:
        return tail if tail and tail[-1].version == version else ()
    if tail and tail[-1].version + 1 == recorded[0].version:
        return (*tail, *recorded)[-TAIL_EVENTS:]
    return tuple(recorded[-TAIL_EVENTS:])


def _secret_changes(keep: tuple[int, bytes] | None, events: Sequence[Event]) -> SecretChanges:
    """In the append's transaction: keep the plan's new secret, and forget every secret the
    appended events publish — the lot seed with ``DealerChosen``, a deal's seed with
    ``SeedRevealed`` — so a secret is never in both places or in neither."""
    published = tuple(
        number for number in (_published_secret(event) for event in events) if number is not None
    )
    return SecretChanges(keep=() if keep is None else (keep,), forget=published)


def _published_secret(event: Event) -> int | None:
    """The secret an event publishes: 0 (the lot) for DealerChosen, the deal's number for
    SeedRevealed, else None."""
    if isinstance(event, DealerChosen):
        return LOT_SECRET_NUMBER
    if isinstance(event, SeedRevealed):
        return event.deal_number
    return None


def _published_secret_recorded(event: RecordedEvent) -> int | None:
    """``_published_secret`` of a recorded event, read from its data."""
    if event.type == DealerChosen.TYPE:
        return LOT_SECRET_NUMBER
    if event.type == SeedRevealed.TYPE:
        number = event.data["deal_number"]
        assert isinstance(number, int)
        return number
    return None


def _encoded(codec: EventCodec, event: Event) -> tuple[str, dict[str, Any], int]:
    type_name, schema_version, data = codec.encode(event)
    return type_name, data, schema_version


def dealt_hands(state: TableState, seed: bytes) -> tuple[tuple[Card, ...], ...]:
    deal = state.deal
    assert deal is not None and deal.cut_position is not None and state.table_id is not None
    return _hands_for_deal(
        seed,
        deal.contributions,
        state.table_id,
        deal.number,
        deal.cut_position,
        deal.dealer,
        state.seat_count,
    )


# Each seat's GetMyHand and RevealArrangement deals the same deck again (~120 us a time, eight
# times a four-seat deal): the hands of the last deals are kept, as their seeds already are.
_hands_for_deal = lru_cache(maxsize=256)(fairness.hands_for_deal)

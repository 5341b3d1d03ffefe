"""The tournament service: runs tournament commands against the log and sets up each round's tables.

Like the table service, each command loads the stream (``tournament-<uuid>``), lets the pure
aggregate decide, and appends with the version it decided on, with the read models and the secrets
in the append's transaction. It supplies what only the service knows: the time, one fresh seating
seed per round (kept in ``deal_secrets`` under the tournament's stream and the round number, its
commitment in ``TournamentCreated``; deleted in the transaction that reveals it), and the ids of
the tables it will create.

A round's tables are created through ``TableService`` after the round is seated in the log.
Every step there is idempotent — the table ids and request ids derive from the tournament, round
and table index — so ``ensure_round_tables`` can be run again after any crash and finishes the
job without doing anything twice.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from sapsam import fairness
from sapsam.app.receipts import IssuedReceipt, ReceiptSigner, sign_if_enabled
from sapsam.app.store_interface import SecretChanges, Store, StoreSession
from sapsam.app.tables import (
    TABLE_ID_NAMESPACE,
    TableNotFoundError,
    TableService,
    wall_clock_ms,
)
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.event_codec import EventCodec
from sapsam.domain.events import Event
from sapsam.domain.family import FramePhase
from sapsam.domain.tournament import (
    INITIAL_STATE,
    MAX_ROUNDS,
    CreateTournament,
    RegisterPlayer,
    SeatNextRound,
    StartTournament,
    TournamentPhase,
    TournamentState,
    UnregisterPlayer,
    decide,
    evolve,
    planned_table_count,
)
from sapsam.domain.tournament_events import TOURNAMENT_CODEC
from sapsam.domain.tournament_seating import seating_commitment
from sapsam.log.records import ConcurrencyConflict, NewEvent, RecordedEvent, RequestIdReused
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.ruleset import RuleSet

STREAM_PREFIX = "tournament-"

TOURNAMENT_ID_NAMESPACE = uuid.UUID("2d9b6c1e-8f47-4a53-b0c2-7e4f1a9d3c85")
TABLE_CREATOR = "operator"
CONFLICT_RETRIES = 5
CACHE_SIZE = 1024
_TO_SEAT: Final[frozenset[str]] = frozenset({FramePhase.SEATING, FramePhase.AWAITING_DEALER})
"""The frame's phases of a round's table still to be seated or to draw its dealer, whatever
its family (every family's phases hold the frame's names)."""


def stream_id_for(tournament_id: uuid.UUID) -> str:
    """The log stream of a tournament."""
    return f"{STREAM_PREFIX}{tournament_id}"


def round_table_request(tournament_id: uuid.UUID, round_number: int, index: int) -> str:
    """The request id that creates table ``index`` of a round (its table id follows from it)."""
    return f"tournament/{tournament_id}/round/{round_number}/table/{index}"


def round_table_id(tournament_id: uuid.UUID, round_number: int, index: int) -> uuid.UUID:
    """The id ``TableService.create_table`` gives the round's table ``index``."""
    request = round_table_request(tournament_id, round_number, index)
    return uuid.uuid5(TABLE_ID_NAMESPACE, f"{TABLE_CREATOR}/{request}")


@dataclass(frozen=True)
class TournamentOutcome:
    """A command's result: the tournament after it and the events it appended (or, for a retried
    request id, the original append's events). ``receipt``: their signed receipt
    (``sapsam.app.receipts``; the same bytes for a retry), None when the service signs none."""

    tournament_id: uuid.UUID
    state: TournamentState
    events: tuple[RecordedEvent, ...]
    replayed: bool
    receipt: IssuedReceipt | None = None


class TournamentNotFoundError(DomainError):
    """No tournament has that id."""

    def __init__(self, tournament_id: uuid.UUID) -> None:
        super().__init__(
            Reason.TOURNAMENT_NOT_FOUND, f"no tournament {tournament_id}", field="tournament"
        )


@dataclass(frozen=True)
class TournamentSettings:
    """What the operator chooses when creating a tournament."""

    name: str
    rule_set: RuleSet | OpenFaceRules
    """Either family's: an open-face rule set plays one set a table a round."""
    seats_per_table: int
    rounds: int
    deals_per_round: int
    registration_opens_ms: int
    registration_closes_ms: int
    max_entrants: int
    reseating: str = "random"
    tie_break: str = "none"


Plan = Callable[[TournamentState, StoreSession], Awaitable[tuple[object, SecretChanges]]]
"""A command's plan: the command to decide on the state, and the secrets to keep or forget."""


class TournamentService:
    """Runs tournament commands and sets up rounds, over a ``Store`` and a table service."""

    def __init__(
        self,
        store: Store,
        tables: TableService,
        clock: Callable[[], int] = wall_clock_ms,
        codec: EventCodec = TOURNAMENT_CODEC,
        receipts: ReceiptSigner | None = None,
    ) -> None:
        self.store = store
        self.tables = tables
        self.clock = clock
        self.codec = codec
        self.receipts = receipts
        """Signs each outcome's receipt (None: no receipts)."""
        # Folded states by tournament, so a load reads only the events after the cached version
        # (a long tournament is credited deal by deal). Only committed reads are cached, and every
        # load still reads the stream's tail, so the cache can never serve an old state.
        # No lock: every use runs on the worker's one event loop.
        self._cache: OrderedDict[uuid.UUID, TournamentState] = OrderedDict()

    # -- reads ---------------------------------------------------------------------------------

    def decode(self, recorded: RecordedEvent) -> Event:
        """The domain event of a recorded tournament event."""
        return self.codec.decode(recorded.type, recorded.schema_version, recorded.data)

    async def load(
        self, tournament_id: uuid.UUID, session: StoreSession | None = None
    ) -> TournamentState:
        """The tournament as its events describe it; ``TournamentNotFoundError`` if none."""
        if session is None:
            async with self.store.session() as own:
                return await self.load(tournament_id, own)
        state = self._cache.get(tournament_id, INITIAL_STATE)
        tail = await session.read_stream(stream_id_for(tournament_id), state.version + 1)
        for recorded in tail:
            state = evolve(state, self.decode(recorded))
        if state.tournament_id is None:
            raise TournamentNotFoundError(tournament_id)
        cached = self._cache.get(tournament_id)
        if cached is None or cached.version < state.version:
            self._cache[tournament_id] = state
            self._cache.move_to_end(tournament_id)
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return state

    async def events(self, tournament_id: uuid.UUID, from_version: int = 1) -> list[RecordedEvent]:
        """The tournament's recorded events from ``from_version``."""
        async with self.store.session() as session:
            return await session.read_stream(stream_id_for(tournament_id), from_version)

    # -- commands ------------------------------------------------------------------------------

    async def create(
        self,
        settings: TournamentSettings,
        created_by: str,
        request_id: str,
        *,
        request_digest: bytes | None = None,
    ) -> TournamentOutcome:
        """Create a tournament: one secret seating seed per round, only commitments in the log."""
        tournament_id = uuid.uuid5(TOURNAMENT_ID_NAMESPACE, f"{created_by}/{request_id}")
        # Seeds only for a number of rounds the domain can accept: it refuses any other count
        # (INVALID_ARGUMENT) before looking at them, and 2^31-1 rounds of seeds never finish.
        rounds = settings.rounds if 1 <= settings.rounds <= MAX_ROUNDS else 0
        seeds = [fairness.new_seed() for _ in range(rounds)]

        async def plan(
            state: TournamentState, session: StoreSession
        ) -> tuple[object, SecretChanges]:
            command = CreateTournament(
                tournament_id=tournament_id,
                name=settings.name,
                rule_set=settings.rule_set,
                seats_per_table=settings.seats_per_table,
                rounds=settings.rounds,
                deals_per_round=settings.deals_per_round,
                registration_opens_ms=settings.registration_opens_ms,
                registration_closes_ms=settings.registration_closes_ms,
                max_entrants=settings.max_entrants,
                reseating=settings.reseating,
                tie_break=settings.tie_break,
                seating_commitments=tuple(
                    seating_commitment(tournament_id, number, seed)
                    for number, seed in enumerate(seeds, start=1)
                ),
                created_by=created_by,
                now_ms=self.clock(),
            )

            return command, SecretChanges(keep=tuple(enumerate(seeds, start=1)))

        return await self._execute(
            tournament_id, created_by, request_id, plan, new=True, request_digest=request_digest
        )

    async def register(
        self,
        tournament_id: uuid.UUID,
        player_id: str,
        request_id: str,
        *,
        request_digest: bytes | None = None,
    ) -> TournamentOutcome:
        """Enter a player."""
        command = RegisterPlayer(player_id=player_id, now_ms=self.clock())
        return await self._execute(
            tournament_id, player_id, request_id, _fixed(command), request_digest=request_digest
        )

    async def unregister(
        self,
        tournament_id: uuid.UUID,
        player_id: str,
        request_id: str,
        *,
        request_digest: bytes | None = None,
    ) -> TournamentOutcome:
        """Withdraw a player before the start."""
        command = UnregisterPlayer(player_id=player_id)
        return await self._execute(
            tournament_id, player_id, request_id, _fixed(command), request_digest=request_digest
        )

    async def start(
        self,
        tournament_id: uuid.UUID,
        actor: str,
        request_id: str,
        *,
        request_digest: bytes | None = None,
    ) -> TournamentOutcome:
        """Close registration, seat round 1 by the committed draw, and set up its tables."""
        stream_id = stream_id_for(tournament_id)

        async def plan(
            state: TournamentState, session: StoreSession
        ) -> tuple[object, SecretChanges]:
            if (
                state.phase is not TournamentPhase.REGISTRATION
                or len(state.registered) < state.min_entrants
            ):
                # decide gives the precise refusal; no secret is read for a refused command.
                return StartTournament(self.clock(), b"", ()), SecretChanges()
            seed = await session.load_secret(stream_id, 1)
            if seed is None:  # pragma: no cover - kept until round 1 is seated
                raise RuntimeError(f"the seating seed of tournament {tournament_id} is missing")
            count = planned_table_count(state, len(state.registered))
            table_ids = tuple(round_table_id(tournament_id, 1, index) for index in range(count))
            return StartTournament(self.clock(), seed, table_ids), SecretChanges(forget=(1,))

        outcome = await self._execute(
            tournament_id, actor, request_id, plan, request_digest=request_digest
        )
        await self.ensure_round_tables(tournament_id)
        return outcome

    async def next_round_command(
        self, session: StoreSession, state: TournamentState
    ) -> tuple[SeatNextRound, SecretChanges]:
        """The command seating the round after the current one, and the seed it publishes."""
        assert state.tournament_id is not None
        number = state.current_round + 1
        stream_id = stream_id_for(state.tournament_id)
        seed = await session.load_secret(stream_id, number)
        if seed is None:  # pragma: no cover - kept until the round is seated
            raise RuntimeError(f"the seating seed of round {number} is missing")
        count = planned_table_count(state)
        table_ids = tuple(
            round_table_id(state.tournament_id, number, index) for index in range(count)
        )
        return SeatNextRound(seed, table_ids), SecretChanges(forget=(number,))

    async def ensure_round_tables(self, tournament_id: uuid.UUID) -> int:
        """Create, fill and draw the dealer of every table of the current round that needs it.

        Idempotent: safe to run again after a crash at any point; returns the tables touched.
        """
        state = await self.load(tournament_id)
        touched = 0
        if state.current_round == 0:
            return touched
        for table in state.round_tables(state.current_round):
            try:
                table_state = await self.tables.load(table.table_id)
            except TableNotFoundError:
                request = round_table_request(tournament_id, table.round, table.index)
                created = await self.tables.create_table(
                    state.rule_set, len(table.players), TABLE_CREATOR, request
                )
                assert created.table_id == table.table_id
                table_state = created.state
            # The frame's phases, which every family's table passes through by these names.
            if table_state.phase not in _TO_SEAT:
                continue
            touched += 1
            for seat, player in enumerate(table.players):
                if table_state.seats[seat] is None:
                    await self.tables.join(
                        table.table_id, player, seat, f"tournament-seat/{table.table_id}"
                    )
            try:
                await self.tables.choose_dealer(
                    table.table_id, TABLE_CREATOR, f"tournament-dealer/{table.table_id}"
                )
            except DomainError as error:
                if error.reason is not Reason.WRONG_PHASE:  # the dealer was drawn already
                    raise
        return touched

    # -- the one way commands reach the log ---------------------------------------------------

    async def _execute(
        self,
        tournament_id: uuid.UUID,
        actor: str,
        request_id: str,
        plan: Plan,
        new: bool = False,
        request_digest: bytes | None = None,
    ) -> TournamentOutcome:
        stream_id = stream_id_for(tournament_id)
        scoped = f"{actor}/{request_id}"
        for _attempt in range(CONFLICT_RETRIES):
            async with self.store.session() as session:
                earlier = await session.find_processed_request(scoped)
                if earlier is not None:
                    if earlier.stream_id != stream_id:
                        raise DomainError(
                            Reason.REQUEST_ID_REUSED,
                            "this request id was already used for another stream",
                            field="request_id",
                        )
                    if not earlier.same_request(stream_id, request_digest):
                        raise DomainError(
                            Reason.REQUEST_ID_REUSED,
                            "this request id was already used for a different request; a retry"
                            " must repeat the request unchanged, and a new request needs a fresh"
                            " request id",
                            field="request_id",
                        )
                    state = await self.load(tournament_id, session)
                    replayed = earlier.result.events
                    return TournamentOutcome(
                        tournament_id,
                        state,
                        replayed,
                        True,
                        receipt=sign_if_enabled(self.receipts, replayed),
                    )
                state = INITIAL_STATE if new else await self.load(tournament_id, session)
                command, secrets = await plan(state, session)
                events = decide(state, command)
                after = state
                for event in events:
                    after = evolve(after, event)
                try:
                    # In the session already held: taking a second connection from the pool
                    # while holding this one could starve the pool under load.
                    result = await session.append(
                        stream_id,
                        state.version,
                        [self.encode(event) for event in events],
                        scoped,
                        actor,
                        response={"tournament_id": str(tournament_id)},
                        secrets=secrets,
                        request_digest=request_digest,
                    )
                except (ConcurrencyConflict, RequestIdReused):
                    # Lost a race (to a retry of this request id too): the look-up above answers
                    # the next attempt, as the original's result or as REQUEST_ID_REUSED.
                    continue
            return TournamentOutcome(
                tournament_id,
                after,
                result.events,
                replayed=False,
                receipt=sign_if_enabled(self.receipts, result.events),
            )
        async with self.store.session() as session:
            current = await session.stream_version(stream_id)
        raise ConcurrencyConflict(stream_id, state.version, current)

    def encode(self, event: Event) -> NewEvent:
        """The event as the store appends it."""
        type_name, schema_version, data = self.codec.encode(event)
        return NewEvent(type_name, data, schema_version)


def _fixed(command: object) -> Plan:
    async def plan(state: TournamentState, session: StoreSession) -> tuple[object, SecretChanges]:
        return command, SecretChanges()

    return plan

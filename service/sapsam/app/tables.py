"""The table service: runs the table's commands against the log, one transaction each.

This is where the pure domain meets the store (``sapsam.app.store_interface``). For each request
it loads the table (the stream, folded), lets ``decide`` produce events, and appends them with the
stream version it decided on — together with the read models and the deal secrets, in the
append's transaction. It also supplies
what only the service may know: fresh seeds (kept in ``deal_secrets``, never in the log until
revealed), each seat's dealt cards, and the current time.

Follow-up commands that the rules make automatic are decided in the same append: the deal right
after the cut, and the seed reveal and scoring right after the last reveal or timeout. So a table
is never left waiting for the service itself.

The machinery every command shares (memory, retries, the append) is ``sapsam.app.table_runner``;
the deadline sweep is ``sapsam.app.deadline_sweep``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from sapsam import fairness
from sapsam.app import deadline_sweep
from sapsam.app.store_interface import StoreSession
from sapsam.app.table_runner import (
    CACHE_SIZE,
    CONFLICT_RETRIES,
    LOT_SECRET_NUMBER,
    STREAM_PREFIX,
    Plan,
    SecretMissingError,
    StaleVersionError,
    TableNotFoundError,
    TableOutcome,
    TableRunner,
    dealt_hands,
    stream_id_for,
    wall_clock_ms,
)
from sapsam.domain.commands import (
    ChooseDealer,
    CommitArrangement,
    ConfirmArrangement,
    ContributeEntropy,
    CreateTable,
    CutDeck,
    DealCards,
    PlayerSignature,
    RevealArrangement,
    SeatPlayer,
    StartDeal,
    TimeOutSeats,
)
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.table import INITIAL_STATE, TablePhase, TableState, decide, evolve, fold
from sapsam.domain.table_deadlines import UnservedWindow
from sapsam.domain.table_views import Viewer, own_hand_seat
from sapsam.log.records import RecordedEvent
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card
from sapsam.rules.ruleset import RuleSet

__all__ = [
    "CACHE_SIZE",
    "CONFLICT_RETRIES",
    "LOT_SECRET_NUMBER",
    "STREAM_PREFIX",
    "TABLE_ID_NAMESPACE",
    "ListedTable",
    "StaleVersionError",
    "TableNotFoundError",
    "TableOutcome",
    "TableService",
    "stream_id_for",
    "wall_clock_ms",
]

# Namespace for table ids derived from the creator and request id, so a retried CreateTable
# lands on the same stream and is recognised as the same request.
TABLE_ID_NAMESPACE = uuid.UUID("6f1c7a52-3c1e-4b8e-9d0a-5a7c2b9e41d3")


@dataclass(frozen=True)
class ListedTable:
    """A table of a listed page: its state and the facts of its creation (from the read model)."""

    state: TableState
    created_by: str
    created_at: str


@dataclass(frozen=True)
class OwnHand:
    """A seat holder's cards in one deal."""

    seat: int
    deal_number: int
    cards: tuple[Card, ...]


class TableService(TableRunner):
    """Runs table commands and reads tables, over a ``Store``."""

    # -- reads ---------------------------------------------------------------------------------

    async def list_tables(
        self,
        phases: Collection[TablePhase] | None,
        after: tuple[str, uuid.UUID] | None,
        limit: int,
    ) -> list[ListedTable]:
        """Up to ``limit`` tables newest first (by creation time, then id), only those in
        ``phases`` unless None, after ``after`` (a listed table's creation time and id).

        The page comes from the read model; each table's state from this process's memory
        plus the log's tail, all the page's tails in one statement.
        """
        wanted = None if phases is None else sorted(phase.value for phase in phases)
        async with self.store.session() as session:
            page = await session.table_page(wanted, after, limit)
            states = await self.load_many([line.table_id for line in page], session)
        return [
            ListedTable(state, line.created_by, line.created_at)
            for state, line in zip(states, page, strict=True)
        ]

    async def events(
        self, table_id: uuid.UUID, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """The table's recorded events from ``from_version`` (up to ``to_version``, if given),
        from the log (a watcher woken by a wake-up asks the log what it holds, whoever wrote it)."""
        async with self.store.session() as session:
            return await session.read_stream(stream_id_for(table_id), from_version, to_version)

    async def load_with_events(
        self, table_id: uuid.UUID, from_version: int
    ) -> tuple[TableState, list[RecordedEvent]]:
        """The table as :meth:`load` gives it, and its events from ``from_version`` on, from one
        read of the log: from ``from_version`` or from the remembered state's next version,
        whichever comes first. From memory, with no read, when the copy is current and holds
        them."""
        # One read of the stamp serves both ends: the copy is current if it still holds the
        # stamp its copy was made at; if not, the stamp was read before the log read below, which
        # is all a stamp remembered with the state read must be (``sapsam.store.write_stamps``).
        stamp = self.store.write_stamp(stream_id_for(table_id))
        current = self.copy_current_at(table_id, stamp)
        if current is not None:
            remembered = self.remembered_events(table_id, current, from_version, None)
            if remembered is not None:
                return current, remembered
        state = self._cache.get(table_id, INITIAL_STATE)
        read = await self.events(table_id, min(from_version, state.version + 1))
        for recorded in read:
            if recorded.version > state.version:
                state = evolve(state, self.decode(recorded))
        if state.table_id is None:
            raise TableNotFoundError(table_id)
        self._remember(table_id, state, stamp, read)
        return state, [recorded for recorded in read if recorded.version >= from_version]

    async def hand_of(self, table_id: uuid.UUID, player_id: str) -> tuple[int, tuple[Card, ...]]:
        """The caller's own seat and 13 dealt cards in the current deal (see :meth:`own_hand`)."""
        hand = await self.own_hand(table_id, player_id)
        return hand.seat, hand.cards

    async def own_hand(self, table_id: uuid.UUID, player_id: str) -> OwnHand:
        """The caller's own seat, the current deal's number and its 13 cards in it, all from one
        read (a second read could see the next deal, or none, and name the wrong one).

        Only the seat's holder can ask; other seats' cards are never computed for a caller.
        """
        async with self.store.session() as session:
            state = await self.load(table_id, session)
            # Whose cards the caller may have is the domain's call, made before any is computed.
            seat = own_hand_seat(state, Viewer.of(state, player_id))
            deal = state.deal
            assert deal is not None
            seed = deal.seed or await self._secret_seed(session, table_id, deal.number)
        return OwnHand(seat, deal.number, dealt_hands(state, seed)[seat])

    def known_seed(self, table_id: uuid.UUID, deal_number: int) -> bytes | None:
        """A running deal's secret seed if this process holds it (no read), for the hands its
        ``CardsDealt`` shows each seat's holder on the stream (``dealt_hands``, as
        :meth:`own_hand`)."""
        return self._secrets.get((table_id, deal_number))

    async def deal_seed(self, table_id: uuid.UUID, deal_number: int) -> bytes | None:
        """A running deal's secret seed, from memory or ``deal_secrets``; None once the log has
        published it (``SeedRevealed`` then holds it)."""
        seed = self.known_seed(table_id, deal_number)
        if seed is not None:
            return seed
        async with self.store.session() as session:
            try:
                return await self._secret_seed(session, table_id, deal_number)
            except SecretMissingError:
                return None

    # -- commands ------------------------------------------------------------------------------

    async def create_table(
        self,
        rule_set: RuleSet,
        seat_count: int,
        created_by: str,
        request_id: str,
        after_series: str = "close",
        *,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Open a table; its id is derived from the creator and request id (retries agree).

        ``after_series``: ``close`` ends the table with its series; ``new_series`` starts another.
        """
        table_id = uuid.uuid5(TABLE_ID_NAMESPACE, f"{created_by}/{request_id}")
        lot_seed = fairness.new_seed()

        async def plan(state: TableState, session: StoreSession) -> Plan:
            command = CreateTable(
                table_id=table_id,
                rule_set=rule_set,
                seat_count=seat_count,
                lot_commitment=fairness.lot_commitment(table_id, lot_seed),
                created_by=created_by,
                after_series=after_series,
            )

            return Plan([command], keep_secret=(LOT_SECRET_NUMBER, lot_seed))

        outcome = await self._execute(
            table_id, created_by, request_id, plan, new_table=True, request_digest=request_digest
        )
        if not outcome.replayed:
            self._remember_secret(table_id, LOT_SECRET_NUMBER, lot_seed)
        return outcome

    async def join(
        self,
        table_id: uuid.UUID,
        player_id: str,
        seat: int | None,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Seat a player (at ``seat``, or the lowest free seat)."""
        command = SeatPlayer(player_id=player_id, seat=seat)
        return await self._execute(
            table_id,
            player_id,
            request_id,
            _fixed(command),
            expected_version=expected_version,
            request_digest=request_digest,
        )

    async def choose_dealer(
        self,
        table_id: uuid.UUID,
        actor: str,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Draw the first dealer by lot, with the seed committed when the table was created."""

        async def plan(state: TableState, session: StoreSession) -> Plan:
            _require_holder_or_operator(state, actor)
            if state.phase is not TablePhase.AWAITING_DEALER:
                # decide names the phase precisely; no secret is read for a refused command.
                return Plan([ChooseDealer(lot_seed=b"")])
            return Plan(
                [
                    ChooseDealer(
                        lot_seed=await self._secret_seed(session, table_id, LOT_SECRET_NUMBER)
                    )
                ]
            )

        return await self._execute(
            table_id,
            actor,
            request_id,
            plan,
            expected_version=expected_version,
            request_digest=request_digest,
        )

    async def start_deal(
        self,
        table_id: uuid.UUID,
        actor: str,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Begin the next deal: a fresh secret seed, only its commitment in the log."""
        seed = fairness.new_seed()

        async def plan(state: TableState, session: StoreSession) -> Plan:
            _require_holder_or_operator(state, actor)
            number = state.deals_scored + 1
            command = StartDeal(seed_commitment=fairness.seed_commitment(table_id, number, seed))

            return Plan([command], keep_secret=(number, seed))

        outcome = await self._execute(
            table_id,
            actor,
            request_id,
            plan,
            expected_version=expected_version,
            request_digest=request_digest,
        )
        if not outcome.replayed and outcome.state.deal is not None:
            self._remember_secret(table_id, outcome.state.deal.number, seed)
        return outcome

    async def contribute_entropy(
        self,
        table_id: uuid.UUID,
        player_id: str,
        entropy: bytes,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Mix a seat's bytes into this deal's shuffle."""
        command = ContributeEntropy(player_id=player_id, entropy=entropy)
        return await self._execute(
            table_id,
            player_id,
            request_id,
            _fixed(command),
            expected_version=expected_version,
            request_digest=request_digest,
        )

    async def cut(
        self,
        table_id: uuid.UUID,
        player_id: str,
        position: int,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Cut the deck (the seat on the dealer's right), and deal at once."""

        async def plan(state: TableState, session: StoreSession) -> Plan:
            cut = CutDeck(player_id=player_id, position=position)
            # Validate the cut before using the secret seed for anything.
            cut_state = fold(decide(state, cut), state)
            deal = cut_state.deal
            assert deal is not None
            seed = await self._secret_seed(session, table_id, deal.number)
            record = fairness.deal_record(
                seed,
                deal.contributions,
                table_id,
                deal.number,
                position,
                deal.dealer,
                state.seat_count,
            )
            return Plan([cut, DealCards(deal_record=record, now_ms=self.clock())])

        return await self._execute(
            table_id,
            player_id,
            request_id,
            plan,
            expected_version=expected_version,
            request_digest=request_digest,
        )

    async def commit(
        self,
        table_id: uuid.UUID,
        player_id: str,
        commitment: bytes,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
        scheme: int = 1,
        signature: PlayerSignature | None = None,
        player_keys: tuple[bytes, ...] = (),
        confirm: bool = False,
    ) -> TableOutcome:
        """Record a seat's arrangement commitment (the hash only, of ``scheme``), in
        ``deal_number`` if given; ``signature`` must be by one of ``player_keys`` (the player's
        registered keys), and is required when there are any. With ``confirm``, the seat's
        confirmation is decided on the committed state and joins the same append: the events of
        :meth:`commit` then :meth:`confirm`, all or none."""
        command = CommitArrangement(
            player_id=player_id,
            commitment=commitment,
            deal_number=deal_number,
            scheme=scheme,
            signature=signature,
            player_keys=player_keys,
        )

        async def plan(state: TableState, session: StoreSession) -> Plan:
            if not confirm:
                return Plan([command])
            then = ConfirmArrangement(player_id, now_ms=self.clock(), deal_number=deal_number)
            return Plan([command, then])

        return await self._execute(
            table_id,
            player_id,
            request_id,
            plan,
            expected_version=expected_version,
            request_digest=request_digest,
        )

    async def confirm(
        self,
        table_id: uuid.UUID,
        player_id: str,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
    ) -> TableOutcome:
        """Lock a seat's last commitment, in ``deal_number`` if given."""

        async def plan(state: TableState, session: StoreSession) -> Plan:
            confirm = ConfirmArrangement(
                player_id=player_id, now_ms=self.clock(), deal_number=deal_number
            )
            return Plan([confirm])

        return await self._execute(
            table_id,
            player_id,
            request_id,
            plan,
            expected_version=expected_version,
            request_digest=request_digest,
        )

    async def reveal(
        self,
        table_id: uuid.UUID,
        player_id: str,
        arrangement: Arrangement,
        nonce: bytes,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
        signature: PlayerSignature | None = None,
        player_keys: tuple[bytes, ...] = (),
    ) -> TableOutcome:
        """Show a seat's arrangement (in ``deal_number`` if given; signed as :meth:`commit`);
        after the last reveal the seed is published and scored."""

        async def plan(state: TableState, session: StoreSession) -> Plan:
            deal = state.deal
            seat = state.seat_of(player_id)
            if (
                deal is None
                or seat is None
                or state.phase is not TablePhase.REVEALING
                or deal_number not in (None, deal.number)
            ):
                # Let decide give the precise refusal (not seated, wrong phase, wrong deal, ...).
                return Plan(
                    [
                        RevealArrangement(
                            player_id,
                            arrangement,
                            nonce,
                            (),
                            deal_number,
                            signature,
                            player_keys,
                        )
                    ],
                )
            seed = await self._secret_seed(session, table_id, deal.number)
            dealt = dealt_hands(state, seed)[seat]
            return Plan(
                [
                    RevealArrangement(
                        player_id, arrangement, nonce, dealt, deal_number, signature, player_keys
                    )
                ],
                seed_to_reveal=seed,
            )

        return await self._execute(
            table_id,
            player_id,
            request_id,
            plan,
            expected_version=expected_version,
            request_digest=request_digest,
        )

    async def time_out(
        self,
        table_id: uuid.UUID,
        request_id: str,
        unserved: tuple[UnservedWindow, ...] = (),
        grace_ms: int = 0,
    ) -> TableOutcome:
        """Record every seat past its deadline now (the server's sweeper calls this), or extend
        the deadline when it fell in (or just after) one of the ``unserved`` windows."""
        now = self.clock()

        async def plan(state: TableState, session: StoreSession) -> Plan:
            deal = state.deal
            seed = None
            if deal is not None:
                try:
                    seed = await self._secret_seed(session, table_id, deal.number)
                except SecretMissingError:
                    seed = None  # nothing left to reveal: TimeOutSeats says so precisely
            command = TimeOutSeats(now_ms=now, unserved=unserved, grace_ms=grace_ms)
            return Plan([command], seed_to_reveal=seed)

        return await self._execute(table_id, "service", request_id, plan)

    async def sweep_deadlines(
        self,
        limit: int = 100,
        unserved: Callable[[int], Awaitable[tuple[UnservedWindow, ...]]] | None = None,
        grace_ms: int = 0,
    ) -> int:
        """Time out the seats of every table past its deadline; returns how many tables changed
        (``sapsam.app.deadline_sweep.sweep_deadlines``)."""
        return await deadline_sweep.sweep_deadlines(self, limit, unserved, grace_ms)


def _fixed(command: object) -> Callable[[TableState, StoreSession], Awaitable[Plan]]:
    async def plan(state: TableState, session: StoreSession) -> Plan:
        return Plan([command])

    return plan


def _require_holder_or_operator(state: TableState, actor: str) -> None:
    if actor != "operator" and state.seat_of(actor) is None:
        raise DomainError(Reason.NOT_SEATED, "only a seated player or the operator may do this")

"""The table queries: lists, a table with its events, a seat's own hand.

Each reads from this process's memory when its copy is current (no statement), else from the
log's tail (``sapsam.app.table_runner``, ``sapsam.app.table_memory``).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sapsam.app.open_face_play import dealt_so_far, own_discards
from sapsam.app.secret_seeds import dealt_hands
from sapsam.app.store_interface import PlayedDealLine, StoreSession
from sapsam.app.table_plans import SecretMissingError, TableNotFoundError, stream_id_for
from sapsam.app.table_runner import TableRunner
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.open_face.deal_views import OpenFaceDealView, deal_view_for
from sapsam.domain.open_face.table_state import OpenFaceTable
from sapsam.domain.table import INITIAL_STATE, TableState, evolve
from sapsam.domain.table_views import Viewer, own_hand_seat
from sapsam.log.records import RecordedEvent
from sapsam.rules.cards import Card


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
    open_face: OpenFaceDealView | None = None
    """At an open-face table: the deal as this seat may see it (its rows, the others' face-up
    rows it may see, whose turn it is); ``cards`` are then those dealt to it so far."""
    discards: tuple[Card, ...] = ()
    """At a Pineapple table: the cards this seat discarded so far (its own, never another's)."""


class TableQueries(TableRunner):
    """The table service's queries (``sapsam.app.tables.TableService`` has them)."""

    async def list_tables(
        self,
        phases: Collection[str] | None,
        after: tuple[str, uuid.UUID] | None,
        limit: int,
    ) -> list[ListedTable]:
        """Up to ``limit`` tables newest first (by creation time, then id), only those in
        ``phases`` unless None, after ``after`` (a listed table's creation time and id).

        The page comes from the read model; each table's state from this process's memory
        plus the log's tail, all the page's tails in one statement.
        """
        wanted = None if phases is None else sorted(str(phase) for phase in phases)
        # A list may lag (``lagging_reads``: a standby, within its bound).
        store = self.lagging_reads()
        async with store.session() as session:
            page = await session.table_page(wanted, after, limit)
            states = await self.load_many(
                [line.table_id for line in page], session, remember=store is self.store
            )
        return [
            ListedTable(state, line.created_by, line.created_at)
            for state, line in zip(states, page, strict=True)
        ]

    async def deal_history(
        self, player_id: str, after: tuple[str, uuid.UUID, int, int] | None, limit: int
    ) -> Sequence[PlayedDealLine]:
        """Up to ``limit`` of ``player_id``'s scored deals (the seats it held when each was
        scored), newest table first, its latest deal first, after ``after`` (a line's
        ``sort_key``); from the read models, one statement."""
        async with self.store.session() as session:
            return await session.deal_history_page(player_id, after, limit)

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
        current = self.memory.copy_current_at(table_id, stamp)
        if current is not None:
            remembered = self.memory.remembered_events(table_id, current, from_version, None)
            if remembered is not None:
                return current, remembered
        state = self.memory.state(table_id) or INITIAL_STATE
        read = await self.events(table_id, min(from_version, state.version + 1))
        fresh = [recorded for recorded in read if recorded.version > state.version]
        decoded = [self.decode(recorded) for recorded in fresh]
        for event in decoded:
            state = evolve(state, event)
        if state.table_id is None:
            raise TableNotFoundError(table_id)
        self.memory.remember(table_id, state, stamp, read)
        self.memory.keep_decoded(table_id, fresh, decoded)
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
        hand, _state = await self.own_hand_and_table(table_id, player_id)
        return hand

    async def own_hand_and_table(
        self, table_id: uuid.UUID, player_id: str
    ) -> tuple[OwnHand, TableState | OpenFaceTable]:
        """:meth:`own_hand`, and the table as it stood in the same read (what a suggestion
        checks the seat's decision against, ``sapsam.app.suggestions``)."""
        # The usual case, the copy current and the seed held: no pooled connection is taken
        # (the same state and seed as below, without the pool's hand-over and liveness check).
        current = self.current_copy(table_id)
        if isinstance(current, OpenFaceTable):
            return await self._open_face_hand(table_id, current, player_id), current
        if current is not None:
            seat = own_hand_seat(current, Viewer.of(current, player_id))
            deal = current.deal
            assert deal is not None
            seed = deal.seed or self.secrets.known(table_id, deal.number)
            if seed is not None:
                return OwnHand(seat, deal.number, dealt_hands(current, seed)[seat]), current
        async with self.store.session() as session:
            state = await self.load(table_id, session)
            if isinstance(state, OpenFaceTable):
                return await self._open_face_hand(table_id, state, player_id, session), state
            # Whose cards the caller may have is the domain's call, made before any is computed.
            seat = own_hand_seat(state, Viewer.of(state, player_id))
            deal = state.deal
            assert deal is not None
            seed = deal.seed or await self.secrets.seed(session, table_id, deal.number)
        return OwnHand(seat, deal.number, dealt_hands(state, seed)[seat]), state

    async def _open_face_hand(
        self,
        table_id: uuid.UUID,
        state: OpenFaceTable,
        player_id: str,
        session: StoreSession | None = None,
    ) -> OwnHand:
        """An open-face seat's cards dealt so far and the deal as it may see it; the seat is
        found (and the cards are due) before any card is computed."""
        seat = state.seat_of(player_id)
        if seat is None:
            raise DomainError(Reason.NOT_SEATED, "you do not hold a seat at this table")
        play = state.play
        if play is None or play.streets_dealt == 0:
            raise DomainError(Reason.WRONG_PHASE, "no cards have been dealt yet")
        seed = state.seed or self.secrets.known(table_id, play.number)
        if seed is None:
            if session is None:
                async with self.store.session() as own:
                    seed = await self.secrets.seed(own, table_id, play.number)
            else:
                seed = await self.secrets.seed(session, table_id, play.number)
        dealt = dealt_so_far(state, seed)
        # The domain's view decides what of every seat this one may see.
        view = deal_view_for(play, seat, dealt, seed_revealed=state.seed is not None)
        cards = view.seats[seat].dealt
        assert cards is not None
        return OwnHand(seat, play.number, cards, view, own_discards(state, seed, seat))

    def known_seed(self, table_id: uuid.UUID, deal_number: int) -> bytes | None:
        """A running deal's secret seed if this process holds it (no read), for the hands its
        ``CardsDealt`` shows each seat's holder on the stream (``dealt_hands``, as
        :meth:`own_hand`)."""
        return self.secrets.known(table_id, deal_number)

    async def deal_seed(self, table_id: uuid.UUID, deal_number: int) -> bytes | None:
        """A running deal's secret seed, from memory or ``deal_secrets``; None once the log has
        published it (``SeedRevealed`` then holds it)."""
        seed = self.known_seed(table_id, deal_number)
        if seed is not None:
            return seed
        async with self.store.session() as session:
            try:
                return await self.secrets.seed(session, table_id, deal_number)
            except SecretMissingError:
                return None

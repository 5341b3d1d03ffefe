"""The commands of an open-face deal's players: place a street's cards (at Pineapple with the
commitment to its discard), set a Fantasyland hand face down, open it at the end, open the
discards at the end.

Each is one plan for the runner (``sapsam.app.table_runner``): the cards the seat was dealt come
from the deal's secret seed (``sapsam.app.open_face_play``), and what the service does itself
once the command made it due -- the next street, a placement the next seat has no choice in, the
seed's reveal and the score -- joins the same append. At a table of another family each is
refused, WRONG_GAME, writing nothing.
"""

from __future__ import annotations

import uuid

from sapsam.app.open_face_play import seat_streets
from sapsam.app.store_interface import StoreSession
from sapsam.app.table_plans import DealtFor, SeatDealt, TableOutcome
from sapsam.app.table_runner import TableRunner
from sapsam.domain.commands import PlayerSignature
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    PlaceCards,
    RevealDiscards,
    RevealFantasyland,
)
from sapsam.domain.open_face.table_state import OpenFaceTable, OpenFaceTablePhase
from sapsam.domain.table import TableState
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import Placement


def _open_face(state: TableState) -> OpenFaceTable | None:
    """The table as an open-face table, None for another family's (the runner then refuses
    the move, WRONG_GAME: ``app.open_face_play.require_family_move``)."""
    return state if isinstance(state, OpenFaceTable) else None


def _dealt_streets(
    state: OpenFaceTable | None, seed: bytes | None, player_id: str
) -> tuple[tuple[Card, ...], ...]:
    """Every street's cards ``player_id``'s seat was dealt so far, or () when none can be (the
    domain then refuses the move, saying why)."""
    if state is None or seed is None or state.play is None:
        return ()
    seat = state.seat_of(player_id)
    if seat is None or state.phase is not OpenFaceTablePhase.PLAYING:
        return ()
    return seat_streets(state, seed, seat)


def _dealt_if_due(
    state: OpenFaceTable | None, seed: bytes | None, player_id: str, street: int | None
) -> tuple[Card, ...]:
    """The cards ``player_id``'s seat was dealt on ``street`` (None: its Fantasyland hand, street
    0), or () when the command cannot be due (the domain then refuses it, saying why)."""
    streets = _dealt_streets(state, seed, player_id)
    wanted = 0 if street is None else street
    return streets[wanted] if 0 <= wanted < len(streets) else ()


class OpenFaceCommands(TableRunner):
    """The open-face players' commands (``sapsam.app.tables.TableService`` has them)."""

    async def _running_seed(
        self, session: StoreSession, table_id: uuid.UUID, state: OpenFaceTable | None
    ) -> bytes | None:
        """The running deal's secret seed, None when no deal is being played."""
        if state is None or state.phase is not OpenFaceTablePhase.PLAYING or state.play is None:
            return None
        return await self.secrets.seed(session, table_id, state.play.number)

    def _dealt(
        self, table_id: uuid.UUID, player_id: str, street: int | None, cards: bool = True
    ) -> DealtFor:
        """A move's :class:`SeatDealt` at an open-face table: the running deal's seed, and with
        ``cards`` those ``player_id``'s seat was dealt on ``street`` (None: its Fantasyland
        hand)."""

        async def dealt(state: TableState, session: StoreSession) -> SeatDealt:
            table = _open_face(state)
            seed = await self._running_seed(session, table_id, table)
            if not cards:
                return SeatDealt(seed)
            return SeatDealt(seed, _dealt_if_due(table, seed, player_id, street))

        return dealt

    async def place_cards(
        self,
        table_id: uuid.UUID,
        player_id: str,
        street: int,
        placement: Placement,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
        signature: PlayerSignature | None = None,
        player_keys: tuple[bytes, ...] = (),
        discard_commitment: bytes | None = None,
    ) -> TableOutcome:
        """Place the seat's cards of ``street`` face up, for good (in turn, clockwise from the
        dealer's left); the service's moves that follow join the append. ``signature``: the
        player's, of the ``place`` message, by one of ``player_keys`` (docs/fairness.md §19),
        covering ``discard_commitment``: at Pineapple, the commitment to the street's discard
        (§23)."""

        def place(seat: SeatDealt) -> list[object]:
            return [
                PlaceCards(
                    player_id,
                    street,
                    placement,
                    seat.cards,
                    deal_number,
                    now_ms=self.clock(),
                    discard_commitment=discard_commitment,
                    signature=signature,
                    player_keys=player_keys,
                )
            ]

        dealt = self._dealt(table_id, player_id, street)
        return await self._seat_move(
            table_id, player_id, request_id, place, expected_version, request_digest, dealt
        )

    async def commit_fantasyland(
        self,
        table_id: uuid.UUID,
        player_id: str,
        commitment: bytes,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
        signature: PlayerSignature | None = None,
        player_keys: tuple[bytes, ...] = (),
    ) -> TableOutcome:
        """Set the seat's Fantasyland hand face down: its commitment only (docs/fairness.md §12,
        scheme 2), final once made."""

        def commit(seat: SeatDealt) -> list[object]:
            return [
                CommitFantasyland(
                    player_id,
                    commitment,
                    deal_number,
                    self.clock(),
                    signature=signature,
                    player_keys=player_keys,
                )
            ]

        dealt = self._dealt(table_id, player_id, None, cards=False)
        return await self._seat_move(
            table_id, player_id, request_id, commit, expected_version, request_digest, dealt
        )

    async def reveal_fantasyland(
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
        """Open the seat's Fantasyland hand at the end of the deal; after the last hand the seed
        is revealed and the deal scored in the same append."""

        def reveal(seat: SeatDealt) -> list[object]:
            return [
                RevealFantasyland(
                    player_id,
                    arrangement,
                    nonce,
                    seat.cards,
                    deal_number,
                    signature=signature,
                    player_keys=player_keys,
                )
            ]

        dealt = self._dealt(table_id, player_id, None)
        return await self._seat_move(
            table_id, player_id, request_id, reveal, expected_version, request_digest, dealt
        )

    async def reveal_discards(
        self,
        table_id: uuid.UUID,
        player_id: str,
        cards: tuple[tuple[Card, ...], ...],
        nonces: tuple[bytes, ...],
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
        signature: PlayerSignature | None = None,
        player_keys: tuple[bytes, ...] = (),
    ) -> TableOutcome:
        """Open every discard the seat committed (``cards[i]``, ``nonces[i]``: its ``i``-th, in
        street order) once every hand is complete (docs/fairness.md §23); after the last seat's
        the seed is revealed and the deal scored in the same append."""
        streets: list[tuple[tuple[Card, ...], ...]] = [()]

        async def dealt(state: TableState, session: StoreSession) -> SeatDealt:
            table = _open_face(state)
            seed = await self._running_seed(session, table_id, table)
            streets[0] = _dealt_streets(table, seed, player_id)
            return SeatDealt(seed)

        def reveal(seat: SeatDealt) -> list[object]:
            return [
                RevealDiscards(
                    player_id,
                    cards,
                    nonces,
                    streets[0],
                    deal_number,
                    signature=signature,
                    player_keys=player_keys,
                )
            ]

        return await self._seat_move(
            table_id, player_id, request_id, reveal, expected_version, request_digest, dealt
        )

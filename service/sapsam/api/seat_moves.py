"""The TableService RPCs by which a seat's holder moves in a deal, the closed game's and the open
face's (``sapsam.api.table_servicer.TableServicer`` has them): each reads its request, calls the
table service as the holder of the seat it names, and answers with the table's new version and
the receipt.

Every move takes the same steps, in the order of the checks ``sapsam.api.table_servicer``
describes: the request id, the request's own fields, the caller's right to the seat and the
call's deadline (:meth:`SeatMoves._move`), the signature and the player's keys for a move that
may be signed (:meth:`SeatMoves._signed`); :func:`_answer` answers.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import grpc
from google.protobuf.message import Message

from sapsam.api import auth, resources
from sapsam.api.api_error import ApiError
from sapsam.api.open_face_messages import (
    discard_commitment_of,
    discard_openings_of,
    placement_of,
    street_of,
)
from sapsam.api.players import PlayerDirectory
from sapsam.api.receipt_messages import with_receipt
from sapsam.api.table_requests import (
    DealCallTerms,
    arrangement_of,
    call_terms,
    check_deadline,
    deal_call_terms,
    player_only,
    signature_of,
    surrender_from_choice,
)
from sapsam.app.table_reads import TableReads
from sapsam.app.tables import TableOutcome, TableService
from sapsam.domain import events as domain_events
from sapsam.domain.commands import PlayerSignature
from sapsam_proto.v1 import table_service_pb2, table_service_pb2_grpc

_Answer = TypeVar("_Answer", bound=Message)


class _SeatRequest(Protocol):
    @property
    def seat(self) -> str: ...


class SignedTerms(DealCallTerms):
    """A move that may be signed: also its signature and the player's registered keys."""

    signature: PlayerSignature | None
    player_keys: tuple[bytes, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Seated:
    """The caller as the holder of a seat: the table, the seat, the player."""

    table_id: uuid.UUID
    seat: int
    player_id: str


def _answer(response: Callable[..., _Answer], outcome: TableOutcome) -> _Answer:
    """A move's answer: the table's version after it, and its receipt."""
    return with_receipt(response(version=outcome.version), outcome.receipt)


class SeatMoves(table_service_pb2_grpc.TableServiceServicer):
    """The seats' moves, and the steps they share, over one ``TableService`` and the players."""

    _tables: TableService
    _players: PlayerDirectory
    _reads: TableReads

    # -- shared steps ---------------------------------------------------------------------------

    async def _seat_holder(self, seat_field: str) -> Seated:
        """The table and seat of a seat name, checked to be the caller's own."""
        seat = resources.parse_seat(seat_field)
        player_id = player_only(auth.current_caller())
        held = await self._reads.seat_holder(seat.table_id, seat.seat)
        if not 0 <= seat.seat < held.seat_count:
            raise ApiError(
                "UNKNOWN_SEAT",
                f"seat {seat.seat} does not exist; the table has seats 0 to {held.seat_count - 1}",
                field="seat",
            )
        if held.holder != player_id:
            raise ApiError("NOT_YOUR_SEAT", f"you do not hold seat {seat.seat} at this table")
        return Seated(seat.table_id, seat.seat, player_id)

    async def _move(
        self, request: _SeatRequest, context: grpc.ServicerContext, seated: Seated | None = None
    ) -> Seated:
        """The holder of the request's seat (``seated`` if the caller checked it already), once
        the call's deadline is checked: what every move does after reading its own fields."""
        if seated is None:
            seated = await self._seat_holder(request.seat)
        check_deadline(context)
        return seated

    async def _signed(
        self,
        request: table_service_pb2.CommitArrangementRequest
        | table_service_pb2.RevealArrangementRequest
        | table_service_pb2.DeclareNaturalRequest
        | table_service_pb2.AnnounceSurrenderRequest
        | table_service_pb2.PlaceCardsRequest
        | table_service_pb2.CommitFantasylandRequest
        | table_service_pb2.RevealFantasylandRequest
        | table_service_pb2.RevealDiscardsRequest,
        seated: Seated,
    ) -> SignedTerms:
        """A move's keywords with its signature, if any, and the keys it must be by."""
        signature = signature_of(request)
        keys = await self._players.keys_of(
            seated.player_id, signature.public_key if signature else None
        )
        return SignedTerms(**deal_call_terms(request), signature=signature, player_keys=keys)

    async def _commitment(
        self,
        method: str,
        request: table_service_pb2.CommitArrangementRequest
        | table_service_pb2.CommitFantasylandRequest
        | table_service_pb2.DeclareNaturalRequest,
        context: grpc.ServicerContext,
        record: Callable[..., Awaitable[TableOutcome]],
        **extra: object,
    ) -> TableOutcome:
        """A signed move that records the seat's commitment (an arrangement, a Fantasyland
        hand, a natural declaration): ``record`` called as the seat's holder, with ``extra``
        keywords (the arrangement's scheme and ``confirm``), its outcome."""
        request_id = resources.scoped_request_id(method, request.request_id)
        move = await self._move(request, context)
        return await record(
            move.table_id,
            move.player_id,
            request.commitment,
            request_id,
            **extra,
            **await self._signed(request, move),
        )

    # -- dealing --------------------------------------------------------------------------------

    async def ContributeEntropy(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.ContributeEntropyRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.ContributeEntropyResponse:
        """Mix the seat's bytes into the shuffle."""
        request_id = resources.scoped_request_id("ContributeEntropy", request.request_id)
        move = await self._move(request, context)
        outcome = await self._tables.contribute_entropy(
            move.table_id, move.player_id, request.entropy, request_id, **call_terms(request)
        )
        return _answer(table_service_pb2.ContributeEntropyResponse, outcome)

    async def CutDeck(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.CutDeckRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.CutDeckResponse:
        """Cut, and deal."""
        request_id = resources.scoped_request_id("CutDeck", request.request_id)
        move = await self._move(request, context)
        outcome = await self._tables.cut(
            move.table_id, move.player_id, request.position, request_id, **call_terms(request)
        )
        return _answer(table_service_pb2.CutDeckResponse, outcome)

    # -- open face ------------------------------------------------------------------------------

    async def PlaceCards(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.PlaceCardsRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.PlaceCardsResponse:
        """Place the seat's cards of the street face up; the server's moves that follow join
        the append."""
        request_id = resources.scoped_request_id("PlaceCards", request.request_id)
        street = street_of(request.street)
        placement = placement_of(request.placement)
        discard_commitment = discard_commitment_of(request.discard_commitment)
        move = await self._move(request, context)
        outcome = await self._tables.place_cards(
            move.table_id,
            move.player_id,
            street,
            placement,
            request_id,
            discard_commitment=discard_commitment,
            **await self._signed(request, move),
        )
        return _answer(table_service_pb2.PlaceCardsResponse, outcome)

    async def RevealDiscards(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.RevealDiscardsRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.RevealDiscardsResponse:
        """Open the seat's Pineapple discards at the end of the deal; the last seat's also
        reveals the seed and scores."""
        request_id = resources.scoped_request_id("RevealDiscards", request.request_id)
        cards, nonces = discard_openings_of(request.discards)
        move = await self._move(request, context)
        outcome = await self._tables.reveal_discards(
            move.table_id,
            move.player_id,
            cards,
            nonces,
            request_id,
            **await self._signed(request, move),
        )
        return _answer(table_service_pb2.RevealDiscardsResponse, outcome)

    async def CommitFantasyland(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.CommitFantasylandRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.CommitFantasylandResponse:
        """Set the seat's Fantasyland hand face down (its commitment only)."""
        outcome = await self._commitment(
            "CommitFantasyland", request, context, self._tables.commit_fantasyland
        )
        return _answer(table_service_pb2.CommitFantasylandResponse, outcome)

    async def RevealFantasyland(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.RevealFantasylandRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.RevealFantasylandResponse:
        """Open the seat's Fantasyland hand; the last one also reveals the seed and scores."""
        request_id = resources.scoped_request_id("RevealFantasyland", request.request_id)
        arrangement = arrangement_of(request.arrangement)
        move = await self._move(request, context)
        outcome = await self._tables.reveal_fantasyland(
            move.table_id,
            move.player_id,
            arrangement,
            request.nonce,
            request_id,
            **await self._signed(request, move),
        )
        return _answer(table_service_pb2.RevealFantasylandResponse, outcome)

    # -- arranging and revealing ----------------------------------------------------------------

    async def CommitArrangement(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.CommitArrangementRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.CommitArrangementResponse:
        """Record the seat's commitment (the hash only), and with ``confirm`` lock it in the
        same append."""
        outcome = await self._commitment(
            "CommitArrangement",
            request,
            context,
            self._tables.commit,
            scheme=request.commitment_scheme or 1,
            confirm=request.confirm,
        )
        # From the events the call appended, so a retry answers as the original did.
        confirmed = any(
            recorded.type == domain_events.SeatConfirmed.TYPE for recorded in outcome.events
        )
        return with_receipt(
            table_service_pb2.CommitArrangementResponse(
                version=outcome.version, confirmed=confirmed
            ),
            outcome.receipt,
        )

    async def DeclareNatural(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.DeclareNaturalRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.DeclareNaturalResponse:
        """Record the seat's natural declaration (the hash only)."""
        outcome = await self._commitment(
            "DeclareNatural", request, context, self._tables.declare_natural
        )
        return _answer(table_service_pb2.DeclareNaturalResponse, outcome)

    async def ConfirmArrangement(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.ConfirmArrangementRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.ConfirmArrangementResponse:
        """Lock the seat's last commitment."""
        request_id = resources.scoped_request_id("ConfirmArrangement", request.request_id)
        move = await self._move(request, context)
        outcome = await self._tables.confirm(
            move.table_id, move.player_id, request_id, **deal_call_terms(request)
        )
        return _answer(table_service_pb2.ConfirmArrangementResponse, outcome)

    async def AnnounceSurrender(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.AnnounceSurrenderRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.AnnounceSurrenderResponse:
        """Announce play or surrender for the caller's seat, on its turn."""
        request_id = resources.scoped_request_id("AnnounceSurrender", request.request_id)
        seated = await self._seat_holder(request.seat)
        surrender = surrender_from_choice(request.choice)  # after the seat, as it always was
        move = await self._move(request, context, seated)
        outcome = await self._tables.announce_surrender(
            move.table_id,
            move.player_id,
            surrender,
            request_id,
            **await self._signed(request, move),
        )
        return _answer(table_service_pb2.AnnounceSurrenderResponse, outcome)

    async def RevealArrangement(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.RevealArrangementRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.RevealArrangementResponse:
        """Show the committed rows and nonce; the last reveal also scores the deal."""
        request_id = resources.scoped_request_id("RevealArrangement", request.request_id)
        arrangement = arrangement_of(request.arrangement)
        move = await self._move(request, context)
        outcome = await self._tables.reveal(
            move.table_id,
            move.player_id,
            arrangement,
            request.nonce,
            request_id,
            natural=request.natural or None,
            natural_nonce=request.natural_nonce,
            **await self._signed(request, move),
        )
        return _answer(table_service_pb2.RevealArrangementResponse, outcome)

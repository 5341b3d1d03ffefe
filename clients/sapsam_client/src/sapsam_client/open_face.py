"""Open face in the SDK (issue #18; docs/api.md "An open-face deal, call by call"): the calls of a
:class:`~sapsam_client.client.Client`, and a seat's hand as ``GetMyHand`` shows it.

::

    table = client.create_open_face_table(4, preset="ofc_classic", move_seconds=30)
    seat = client.join_table(table.name).name
    hand = client.get_open_face_hand(seat)           # its cards so far, the deal as it sees it
    front, middle, back = ...                        # where hand.to_place() goes
    client.place_cards(seat, hand.street, front, middle, back, deal=hand.deal_number)

A Fantasyland hand is committed (:meth:`OpenFaceCalls.commit_fantasyland`, a scheme-2
:func:`~sapsam_client.commitment.arrangement_commitment`) and revealed at the end
(:meth:`OpenFaceCalls.reveal_fantasyland`). The bot that plays open face is
:mod:`sapsam_client.open_face_bot`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sapsam_client.connection import Connection, deal_number, request_id
from sapsam_proto.v1 import open_face_pb2, table_pb2, table_service_pb2


@dataclass(frozen=True)
class OpenFaceHand:
    """A seat's cards dealt so far in an open-face deal, and the deal as it may see it."""

    deal: str
    cards: tuple[str, ...]
    view: open_face_pb2.OpenFaceDeal
    position: int
    """The seat's number."""

    @property
    def deal_number(self) -> int:
        return deal_number(self.deal)

    @property
    def street(self) -> int:
        """The last street dealt, 0 first."""
        return self.view.street

    @property
    def rows(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """The seat's own rows so far (front, middle, back)."""
        rows = self.view.seats[self.position].rows
        return tuple(rows.front), tuple(rows.middle), tuple(rows.back)

    def to_place(self) -> tuple[str, ...]:
        """The cards dealt to the seat not yet in its rows: the current street's."""
        placed = {card for row in self.rows for card in row}
        return tuple(card for card in self.cards if card not in placed)

    @property
    def my_turn(self) -> bool:
        seat = self.view.seats[self.position].seat
        return (
            self.view.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING
            and self.view.turn_seat == seat
        )


class OpenFaceCalls(Connection):
    """The open-face calls of a :class:`~sapsam_client.client.Client`."""

    def create_open_face_table(
        self, seat_count: int = 2, *, preset: str = "ofc_classic", move_seconds: int | None = None
    ) -> table_pb2.Table:
        """Create an open-face table of ``preset`` (``ofc_classic``, ``ofc_turbo``,
        ``ofc_russian``, ``ofc_mercier_deeb``), each placement limited to ``move_seconds``
        (unset: the preset's, no limit); not seated."""
        request = table_service_pb2.CreateTableRequest(
            request_id=request_id(), seat_count=seat_count, rule_set_preset=preset
        )
        if move_seconds is not None:
            request.move_seconds = move_seconds
        return self.call(
            self.tables.CreateTable, request, table_service_pb2.CreateTableResponse
        ).table

    def get_open_face_hand(self, seat: str) -> OpenFaceHand:
        """The seat's cards so far and the deal as it may see it (``GetMyHand``)."""
        response = self.call(
            self.tables.GetMyHand,
            table_service_pb2.GetMyHandRequest(seat=seat),
            table_service_pb2.GetMyHandResponse,
        )
        position = int(seat.rsplit("/", 1)[1])
        return OpenFaceHand(response.deal, tuple(response.cards), response.open_face, position)

    def place_cards(
        self,
        seat: str,
        street: int,
        front: Sequence[str],
        middle: Sequence[str],
        back: Sequence[str],
        deal: int | None = None,
    ) -> int:
        """Place the street's cards face up (final); returns the version. With ``deal`` the
        server refuses the call (``WRONG_DEAL``) once another deal is current."""
        request = table_service_pb2.PlaceCardsRequest(
            request_id=request_id(),
            seat=seat,
            street=street,
            placement=open_face_pb2.OpenFaceRows(front=front, middle=middle, back=back),
            deal_number=deal,
        )
        return self.call(
            self.tables.PlaceCards, request, table_service_pb2.PlaceCardsResponse
        ).version

    def commit_fantasyland(self, seat: str, commitment: bytes, deal: int | None = None) -> int:
        """Set the seat's Fantasyland hand face down: a scheme-2 commitment (final); returns the
        version."""
        request = table_service_pb2.CommitFantasylandRequest(
            request_id=request_id(), seat=seat, commitment=commitment, deal_number=deal
        )
        return self.call(
            self.tables.CommitFantasyland, request, table_service_pb2.CommitFantasylandResponse
        ).version

    def reveal_fantasyland(
        self,
        seat: str,
        front: Sequence[str],
        middle: Sequence[str],
        back: Sequence[str],
        nonce: bytes,
        deal: int | None = None,
    ) -> int:
        """Open the committed Fantasyland rows and nonce at the end of the deal; returns the
        version."""
        request = table_service_pb2.RevealFantasylandRequest(
            request_id=request_id(),
            seat=seat,
            arrangement=table_pb2.Arrangement(front=front, middle=middle, back=back),
            nonce=nonce,
            deal_number=deal,
        )
        return self.call(
            self.tables.RevealFantasyland, request, table_service_pb2.RevealFantasylandResponse
        ).version

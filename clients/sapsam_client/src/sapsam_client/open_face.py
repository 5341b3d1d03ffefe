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

Each of these moves is signed by the player's key as commits are (docs/fairness.md §19:
``Client.key_for``, created and registered on first use; off with ``sign_moves = False``): the
message binds the seat's player, which the call asks of the table (``GetTable``) unless the
caller names it (``player``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sapsam_client.commitment import Rows
from sapsam_client.connection import (
    Connection,
    deal_number,
    request_id,
    seat_position,
    table_id,
    table_name,
)
from sapsam_client.player_key import (
    TAG_FANTASYLAND_COMMIT,
    TAG_FANTASYLAND_REVEAL,
    PlayerKey,
    commit_message,
    place_message,
    reveal_message,
)
from sapsam_proto.v1 import open_face_pb2, table_pb2, table_service_pb2

FANTASYLAND_SCHEME = 2
"""A Fantasyland hand's commitment scheme (docs/fairness.md §12.1)."""


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

    # Implemented by PlayerCalls, which Client also is.
    key_for: Callable[[str], PlayerKey | None]

    def _open_face_signature(
        self,
        seat: str,
        deal: int | None,
        player: str | None,
        message: Callable[[int, str], bytes],
    ) -> tuple[int | None, table_service_pb2.PlayerSignature | None]:
        """The deal number and the player's signature of ``message(deal, player_id)`` for a
        move at ``seat`` (None with ``sign_moves`` off); the table is asked for the deal or the
        seat's player when the caller did not give them."""
        if not self.sign_moves:
            return deal, None
        if deal is None or player is None:
            table = self.call(
                self.tables.GetTable,
                table_service_pb2.GetTableRequest(name=table_name(seat)),
                table_service_pb2.GetTableResponse,
            ).table
            if deal is None:
                deal = table.deal_number
            if player is None:
                player = table.seats[seat_position(seat)].player
        player_id = player.removeprefix("players/")
        key = self.key_for(f"players/{player_id}")
        if key is None:
            return deal, None
        signed = key.sign(message(deal, player_id))
        return deal, table_service_pb2.PlayerSignature(public_key=key.public_key, signature=signed)

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
        return OpenFaceHand(
            response.deal, tuple(response.cards), response.open_face, seat_position(seat)
        )

    def place_cards(
        self,
        seat: str,
        street: int,
        front: Sequence[str],
        middle: Sequence[str],
        back: Sequence[str],
        deal: int | None = None,
        *,
        player: str | None = None,
    ) -> int:
        """Place the street's cards face up (final); returns the version. With ``deal`` the
        server refuses the call (``WRONG_DEAL``) once another deal is current. Signed (the
        ``place`` message; ``player``: the seat's player id, else asked of the table)."""
        rows = Rows.of(front, middle, back)
        signed_deal, signature = self._open_face_signature(
            seat,
            deal,
            player,
            lambda number, player_id: place_message(
                table_id(seat), number, seat_position(seat), player_id, street, rows
            ),
        )
        request = table_service_pb2.PlaceCardsRequest(
            request_id=request_id(),
            seat=seat,
            street=street,
            placement=open_face_pb2.OpenFaceRows(front=front, middle=middle, back=back),
            deal_number=deal if signature is None else signed_deal,
            signature=signature,
        )
        return self.call(
            self.tables.PlaceCards, request, table_service_pb2.PlaceCardsResponse
        ).version

    def commit_fantasyland(
        self,
        seat: str,
        commitment: bytes,
        deal: int | None = None,
        *,
        player: str | None = None,
    ) -> int:
        """Set the seat's Fantasyland hand face down: a scheme-2 commitment (final); returns the
        version. Signed (``fantasyland-commit``), as :meth:`place_cards`."""
        signed_deal, signature = self._open_face_signature(
            seat,
            deal,
            player,
            lambda number, player_id: commit_message(
                table_id(seat),
                number,
                seat_position(seat),
                player_id,
                FANTASYLAND_SCHEME,
                commitment,
                tag=TAG_FANTASYLAND_COMMIT,
            ),
        )
        request = table_service_pb2.CommitFantasylandRequest(
            request_id=request_id(),
            seat=seat,
            commitment=commitment,
            deal_number=deal if signature is None else signed_deal,
            signature=signature,
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
        *,
        player: str | None = None,
    ) -> int:
        """Open the committed Fantasyland rows and nonce at the end of the deal; returns the
        version. Signed (``fantasyland-reveal``), as :meth:`place_cards`."""
        rows = Rows.of(front, middle, back)
        signed_deal, signature = self._open_face_signature(
            seat,
            deal,
            player,
            lambda number, player_id: reveal_message(
                table_id(seat),
                number,
                seat_position(seat),
                player_id,
                rows,
                nonce,
                tag=TAG_FANTASYLAND_REVEAL,
            ),
        )
        request = table_service_pb2.RevealFantasylandRequest(
            request_id=request_id(),
            seat=seat,
            arrangement=table_pb2.Arrangement(front=front, middle=middle, back=back),
            nonce=nonce,
            deal_number=deal if signature is None else signed_deal,
            signature=signature,
        )
        return self.call(
            self.tables.RevealFantasyland, request, table_service_pb2.RevealFantasylandResponse
        ).version

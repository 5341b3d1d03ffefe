"""Open face in the SDK (issue #18; docs/api.md "An open-face deal, call by call"): the calls of a
:class:`~sapsam_client.client.Client`, and a seat's hand as ``GetMyHand`` shows it.

::

    table = client.create_open_face_table(4, preset="ofc_classic", move_seconds=30)
    seat = client.join_table(table.name).name
    hand = client.get_open_face_hand(seat)           # its cards so far, the deal as it sees it
    front, middle, back = ...                        # where hand.to_place() goes
    client.place_cards(seat, hand.street, front, middle, back, deal=hand.deal_number)

At a Pineapple table each street after the first deals 3 cards: the seat places 2 and discards 1
(``place_cards(..., discard=[card])``): the SDK commits the discard with a fresh nonce (scheme
3, docs/fairness.md §23), keeps the card and the nonce in ``Client.discard_keeper`` (in memory
unless given a file) and sends only the hash; once every hand is complete
(``hand.discards_due``), :meth:`OpenFaceCalls.reveal_discards` opens them, signed.

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
from sapsam_client.discards import (
    DiscardKeeper,
    KeptDiscard,
    KeptDiscards,
    discards_reveal_message,
    new_discard,
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
    discards: tuple[str, ...] = ()
    """Pineapple: the cards this seat discarded so far (``GetMyHand.my_discards``)."""

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
        placed = {card for row in self.rows for card in row} | set(self.discards)
        return tuple(card for card in self.cards if card not in placed)

    @property
    def discards_due(self) -> bool:
        """Pineapple: every hand is complete and this seat has not opened its discards."""
        me = self.view.seats[self.position]
        return (
            self.view.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_DISCARDS
            and me.discards_made > 0
            and not me.discards
        )

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
    _discard_keeper: DiscardKeeper | None = None

    @property
    def discard_keeper(self) -> DiscardKeeper:
        """Where Pineapple discards are kept until opened: in memory unless set (e.g. to a
        ``CommitmentFile``, so a restarted client still opens them)."""
        if self._discard_keeper is None:
            self._discard_keeper = KeptDiscards()
        return self._discard_keeper

    @discard_keeper.setter
    def discard_keeper(self, keeper: DiscardKeeper) -> None:
        self._discard_keeper = keeper

    def _seat_player(self, seat: str, deal: int | None, player: str | None) -> tuple[int, str]:
        """The deal number and the seat's player id, asked of the table when not given."""
        if deal is None or player is None:
            table = self.call(
                self.tables.GetTable,
                table_service_pb2.GetTableRequest(name=table_name(seat)),
                table_service_pb2.GetTableResponse,
            ).table
            deal = table.deal_number if deal is None else deal
            player = table.seats[seat_position(seat)].player if player is None else player
        return deal, player.removeprefix("players/")

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
            response.deal,
            tuple(response.cards),
            response.open_face,
            seat_position(seat),
            tuple(response.my_discards),
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
        discard: Sequence[str] = (),
    ) -> int:
        """Place the street's cards face up (final); returns the version. With ``deal`` the
        server refuses the call (``WRONG_DEAL``) once another deal is current. Signed (the
        ``place`` message; ``player``: the seat's player id, else asked of the table).

        Pineapple: ``discard``, the dealt card(s) not placed, is committed with a fresh nonce
        and kept in ``discard_keeper`` (before the call: a client that dies after sending it
        still opens it) for :meth:`reveal_discards`; only the commitment is sent."""
        rows = Rows.of(front, middle, back)
        commitment = b""
        if discard:
            deal, player = self._seat_player(seat, deal, player)
            kept = new_discard(
                table_id(seat), deal, seat_position(seat), player, street, list(discard)
            )
            self.discard_keeper.save_discard(seat, kept)
            commitment = kept.commitment
        signed_deal, signature = self._open_face_signature(
            seat,
            deal,
            player,
            lambda number, player_id: place_message(
                table_id(seat), number, seat_position(seat), player_id, street, rows, commitment
            ),
        )
        request = table_service_pb2.PlaceCardsRequest(
            request_id=request_id(),
            seat=seat,
            street=street,
            placement=open_face_pb2.OpenFaceRows(front=front, middle=middle, back=back),
            deal_number=deal if signature is None else signed_deal,
            signature=signature,
            discard_commitment=commitment,
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

    def reveal_discards(
        self,
        seat: str,
        deal: int | None = None,
        *,
        player: str | None = None,
        openings: Sequence[KeptDiscard] | None = None,
    ) -> int:
        """Open the seat's Pineapple discards of the deal at its end (``RevealDiscards``): the
        cards and nonces kept by :meth:`place_cards` (or ``openings``), in street order, signed
        (``discards-reveal``, docs/fairness.md §19); forgotten once the server took them. Returns
        the version. With none kept the call is not made: ``LookupError``."""
        deal, player_id = self._seat_player(seat, deal, player)
        kept = list(openings) if openings is not None else None
        if kept is None:
            kept = self.discard_keeper.load_discards(seat).get(deal, [])
        if not kept:
            raise LookupError(f"no discard of deal {deal} is kept for {seat}")
        kept.sort(key=lambda opening: opening.street)
        _, signature = self._open_face_signature(
            seat,
            deal,
            player_id,
            lambda number, who: discards_reveal_message(
                table_id(seat), number, seat_position(seat), who, kept
            ),
        )
        request = table_service_pb2.RevealDiscardsRequest(
            request_id=request_id(),
            seat=seat,
            discards=[
                table_service_pb2.DiscardOpening(cards=list(opening.cards), nonce=opening.nonce)
                for opening in kept
            ],
            deal_number=deal,
            signature=signature,
        )
        version = self.call(
            self.tables.RevealDiscards, request, table_service_pb2.RevealDiscardsResponse
        ).version
        self.discard_keeper.forget_discards(seat, deal)
        return version

"""Pineapple moves for the domain's tests: a placement with its discard committed as a client
would (docs/fairness.md §23), and the opening of every discard at the end of the deal."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sapsam.domain.open_face.commands import PlaceCards, RevealDiscards
from sapsam.domain.open_face.deal_state import OpenFaceDeal
from sapsam.fairness.discard_commitments import discard_commitment
from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import Board, Placement, discards_due, street_moves

MoveChooser = Callable[[Board, Sequence[Card], int], tuple[Placement, tuple[Card, ...]]]


def last_card_discarded(
    board: Board, dealt: Sequence[Card], discards: int
) -> tuple[Placement, tuple[Card, ...]]:
    """The first of ``street_moves``: the last card dealt discarded, the rest from the back."""
    return street_moves(board, dealt, discards)[0]


@dataclass
class DiscardKeeper:
    """What a Pineapple client keeps between placing and opening: each discard and its nonce."""

    table_id: uuid.UUID
    kept: dict[tuple[int, int, int], tuple[tuple[Card, ...], bytes]] = field(default_factory=dict)

    def place(
        self,
        deal: OpenFaceDeal,
        player: str,
        street: int,
        dealt: tuple[Card, ...],
        choose: MoveChooser = last_card_discarded,
        now_ms: int = 0,
    ) -> PlaceCards:
        """The seat's ``PlaceCards``: its placement and, on a discarding street, the
        commitment to its discard (the card and nonce kept to open it later)."""
        seat = deal.seat_of(player)
        assert seat is not None
        due = discards_due(deal.rules, street)
        placement, thrown = choose(deal.boards[seat], dealt, due)
        if not due:
            return PlaceCards(player, street, placement, dealt, now_ms=now_ms)
        nonce = hashlib.sha256(f"discard {deal.number} {seat} {street}".encode()).digest()[:16]
        self.kept[(deal.number, seat, street)] = (thrown, nonce)
        commitment = discard_commitment(
            self.table_id, deal.number, seat, player, street, thrown, nonce
        )
        return PlaceCards(
            player, street, placement, dealt, now_ms=now_ms, discard_commitment=commitment
        )

    def reveal(
        self, deal: OpenFaceDeal, seat: int, dealt: tuple[tuple[Card, ...], ...]
    ) -> RevealDiscards:
        """The seat's ``RevealDiscards``: every discard it committed, with its nonce."""
        opened = [
            self.kept[(deal.number, seat, street)] for street, _ in deal.discard_commitments[seat]
        ]
        return RevealDiscards(
            deal.players[seat],
            tuple(cards for cards, _ in opened),
            tuple(nonce for _, nonce in opened),
            dealt,
        )

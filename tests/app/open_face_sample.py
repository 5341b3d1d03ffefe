"""Open-face sets played through the real ``TableService``, as players would: each asks for its
own hand (its cards dealt so far and the deal as it may see it) and, on its turn, places the
cards of the street it has not placed yet; a Fantasyland seat sets its hand face down once dealt
and opens it at the end."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field, replace

from sapsam import fairness
from sapsam.app.tables import TableService
from sapsam.domain.open_face.deal_decide import FANTASYLAND_SCHEME
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.table_state import OpenFaceTable, OpenFaceTablePhase
from sapsam.rules.open_face.board import legal_placements
from sapsam.rules.open_face.fantasyland_setting import biggest_row_first
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.presets import open_face_preset

PLAYERS = ("ann", "bob", "cid", "dee")


def rules_of(preset: str = "ofc_classic", move_seconds: int | None = None) -> OpenFaceRules:
    return replace(open_face_preset(preset), move_seconds=move_seconds)


async def seated_open_face_table(
    service: TableService, seats: int, rules: OpenFaceRules, request_id: str = "create"
) -> uuid.UUID:
    created = await service.create_table(rules, seats, "operator", request_id)
    for player in PLAYERS[:seats]:
        await service.join(created.table_id, player, None, f"join-{player}")
    await service.choose_dealer(created.table_id, PLAYERS[0], "dealer")
    return created.table_id


async def load(service: TableService, table_id: uuid.UUID) -> OpenFaceTable:
    state = await service.load(table_id)
    assert isinstance(state, OpenFaceTable)
    return state


async def start_and_cut(service: TableService, table_id: uuid.UUID) -> OpenFaceTable:
    state = await load(service, table_id)
    number = state.deal_number + 1
    await service.start_deal(table_id, "operator", f"start-{table_id}-{number}")
    state = await load(service, table_id)
    assert state.dealer is not None
    cutter = state.seats[fairness.cutter_for(state.dealer, state.seat_count)]
    assert cutter is not None
    await service.cut(table_id, cutter, 5 + number, f"cut-{number}")
    return await load(service, table_id)


@dataclass
class Nonces:
    by_seat: dict[tuple[int, int], bytes] = field(default_factory=dict)


async def play_one_move(service: TableService, table_id: uuid.UUID, nonces: Nonces) -> bool:
    """Make the next move a player owes; False when none is owed (the deal is over)."""
    state = await load(service, table_id)
    play = state.play
    if state.phase is not OpenFaceTablePhase.PLAYING or play is None:
        return False
    number = play.number
    for seat in play.seats:
        player = state.seats[seat]
        assert player is not None
        if play.is_fantasyland(seat) and play.commitments[seat] is None:
            hand = await service.own_hand(table_id, player)
            arrangement, _ = biggest_row_first(hand.cards)
            nonce = hashlib.sha256(f"{table_id} {number} {seat}".encode()).digest()[:16]
            nonces.by_seat[(number, seat)] = nonce
            commitment = fairness.arrangement_commitment(
                table_id,
                number,
                seat,
                arrangement,
                nonce,
                scheme=FANTASYLAND_SCHEME,
                player_id=player,
            )
            await service.commit_fantasyland(table_id, player, commitment, f"fl-{number}")
            return True
    if play.phase is OpenFacePhase.PLACING:
        seat = play.turn
        assert seat is not None
        player = state.seats[seat]
        assert player is not None
        hand = await service.own_hand(table_id, player)
        assert hand.open_face is not None
        board = hand.open_face.seats[seat].board
        assert board is not None
        street_cards = [card for card in hand.cards if card not in board.cards]
        placement = legal_placements(board, street_cards)[0]
        street = play.streets_dealt - 1
        await service.place_cards(table_id, player, street, placement, f"place-{number}-{street}")
        return True
    if play.phase is OpenFacePhase.FANTASYLAND:
        for seat in play.seats:
            if play.is_fantasyland(seat) and not play.revealed[seat]:
                player = state.seats[seat]
                assert player is not None
                hand = await service.own_hand(table_id, player)
                arrangement, _ = biggest_row_first(hand.cards)
                await service.reveal_fantasyland(
                    table_id,
                    player,
                    arrangement,
                    nonces.by_seat[(number, seat)],
                    f"fl-reveal-{number}",
                )
                return True
    raise AssertionError(f"nothing to do in {play.phase}")


async def play_deal(service: TableService, table_id: uuid.UUID, nonces: Nonces) -> None:
    await start_and_cut(service, table_id)
    while await play_one_move(service, table_id, nonces):
        pass


async def play_set(service: TableService, table_id: uuid.UUID) -> OpenFaceTable:
    nonces = Nonces()
    while (await load(service, table_id)).phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        await play_deal(service, table_id, nonces)
    return await load(service, table_id)

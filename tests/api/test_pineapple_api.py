"""Pineapple's discards over a real gRPC server (issue #19): PlaceCards' discard commitment and
RevealDiscards, each bad input refused with a clear reason and nothing written."""

from __future__ import annotations

import uuid

import grpc
import pytest
from api_client import error_reason
from open_face_game import (
    by_seat,
    my_hand,
    open_face_table,
    rows_message,
    start_and_cut,
    street_to_place,
    table_of,
)
from scenarios import World

from sapsam.rules.open_face.board import legal_placements
from sapsam_proto.v1 import table_service_pb2


def _refused(world: World, method: str, request: object, token: str) -> tuple[object, str, str]:
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        world.table_call(method, request, token)
    code, reason, _, bad_request = error_reason(raised.value)
    assert world.event_count() == before, f"{method} wrote on a refusal"
    field = bad_request.field_violations[0].field if bad_request else ""
    return code, reason, field


def test_discard_fields_are_checked_and_a_refusal_writes_nothing(world: World) -> None:
    seated = open_face_table(world, 2, "ofc_classic")
    start_and_cut(world, seated)
    on_turn = by_seat(seated, table_of(world, seated).open_face.turn_seat)
    board, cards = street_to_place(my_hand(world, on_turn), on_turn)
    good = rows_message(*legal_placements(board, cards)[0].rows)
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    precondition = grpc.StatusCode.FAILED_PRECONDITION

    def place(commitment: bytes) -> table_service_pb2.PlaceCardsRequest:
        return table_service_pb2.PlaceCardsRequest(
            request_id=str(uuid.uuid4()),
            seat=on_turn.seat,
            street=0,
            placement=good,
            discard_commitment=commitment,
        )

    # A commitment of the wrong size, before anything else; one on a street that discards
    # nothing (every classic street).
    for size in (1, 31, 33, 100_000):
        assert _refused(world, "PlaceCards", place(bytes(size)), on_turn.token) == (
            invalid,
            "BAD_COMMITMENT",
            "discard_commitment",
        )
    assert _refused(world, "PlaceCards", place(bytes(32)), on_turn.token) == (
        invalid,
        "INVALID_ARGUMENT",
        "discard_commitment",
    )

    def reveal(*openings: table_service_pb2.DiscardOpening) -> object:
        return table_service_pb2.RevealDiscardsRequest(
            request_id=str(uuid.uuid4()), seat=on_turn.seat, discards=list(openings)
        )

    opening = table_service_pb2.DiscardOpening(cards=["2c"], nonce=bytes(16))
    cases = [
        (reveal(*[opening] * 13), (invalid, "INVALID_ARGUMENT", "discards")),
        (
            reveal(table_service_pb2.DiscardOpening(cards=["Zz"], nonce=bytes(16))),
            (invalid, "BAD_CARDS", "discards.cards"),
        ),
        (
            reveal(table_service_pb2.DiscardOpening(cards=["2c", "3c", "4c", "5c"])),
            (invalid, "BAD_CARDS", "discards.cards"),
        ),
        # Well formed, but this seat committed no discard (a classic deal discards nothing).
        (reveal(opening), (precondition, "NO_COMMITMENT", "")),
        (reveal(), (precondition, "NO_COMMITMENT", "")),
    ]
    for request, expected in cases:
        assert _refused(world, "RevealDiscards", request, on_turn.token) == expected, request
    # The right placement with no commitment still goes through.
    world.table_call("PlaceCards", place(b""), on_turn.token)

"""Signed open-face placements over a real server (docs/fairness.md §19): once the player has
registered a key, its PlaceCards must be signed (SIGNATURE_REQUIRED without), by that key, of this
very placement (BAD_SIGNATURE for another placement's signature or another key's), each refusal
writing nothing; the signed one is recorded with its key and signature (``CardsPlaced`` schema 2),
a player without a key still places unsigned, and the deal's export verifies offline with the
player's signatures."""

from __future__ import annotations

import uuid

import grpc
import psycopg
import pytest
from api_client import Player, error_reason
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
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

from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.fairness import player_keys
from sapsam.rules.open_face.board import Placement, legal_placements
from sapsam_proto.v1 import player_service_pb2, table_pb2, table_service_pb2


def _public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _player_id(player: Player) -> str:
    return player.name.removeprefix("players/")


def _register(world: World, player: Player, key: Ed25519PrivateKey) -> None:
    message = player_keys.registration_message(_player_id(player), _public(key))
    request = player_service_pb2.RegisterPlayerKeyRequest(
        request_id=str(uuid.uuid4()), public_key=_public(key), proof=key.sign(message)
    )
    world.table_call("RegisterPlayerKey", request, player.token)


def _signature(
    key: Ed25519PrivateKey,
    table: uuid.UUID,
    deal: int,
    player: Player,
    street: int,
    placement: Placement,
) -> table_service_pb2.PlayerSignature:
    message = player_keys.place_message(
        table, deal, player.position, _player_id(player), street, placement
    )
    return table_service_pb2.PlayerSignature(public_key=_public(key), signature=key.sign(message))


def _place(
    world: World,
    player: Player,
    street: int,
    placement: Placement,
    signature: table_service_pb2.PlayerSignature | None = None,
) -> None:
    request = table_service_pb2.PlaceCardsRequest(
        request_id=str(uuid.uuid4()),
        seat=player.seat,
        street=street,
        placement=rows_message(placement.front, placement.middle, placement.back),
        signature=signature,
    )
    world.table_call("PlaceCards", request, player.token)


def _refused(world: World, call: object) -> tuple[grpc.StatusCode, str, list[str]]:
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        call()  # type: ignore[operator]
    code, reason, _, bad_request = error_reason(raised.value)
    assert world.event_count() == before, "a refused placement wrote"
    fields = [v.field for v in bad_request.field_violations] if bad_request else []
    return code, reason, fields


def test_a_player_with_a_key_signs_its_placements_and_the_deal_verifies(world: World) -> None:
    seated = open_face_table(world, 2, "ofc_classic")
    start_and_cut(world, seated)
    table = table_of(world, seated)
    number = table.open_face.deal_number
    signer = by_seat(seated, table.open_face.turn_seat)
    other = next(player for player in seated.players if player is not signer)
    key = Ed25519PrivateKey.generate()
    _register(world, signer, key)  # from now on every move of its must be signed

    board, cards = street_to_place(my_hand(world, signer), signer)
    placement = legal_placements(board, cards)[0]
    another = Placement(front=cards[:1], back=cards[1:])
    assert sorted(another.back) != sorted(placement.back)
    code, reason, _ = _refused(world, lambda: _place(world, signer, 0, placement))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SIGNATURE_REQUIRED")
    # The player's signature of another placement does not stand for this one.
    wrong = _signature(key, seated.table_id, number, signer, 0, another)
    code, reason, fields = _refused(world, lambda: _place(world, signer, 0, placement, wrong))
    assert (code, reason, fields) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_SIGNATURE",
        ["signature.signature"],
    )
    stranger = _signature(
        Ed25519PrivateKey.generate(), seated.table_id, number, signer, 0, placement
    )
    code, reason, fields = _refused(world, lambda: _place(world, signer, 0, placement, stranger))
    assert (code, reason, fields) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_SIGNATURE",
        ["signature.public_key"],
    )

    # The rest of the deal: the signer signs every placement, the other player none.
    while (table := table_of(world, seated)).phase == table_pb2.TABLE_PHASE_PLAYING:
        player = by_seat(seated, table.open_face.turn_seat)
        street = table.open_face.street
        board, cards = street_to_place(my_hand(world, player), player)
        move = legal_placements(board, cards)[0]
        signed = None
        if player is signer:
            signed = _signature(key, seated.table_id, number, signer, street, move)
        _place(world, player, street, move, signed)

    with psycopg.connect(world.database_url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT schema_version, data FROM events WHERE stream_id = %s"
            " AND type = 'CardsPlaced' ORDER BY version",
            (f"table-{seated.table_id}",),
        ).fetchall()
        export = audit_database.export_deal(
            connection, seated.table_id, number, Requester.operator()
        )
    assert {version for version, _ in rows} == {3}
    own = [data for _, data in rows if data["automatic"] is None]
    mine = [data for data in own if data["seat"] == signer.position]
    theirs = [data for data in own if data["seat"] == other.position]
    assert mine and theirs
    assert all(data["player_key"] == _public(key).hex() and data["signature"] for data in mine)
    assert all((data["player_key"], data["signature"]) == (None, None) for data in theirs)
    automatic = [data for _, data in rows if data["automatic"] is not None]
    assert all(data["signature"] is None for data in automatic)
    report = verify_export(list(write_lines(export)))
    assert report.ok, report.failed_names()
    passed = {check.name for check in report.checks if not check.failed}
    assert f"player_signature[{signer.position}]" in passed
    assert f"player_signature[{other.position}]" not in {c.name for c in report.checks}

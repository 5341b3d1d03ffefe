"""A signed AnnounceSurrender over a real server (docs/fairness.md §19, §20): once the player has
registered a key, its announcement must be signed (SIGNATURE_REQUIRED without), by that key, of
this very announcement (BAD_SIGNATURE for the other choice's signature or another key's), each
refusal writing nothing; the signed one is recorded with its key and signature
(``SurrenderAnnounced`` schema 2), a player without a key still announces unsigned, and the
deal's export verifies offline with the player's signatures."""

from __future__ import annotations

import uuid

import grpc
import psycopg
from api_client import Player
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from scenarios import Chosen, World
from test_surrender_api import announce, in_turn, refused, surrender_table

from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.fairness import player_keys
from sapsam_proto.v1 import player_service_pb2, table_pb2, table_service_pb2

PLAY, SURRENDER = table_pb2.SURRENDER_CHOICE_PLAY, table_pb2.SURRENDER_CHOICE_SURRENDER


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
    key: Ed25519PrivateKey, table: uuid.UUID, deal: int, player: Player, surrender: bool
) -> table_service_pb2.PlayerSignature:
    message = player_keys.announce_message(
        table, deal, player.position, _player_id(player), surrender
    )
    return table_service_pb2.PlayerSignature(public_key=_public(key), signature=key.sign(message))


def test_a_player_with_a_key_signs_its_announcement(world: World) -> None:
    seated = surrender_table(world, 2)
    deal = world.dealt(seated)
    number = int(deal.rsplit("/", 1)[1])
    chosen: dict[str, Chosen] = {}
    for player in seated.players:
        chosen[player.seat] = world.commit(seated, deal, player)
        world.confirm(player)
    first, second = in_turn(world, seated)
    key = Ed25519PrivateKey.generate()
    _register(world, first, key)  # from now on every move of its must be signed

    code, reason, _ = refused(world, lambda: announce(world, first, SURRENDER))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SIGNATURE_REQUIRED")
    # The player's signature of "play" does not stand for a surrender.
    played = _signature(key, seated.table_id, number, first, False)
    code, reason, bad = refused(world, lambda: announce(world, first, SURRENDER, signature=played))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SIGNATURE")
    assert [violation.field for violation in bad.field_violations] == ["signature.signature"]
    stranger = _signature(Ed25519PrivateKey.generate(), seated.table_id, number, first, True)
    code, reason, bad = refused(
        world, lambda: announce(world, first, SURRENDER, signature=stranger)
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SIGNATURE")
    assert [violation.field for violation in bad.field_violations] == ["signature.public_key"]

    signed = _signature(key, seated.table_id, number, first, True)
    announce(world, first, SURRENDER, signature=signed)
    announce(world, second, PLAY)  # no key: unsigned, as before
    with psycopg.connect(world.database_url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT schema_version, data FROM events WHERE stream_id = %s"
            " AND type = 'SurrenderAnnounced' ORDER BY version",
            (f"table-{seated.table_id}",),
        ).fetchall()
    assert [(version, data["seat"], data["surrender"]) for version, data in rows] == [
        (2, first.position, True),
        (2, second.position, False),
    ]
    assert rows[0][1]["player_key"] == _public(key).hex()
    assert rows[0][1]["signature"] == signed.signature.hex()
    assert (rows[1][1]["player_key"], rows[1][1]["signature"]) == (None, None)
    assert rows[0][1]["signing_scheme"] == rows[1][1]["signing_scheme"] == 2

    # The signed player signs its reveal too; the deal's export verifies with its signatures.
    rows_of_first = chosen[first.seat]
    reveal = player_keys.reveal_message(
        seated.table_id,
        number,
        first.position,
        _player_id(first),
        rows_of_first.arrangement,
        rows_of_first.nonce,
    )
    world.table_call(
        "RevealArrangement",
        table_service_pb2.RevealArrangementRequest(
            request_id=str(uuid.uuid4()),
            seat=first.seat,
            arrangement=rows_of_first.rows(),
            nonce=rows_of_first.nonce,
            signature=table_service_pb2.PlayerSignature(
                public_key=_public(key), signature=key.sign(reveal)
            ),
        ),
        first.token,
    )
    world.reveal(second, chosen[second.seat])
    with psycopg.connect(world.database_url, autocommit=True) as connection:
        export = audit_database.export_deal(
            connection, seated.table_id, number, Requester.operator()
        )
    report = verify_export(list(write_lines(export)))
    assert report.ok, report.failed_names()
    passed = {check.name for check in report.checks if not check.failed}
    assert f"player_signature[{first.position}]" in passed

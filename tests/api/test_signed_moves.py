"""Signed commits and reveals over gRPC (docs/fairness.md §19), end to end.

A player registers a key; from then on its CommitArrangement and RevealArrangement must carry its
signature: without one SIGNATURE_REQUIRED, by a key it has not registered or not verifying
BAD_SIGNATURE, and nothing is written either way. A signed move is recorded with its key and
signature, and the deal's export verifies offline with ``player_signature[s]`` passed for the
signing seat (the other player, without a key, plays unsigned as before).
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import grpc
import pytest
from api_client import Player, bearer, error_reason
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from scenarios import Chosen, Seated, World

from sapsam import fairness
from sapsam.audit import verify_export
from sapsam.domain.events import ArrangementCommitted, ArrangementRevealed
from sapsam.fairness import player_keys
from sapsam.rules.presets import preset
from sapsam.rules.solver import solve
from sapsam_proto.v1 import audit_service_pb2, player_service_pb2, table_service_pb2


def _public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _id(player: Player) -> str:
    return player.name.removeprefix("players/")


def _register(world: World, player: Player, key: Ed25519PrivateKey) -> None:
    message = player_keys.registration_message(_id(player), _public(key))
    world.table_call(
        "RegisterPlayerKey",
        player_service_pb2.RegisterPlayerKeyRequest(
            request_id=str(uuid.uuid4()), public_key=_public(key), proof=key.sign(message)
        ),
        player.token,
    )


def _refused(world: World, method: str, request: Any, token: str) -> tuple[str, str, str]:
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        world.table_call(method, request, token)
    code, reason, _, bad_request = error_reason(raised.value)
    assert world.event_count() == before, "a refused move recorded something"
    field = bad_request.field_violations[0].field if bad_request is not None else ""
    return code.name, reason, field


def _signature(key: Ed25519PrivateKey, message: bytes) -> table_service_pb2.PlayerSignature:
    return table_service_pb2.PlayerSignature(public_key=_public(key), signature=key.sign(message))


def _commit_request(
    seated: Seated,
    deal_number: int,
    player: Player,
    chosen: Chosen,
    signature: table_service_pb2.PlayerSignature | None,
) -> table_service_pb2.CommitArrangementRequest:
    commitment = fairness.arrangement_commitment(
        seated.table_id,
        deal_number,
        player.position,
        chosen.arrangement,
        chosen.nonce,
        scheme=2,
        player_id=_id(player),
    )
    request = table_service_pb2.CommitArrangementRequest(
        request_id=str(uuid.uuid4()),
        seat=player.seat,
        commitment=commitment,
        deal_number=deal_number,
        commitment_scheme=2,
    )
    if signature is not None:
        request.signature.CopyFrom(signature)
    return request


def _commit_message(seated: Seated, deal_number: int, player: Player, commitment: bytes) -> bytes:
    return player_keys.commit_message(
        seated.table_id, deal_number, player.position, _id(player), 2, commitment
    )


def test_a_keyed_player_must_sign_and_its_signed_moves_are_recorded(world: World) -> None:
    seated = world.seated()
    signer, other = seated.players
    key, stranger = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    _register(world, signer, key)
    deal = world.dealt(seated)
    number = int(deal.rsplit("/", 1)[1])
    chosen = {
        player.name: Chosen(solve(world.hand(player), preset("pagat")), os.urandom(16))
        for player in seated.players
    }
    mine = chosen[signer.name]
    unsigned = _commit_request(seated, number, signer, mine, None)
    commit_message = _commit_message(seated, number, signer, unsigned.commitment)
    token = signer.token
    assert _refused(world, "CommitArrangement", unsigned, token) == (
        "FAILED_PRECONDITION",
        "SIGNATURE_REQUIRED",
        "",
    )
    by_stranger = _commit_request(
        seated, number, signer, mine, _signature(stranger, commit_message)
    )
    assert _refused(world, "CommitArrangement", by_stranger, token) == (
        "INVALID_ARGUMENT",
        "BAD_SIGNATURE",
        "signature.public_key",
    )
    of_another_move = _commit_request(
        seated, number, signer, mine, _signature(key, commit_message + b"x")
    )
    short = _commit_request(seated, number, signer, mine, _signature(key, commit_message))
    short.signature.signature = short.signature.signature[:63]
    huge = _commit_request(seated, number, signer, mine, _signature(key, commit_message))
    huge.signature.public_key = b"\x07" * 100_000
    for bad, field in (
        (of_another_move, "signature.signature"),
        (short, "signature.signature"),
        (huge, "signature.public_key"),
    ):
        assert _refused(world, "CommitArrangement", bad, token) == (
            "INVALID_ARGUMENT",
            "BAD_SIGNATURE",
            field,
        )
    signed = _commit_request(seated, number, signer, mine, _signature(key, commit_message))
    world.table_call("CommitArrangement", signed, token)
    # The other player has no key: it plays unsigned, as before.
    world.table_call(
        "CommitArrangement",
        _commit_request(seated, number, other, chosen[other.name], None),
        other.token,
    )
    for player in seated.players:
        world.confirm(player)

    reveal = table_service_pb2.RevealArrangementRequest(
        request_id=str(uuid.uuid4()),
        seat=signer.seat,
        arrangement=mine.rows(),
        nonce=mine.nonce,
        deal_number=number,
    )
    assert _refused(world, "RevealArrangement", reveal, token)[:2] == (
        "FAILED_PRECONDITION",
        "SIGNATURE_REQUIRED",
    )
    reveal_message = player_keys.reveal_message(
        seated.table_id, number, signer.position, _id(signer), mine.arrangement, mine.nonce
    )
    reveal.signature.CopyFrom(_signature(key, commit_message))  # the commit's, not the reveal's
    assert _refused(world, "RevealArrangement", reveal, token) == (
        "INVALID_ARGUMENT",
        "BAD_SIGNATURE",
        "signature.signature",
    )
    reveal.signature.CopyFrom(_signature(key, reveal_message))
    world.table_call("RevealArrangement", reveal, token)
    world.reveal(other, chosen[other.name])

    moves = [
        event
        for event in world.api.logged_events(seated.table)
        if isinstance(event, ArrangementCommitted | ArrangementRevealed)
    ]
    assert len(moves) == 4
    for event in moves:
        if event.seat == signer.position:
            assert event.player_key == _public(key).hex() and event.signature is not None
            assert len(bytes.fromhex(event.signature)) == 64
        else:
            assert event.player_key is None and event.signature is None

    exported = world.audit.ExportDeal(
        audit_service_pb2.ExportDealRequest(request_id=str(uuid.uuid4()), name=deal),
        metadata=bearer(token),
    ).export.splitlines()
    report = verify_export(exported)
    assert report.ok, report.failed_names()
    names = [check.name for check in report.checks]
    assert f"player_signature[{signer.position}]" in names
    assert f"player_signature[{other.position}]" not in names
    header = json.loads(exported[0])
    assert header["deals"] == [number]

"""VerifyDeal with players' keys pinned (``player_keys``, docs/audit.md §4.2), as `sapsam audit
verify --player-key`: an export whose signed moves are by the pinned keys passes the
``pinned_player_key`` checks; one showing another key for a pinned player fails, naming it; pins
out of bounds, or with a deal named instead of an export, are INVALID_ARGUMENT on
``player_keys``."""

from __future__ import annotations

import json
import uuid
from typing import Any

import grpc
import psycopg
import pytest
from api_client import OPERATOR_TOKEN, Api, bearer, error_reason
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from sapsam.app.tables import TableService
from sapsam.audit import Requester, write_lines
from sapsam.audit import database as audit_database
from sapsam.audit.sample_play import PLAYERS, play_series
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors
from sapsam_proto.v1 import audit_pb2, audit_service_pb2, audit_service_pb2_grpc

KEYS = {player: Ed25519PrivateKey.generate() for player in PLAYERS[:2]}
ANN, BOB = PLAYERS[0], PLAYERS[1]


def _public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


async def _signed_export(database_url: str) -> str:
    store = await EventStore.connect(database_url, projectors=projectors())
    store.prepare()
    try:
        table_id = await play_series(TableService(store), 2, deals=1, signing_keys=KEYS)
    finally:
        await store.close()
    with psycopg.connect(database_url, autocommit=True) as connection:
        export = audit_database.export_deal(connection, table_id, 1, Requester.operator())
    return "\n".join(write_lines(export)) + "\n"


def _verify(api: Api, **fields: Any) -> audit_service_pb2.VerifyDealResponse:
    stub = audit_service_pb2_grpc.AuditServiceStub(api.channel)
    request = audit_service_pb2.VerifyDealRequest(request_id=str(uuid.uuid4()), **fields)
    response: audit_service_pb2.VerifyDealResponse = stub.VerifyDeal(
        request, metadata=bearer(OPERATOR_TOKEN)
    )
    return response


def _pin(player: str, *keys: bytes) -> audit_service_pb2.PinnedPlayerKeys:
    return audit_service_pb2.PinnedPlayerKeys(player=player, public_keys=list(keys))


def _status(response: audit_service_pb2.VerifyDealResponse, player: str) -> int:
    name = f"pinned_player_key[{player}]"
    return next(check.status for check in response.checks if check.name == name)


async def test_pinned_players_keys_are_checked_in_a_sent_export(
    api: Api, database_url: str
) -> None:
    text = await _signed_export(database_url)
    pins = [_pin(ANN, _public(KEYS[ANN])), _pin(f"players/{BOB}", _public(KEYS[BOB]))]
    honest = _verify(api, export=text, player_keys=pins)
    assert honest.ok
    assert _status(honest, ANN) == _status(honest, BOB) == audit_pb2.CHECK_STATUS_PASSED
    # The same export, ann's moves showing another key: the pin names it.
    stranger = _public(Ed25519PrivateKey.generate()).hex()
    lines = []
    for line in text.splitlines():
        event = json.loads(line)
        data = event.get("data", {})
        if data.get("player_key") == _public(KEYS[ANN]).hex():  # ann's signed moves
            data["player_key"] = stranger
        lines.append(json.dumps(event))
    forged = _verify(api, export="\n".join(lines), player_keys=pins)
    assert not forged.ok and _status(forged, ANN) == audit_pb2.CHECK_STATUS_FAILED
    detail = next(c.detail for c in forged.checks if c.name == f"pinned_player_key[{ANN}]")
    assert stranger in detail


@pytest.mark.parametrize(
    "pins",
    [
        [_pin(ANN, b"x" * 31)],
        [_pin(ANN)],
        [_pin(ANN, b"x" * 32), _pin(ANN, b"y" * 32)],
        [_pin("", b"x" * 32)],
        [_pin(f"p{index}", b"x" * 32) for index in range(17)],
        [_pin(ANN, *(bytes([index]) * 32 for index in range(65)))],
    ],
)
def test_pins_out_of_bounds_are_refused(api: Api, pins: list[Any]) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        _verify(api, export="{}\n", player_keys=pins)
    code, reason, _, bad_request = error_reason(refused.value)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT")
    assert [violation.field for violation in bad_request.field_violations] == ["player_keys"]


def test_pins_go_with_an_export(api: Api) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        _verify(
            api,
            name=f"tables/{uuid.uuid4()}/deals/1",
            player_keys=[_pin(ANN, b"x" * 32)],
        )
    code, _, _, bad_request = error_reason(refused.value)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert [violation.field for violation in bad_request.field_violations] == ["player_keys"]

"""RegisterPlayerKey over gRPC: a player registers Ed25519 public keys (docs/fairness.md §19).

Registered once, answered again on a repeat (idempotent), several per player (rotation), at most
eight; every malformed or foreign key, and every bad proof, is refused with its reason and writes
nothing (the ``player_keys`` rows are counted before and after).
"""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import psycopg
import pytest
from api_client import OPERATOR_TOKEN, Player, error_reason
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from scenarios import World

from sapsam.fairness import player_keys
from sapsam_proto.v1 import player_service_pb2


def _public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _player_id(player: Player) -> str:
    return player.name.removeprefix("players/")


def _request(
    player: Player, key: Ed25519PrivateKey, *, proof_for: str | None = None
) -> player_service_pb2.RegisterPlayerKeyRequest:
    public = _public(key)
    message = player_keys.registration_message(proof_for or _player_id(player), public)
    return player_service_pb2.RegisterPlayerKeyRequest(
        request_id=str(uuid.uuid4()), public_key=public, proof=key.sign(message)
    )


def _rows(world: World) -> int:
    with psycopg.connect(world.database_url, autocommit=True) as connection:
        row = connection.execute("SELECT count(*) FROM player_keys").fetchone()
    assert row is not None
    return int(row[0])


def _register(world: World, player: Player, request: Any) -> Any:
    return world.table_call("RegisterPlayerKey", request, player.token)


def _refused(world: World, token: str, request: Any) -> tuple[str, str, str]:
    before = _rows(world)
    with pytest.raises(grpc.RpcError) as raised:
        world.table_call("RegisterPlayerKey", request, token)
    code, reason, _, bad_request = error_reason(raised.value)
    assert _rows(world) == before, "a refused registration wrote a key"
    field = bad_request.field_violations[0].field if bad_request is not None else ""
    return code.name, reason, field


def test_a_player_registers_a_key_once_and_a_repeat_answers_the_same(world: World) -> None:
    player = world.player("keyed")
    key = Ed25519PrivateKey.generate()
    before = _rows(world)
    first = _register(world, player, _request(player, key))
    assert first.player == player.name and first.public_key == _public(key)
    assert list(first.public_keys) == [_public(key)]
    again = _register(world, player, _request(player, key))  # a new request id, the same key
    assert again.create_time == first.create_time and list(again.public_keys) == [_public(key)]
    assert _rows(world) == before + 1


def test_rotation_adds_a_key_beside_the_old_one(world: World) -> None:
    player = world.player("rotating")
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    _register(world, player, _request(player, old))
    response = _register(world, player, _request(player, new))
    assert list(response.public_keys) == [_public(old), _public(new)]


def test_malformed_keys_and_proofs_are_refused_and_write_nothing(world: World) -> None:
    player = world.player("careless")
    key = Ed25519PrivateKey.generate()
    good = _request(player, key)
    cases: list[tuple[player_service_pb2.RegisterPlayerKeyRequest, str]] = [
        (
            player_service_pb2.RegisterPlayerKeyRequest(request_id="a", proof=good.proof),
            "public_key",
        ),
        (
            player_service_pb2.RegisterPlayerKeyRequest(
                request_id="b", public_key=good.public_key[:31], proof=good.proof
            ),
            "public_key",
        ),
        (
            player_service_pb2.RegisterPlayerKeyRequest(
                request_id="c", public_key=good.public_key + b"\0", proof=good.proof
            ),
            "public_key",
        ),
        (
            player_service_pb2.RegisterPlayerKeyRequest(
                request_id="d", public_key=b"\xff" * 10_000, proof=good.proof
            ),
            "public_key",
        ),
        (
            player_service_pb2.RegisterPlayerKeyRequest(request_id="e", public_key=good.public_key),
            "proof",
        ),
        (
            player_service_pb2.RegisterPlayerKeyRequest(
                request_id="f", public_key=good.public_key, proof=good.proof[:63]
            ),
            "proof",
        ),
        (
            player_service_pb2.RegisterPlayerKeyRequest(
                request_id="g", public_key=good.public_key, proof=bytes(64)
            ),
            "proof",
        ),
        # A valid signature, but of another player's registration message.
        (_request(player, key, proof_for=str(uuid.uuid4())), "proof"),
        # 32 bytes that are no key at all.
        (
            player_service_pb2.RegisterPlayerKeyRequest(
                request_id="h", public_key=b"\xff" * 32, proof=good.proof
            ),
            "proof",
        ),
    ]
    for request, field in cases:
        assert _refused(world, player.token, request) == (
            "INVALID_ARGUMENT",
            "BAD_PLAYER_KEY",
            field,
        ), request


def test_another_players_key_is_refused(world: World) -> None:
    owner, thief = world.player("owner"), world.player("thief")
    key = Ed25519PrivateKey.generate()
    _register(world, owner, _request(owner, key))
    # Even with a valid proof for the thief (it would need the private key to make one).
    assert _refused(world, thief.token, _request(thief, key)) == (
        "INVALID_ARGUMENT",
        "BAD_PLAYER_KEY",
        "public_key",
    )


def test_the_operator_and_strangers_cannot_register_keys(world: World) -> None:
    player = world.player("someone")
    request = _request(player, Ed25519PrivateKey.generate())
    assert _refused(world, OPERATOR_TOKEN, request)[:2] == ("PERMISSION_DENIED", "PLAYERS_ONLY")
    assert _refused(world, "", request)[:2] == ("UNAUTHENTICATED", "MISSING_TOKEN")


def test_a_ninth_key_is_refused_and_writes_nothing(world: World) -> None:
    player = world.player("hoarder")
    keys = [Ed25519PrivateKey.generate() for _ in range(player_keys.MAX_KEYS_PER_PLAYER)]
    for key in keys:
        _register(world, player, _request(player, key))
    request = _request(player, Ed25519PrivateKey.generate())
    assert _refused(world, player.token, request)[:2] == (
        "FAILED_PRECONDITION",
        "PLAYER_KEY_LIMIT",
    )
    # A key it already has is still answered (idempotent), limit or not.
    again = _register(world, player, _request(player, keys[0]))
    assert len(again.public_keys) == player_keys.MAX_KEYS_PER_PLAYER


def test_a_request_id_reused_for_another_key_is_refused_and_writes_nothing(world: World) -> None:
    player = world.player("reuser")
    first = _request(player, Ed25519PrivateKey.generate())
    _register(world, player, first)
    assert _register(world, player, first).public_key == first.public_key  # a retry: answered
    other = _request(player, Ed25519PrivateKey.generate())
    other.request_id = first.request_id
    assert _refused(world, player.token, other) == (
        "INVALID_ARGUMENT",
        "REQUEST_ID_REUSED",
        "request_id",
    )


async def test_display_name_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The directory's display-name cache keeps at most TOKEN_CACHE_SIZE names, the most recent."""
    from sapsam.api import players

    class _Records:
        async def display_names(self, ids: list[str]) -> dict[str, str]:
            return {pid: f"name-{pid}" for pid in ids}

    monkeypatch.setattr(players, "TOKEN_CACHE_SIZE", 3)
    directory = players.PlayerDirectory(_Records())  # type: ignore[arg-type]
    ids = [str(uuid.uuid4()) for _ in range(5)]
    for pid in ids:
        assert await directory.display_names([pid]) == {pid: f"name-{pid}"}
    assert list(directory._names) == ids[-3:]


def test_get_player_lists_the_registered_keys_oldest_first(world: World) -> None:
    player, reader = world.player("published"), world.player("auditor")
    request = player_service_pb2.GetPlayerRequest(name=player.name)
    assert list(world.table_call("GetPlayer", request, reader.token).public_keys) == []
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    _register(world, player, _request(player, old))
    _register(world, player, _request(player, new))
    for token in (reader.token, OPERATOR_TOKEN):  # anyone may fetch them, to pin them
        answer = world.table_call("GetPlayer", request, token)
        assert answer.player.name == player.name
        assert list(answer.public_keys) == [_public(old), _public(new)]

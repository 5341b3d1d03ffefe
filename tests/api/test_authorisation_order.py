"""Authorisation comes before validation, on every RPC of every service.

The RPCs are read from the service descriptors, not listed here, so a new RPC is covered (and
must be given its credential in ``sapsam.api.access.METHOD_ACCESS``) without anyone remembering.
Each is called over a real server with an empty request, which would fail validation everywhere
(no names, no request ids): a caller without the right credential must hear about the credential.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Api, Player, bearer, error_reason
from google.protobuf import descriptor, message_factory
from serving import serving_api

from sapsam.api.access import METHOD_ACCESS, Access, required_access
from sapsam_proto.v1 import (
    audit_service_pb2,
    operator_service_pb2,
    player_service_pb2,
    table_service_pb2,
    tournament_service_pb2,
    transparency_service_pb2,
)

SERVICE_MODULES: tuple[ModuleType, ...] = (
    table_service_pb2,
    player_service_pb2,
    audit_service_pb2,
    tournament_service_pb2,
    transparency_service_pb2,
    operator_service_pb2,
)


def _rpcs() -> list[descriptor.MethodDescriptor]:
    return [
        method
        for module in SERVICE_MODULES
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    ]


def _path(method: descriptor.MethodDescriptor) -> str:
    return f"/{method.containing_service.full_name}/{method.name}"


RPCS = _rpcs()


def test_every_rpc_has_its_credential_in_the_access_table() -> None:
    assert len(RPCS) >= 30
    assert {_path(method) for method in RPCS} == set(METHOD_ACCESS)
    assert required_access("/grpc.health.v1.Health/Check") is Access.PUBLIC
    assert required_access("/sapsam.bench.v1.EchoService/Echo") is Access.CALLER


def _call(channel: grpc.Channel, method: descriptor.MethodDescriptor, metadata: Any) -> str:
    """Call ``method`` with an empty request; the ErrorInfo reason it is refused with, or ''."""
    request_class = message_factory.GetMessageClass(method.input_type)
    response_class = message_factory.GetMessageClass(method.output_type)
    codecs: dict[str, Any] = {
        "request_serializer": request_class.SerializeToString,
        "response_deserializer": response_class.FromString,
    }
    try:
        if method.server_streaming:
            responses: Iterator[Any] = channel.unary_stream(_path(method), **codecs)(
                request_class(), metadata=metadata, timeout=10
            )
            for _ in responses:
                pass
        else:
            channel.unary_unary(_path(method), **codecs)(
                request_class(), metadata=metadata, timeout=10
            )
    except grpc.RpcError as error:
        return error_reason(error)[1]
    return ""


@pytest.fixture(scope="module")
def shared(database_factory: Any) -> Iterator[tuple[Api, Player]]:
    """One server (and one registered player) for every RPC's test: they change nothing."""
    name, url = database_factory.create(migrated=True)
    try:
        with serving_api(url) as api:
            yield api, api.register("Ann")
    finally:
        database_factory.drop(name)


@pytest.mark.parametrize("method", RPCS, ids=_path)
def test_the_credential_is_checked_before_the_request(
    shared: tuple[Api, Player], method: descriptor.MethodDescriptor
) -> None:
    api, player = shared
    access = METHOD_ACCESS[_path(method)]
    malformed = (("authorization", f"bearer {player.token}"),)
    assert _call(api.channel, method, malformed) == "BAD_AUTHORIZATION_HEADER"
    if access is Access.PUBLIC:
        return
    assert _call(api.channel, method, ()) == "MISSING_TOKEN"
    assert _call(api.channel, method, bearer("sps_nobody")) == "UNKNOWN_TOKEN"
    if access is Access.OPERATOR:
        assert _call(api.channel, method, bearer(player.token)) == "OPERATOR_ONLY"
        assert _call(api.channel, method, bearer(OPERATOR_TOKEN)) != "OPERATOR_ONLY"
    if access is Access.PLAYER:
        assert _call(api.channel, method, bearer(OPERATOR_TOKEN)) == "PLAYERS_ONLY"
        assert _call(api.channel, method, bearer(player.token)) != "PLAYERS_ONLY"


def test_a_player_naming_another_player_is_refused_before_the_tournament_is_read(
    shared: tuple[Api, Player],
) -> None:
    api, ann = shared
    bo = api.register("Bo")
    stub_call = api.channel.unary_unary(
        "/sapsam.v1.TournamentService/RegisterTournamentPlayer",
        request_serializer=tournament_service_pb2.RegisterTournamentPlayerRequest.SerializeToString,
        response_deserializer=tournament_service_pb2.RegisterTournamentPlayerResponse.FromString,
    )
    with pytest.raises(grpc.RpcError) as raised:
        stub_call(
            tournament_service_pb2.RegisterTournamentPlayerRequest(
                tournament="not a name", player=bo.name, request_id="\x00"
            ),
            metadata=bearer(ann.token),
        )
    assert error_reason(raised.value)[1] == "OPERATOR_ONLY"


@pytest.mark.parametrize("method", ["RegisterTournamentPlayer", "UnregisterTournamentPlayer"])
def test_who_a_player_names_is_read_by_id_not_by_the_text_of_the_name(
    shared: tuple[Api, Player], method: str
) -> None:
    # A player naming itself in a spelling the API does not accept (upper-case hex) names no one
    # it could compare: the name is malformed (BAD_RESOURCE_NAME on `player`), not another player
    # (a text comparison of the two names called it OPERATOR_ONLY).
    api, ann = shared
    requests = {
        "RegisterTournamentPlayer": tournament_service_pb2.RegisterTournamentPlayerRequest,
        "UnregisterTournamentPlayer": tournament_service_pb2.UnregisterTournamentPlayerRequest,
    }
    request_class = requests[method]
    stub_call = api.channel.unary_unary(
        f"/sapsam.v1.TournamentService/{method}",
        request_serializer=request_class.SerializeToString,
        response_deserializer=lambda data: data,
    )

    def refused(player: str) -> tuple[str, str]:
        with pytest.raises(grpc.RpcError) as raised:
            stub_call(
                request_class(tournament="not a name", player=player, request_id="r"),
                metadata=bearer(ann.token),
            )
        return error_reason(raised.value)[1], raised.value.details() or ""

    shouted = "players/" + ann.name.removeprefix("players/").upper()
    assert shouted != ann.name  # (no letter among 30 random hex digits: one chance in a million)
    reason, details = refused(shouted)
    assert reason == "BAD_RESOURCE_NAME", details
    # Named by its own id, the player gets past the check to the next field's.
    assert refused(ann.name)[0] == "BAD_RESOURCE_NAME"
    assert "tournament" in refused(ann.name)[1]
    bo = api.register("Bo")
    reason, details = refused(bo.name)
    assert reason == "OPERATOR_ONLY"
    assert details == f"only the operator may {method[:-16].lower()} another player"

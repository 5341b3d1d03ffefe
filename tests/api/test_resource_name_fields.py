"""Every resource-name field of every RPC takes the canonical spelling only: a request naming an
existing resource in another spelling (uppercase UUID, ``seats/00``, ``deals/01``) is
INVALID_ARGUMENT, reason BAD_RESOURCE_NAME, on that field, and records nothing; the same request
in the canonical spelling gets past the name (whatever it then answers)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Player, bearer, error_reason
from google.protobuf.message import Message
from scenarios import World, cup_request

from sapsam_proto.v1 import (
    audit_service_pb2,
    player_service_pb2,
    table_service_pb2,
    tournament_service_pb2,
)

RESOURCE_FIELDS = ("name", "table", "seat", "player", "tournament")
SERVICES = (
    (table_service_pb2, "TableService"),
    (player_service_pb2, "PlayerService"),
    (audit_service_pb2, "AuditService"),
    (tournament_service_pb2, "TournamentService"),
)
# Calls a player makes (the operator may not sit or play); the rest are made as the operator.
PLAYER_CALLS = frozenset(
    {
        "JoinTable",
        "ContributeEntropy",
        "CutDeck",
        "GetMyHand",
        "GetSuggestion",
        "CommitArrangement",
        "DeclareNatural",
        "ConfirmArrangement",
        "RevealArrangement",
        "AnnounceSurrender",
        "PlaceCards",
        "CommitFantasyland",
        "RevealFantasyland",
        "RevealDiscards",
    }
)
NAME_KINDS = {
    "GetTable": "table",
    "GetDealResult": "deal",
    "ExportDeal": "deal",
    "VerifyDeal": "deal",
    "ReplayDeal": "deal",
    "GetPlayer": "player",
    "GetTournament": "tournament",
}


def resource_fields() -> list[tuple[str, str, str]]:
    """(service, method, field) for every string field that holds a resource name."""
    found = []
    for module, service in SERVICES:
        for method in module.DESCRIPTOR.services_by_name[service].methods:
            for field in method.input_type.fields:
                if field.name in RESOURCE_FIELDS and field.type == field.TYPE_STRING:
                    found.append((service, method.name, field.name))
    return found


@dataclass
class Resources:
    """Existing resources, each in its canonical and in another spelling."""

    table_id: uuid.UUID
    player: Player
    tournament_id: uuid.UUID

    def canonical(self, kind: str) -> str:
        return {
            "table": f"tables/{self.table_id}",
            "seat": self.player.seat,
            "deal": f"tables/{self.table_id}/deals/1",
            "player": self.player.name,
            "tournament": f"tournaments/{self.tournament_id}",
        }[kind]

    def other_spelling(self, kind: str) -> str:
        seat_number = self.player.seat.rsplit("/", 1)[1]
        return {
            "table": f"tables/{str(self.table_id).upper()}",
            "seat": f"tables/{self.table_id}/seats/0{seat_number}",
            "deal": f"tables/{self.table_id}/deals/01",
            "player": self.player.name.upper().replace("PLAYERS/", "players/"),
            "tournament": f"tournaments/{str(self.tournament_id).upper()}",
        }[kind]


def kind_of(method: str, field: str) -> str:
    return NAME_KINDS[method] if field == "name" else field


@pytest.fixture(scope="module")
def resources(world: World) -> Resources:
    seated = world.seated(seat_count=2)
    tournament = world.tournaments.CreateTournament(
        cup_request("Names cup"),
        metadata=world.operator,
    ).tournament
    tournament_id = uuid.UUID(tournament.name.removeprefix("tournaments/"))
    return Resources(seated.table_id, seated.players[0], tournament_id)


def call(world: World, service: str, method: str, request: Message, token: str) -> None:
    stub: Any = {
        "TableService": world.api.tables,
        "PlayerService": world.api.players,
        "AuditService": world.audit,
        "TournamentService": world.tournaments,
    }[service]
    result = getattr(stub, method)(request, metadata=bearer(token))
    if not isinstance(result, Message):  # a stream: its status comes with the first message
        next(iter(result), None)
        result.cancel()


def request_for(
    service: str, method: str, tested: str, spelling: str, resources: Resources
) -> tuple[Message, str]:
    """The request with ``spelling`` in the tested field, every other name canonical."""
    module = dict((name, module) for module, name in SERVICES)[service]
    descriptor = module.DESCRIPTOR.services_by_name[service].methods_by_name[method]
    request_type = getattr(module, descriptor.input_type.name)
    request = request_type()
    for field in descriptor.input_type.fields:
        if field.name == "request_id":
            request.request_id = str(uuid.uuid4())
        elif field.name in RESOURCE_FIELDS and field.type == field.TYPE_STRING:
            kind = kind_of(method, field.name)
            canonical = resources.canonical(kind)
            setattr(request, field.name, spelling if field.name == tested else canonical)
    token = resources.player.token if method in PLAYER_CALLS else OPERATOR_TOKEN
    return request, token


@pytest.mark.parametrize(("service", "method", "field"), resource_fields())
def test_a_resource_name_in_another_spelling_is_refused(
    world: World, resources: Resources, service: str, method: str, field: str
) -> None:
    spelling = resources.other_spelling(kind_of(method, field))
    request, token = request_for(service, method, field, spelling, resources)
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as refused:
        call(world, service, method, request, token)
    code, reason, _, bad_request = error_reason(refused.value)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RESOURCE_NAME")
    assert [violation.field for violation in bad_request.field_violations] == [field]
    assert world.event_count() == before


@pytest.mark.parametrize(("service", "method", "field"), resource_fields())
def test_the_canonical_spelling_gets_past_the_name(
    world: World, resources: Resources, service: str, method: str, field: str
) -> None:
    canonical = resources.canonical(kind_of(method, field))
    request, token = request_for(service, method, field, canonical, resources)
    if method == "RevokePlayerTokens":  # not the player whose token the other calls use
        request.player = world.player("revoked").name  # type: ignore[attr-defined]
    try:
        call(world, service, method, request, token)
    except grpc.RpcError as error:  # refused for what it asks, not for how it names it
        assert error_reason(error)[1] not in ("BAD_RESOURCE_NAME", "MISSING_FIELD", "INTERNAL")

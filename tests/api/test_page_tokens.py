"""A crafted page_token is BAD_PAGE_TOKEN, never INTERNAL: the values a token carries reach SQL,
so a NUL, a lone surrogate, a value of the wrong type or an id that is not a uuid must be refused
before the statement runs."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from api_client import Api, error_reason

from sapsam.api.server import RunningServer
from sapsam_proto.v1 import table_service_pb2, tournament_service_pb2, tournament_service_pb2_grpc

TABLE = str(uuid.UUID(int=7))


def _token(values: Any) -> str:
    # ensure_ascii: "\ud800" travels as the escape a crafted token would carry.
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode()


TABLE_TOKENS = [
    {"s": 0, "c": "\u0000", "t": TABLE},
    {"s": 0, "c": "\ud800", "t": TABLE},
    {"s": 0, "c": 5, "t": TABLE},
    {"s": 0, "c": "2026-01-01", "t": 5},
    {"s": 0, "c": "2026-01-01", "t": "\u0000"},
    {"s": 0, "c": "2026-01-01", "t": [1]},
]
TOURNAMENT_TOKENS = [
    {"query": "tournaments", "status": 0, "time": 1, "id": "x"},
    {"query": "tournaments", "status": 0, "time": 1, "id": "\u0000"},
    {"query": "tournaments", "status": 0, "time": 1, "id": "\ud800"},
]


@pytest.fixture(scope="module")
def api(module_running_server: RunningServer, module_database_url: str) -> Iterator[Api]:
    with grpc.insecure_channel(f"127.0.0.1:{module_running_server.port}") as channel:
        yield Api(channel, module_database_url)


def _refused_as_bad_token(call: Any) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        call()
    code, reason, _, bad_request = error_reason(raised.value)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_TOKEN")
    assert [violation.field for violation in bad_request.field_violations] == ["page_token"]


@pytest.mark.parametrize("values", TABLE_TOKENS, ids=repr)
def test_a_crafted_list_tables_token_is_a_bad_page_token(api: Api, values: Any) -> None:
    token = api.register("lister").token
    request = table_service_pb2.ListTablesRequest(page_token=_token(values))
    _refused_as_bad_token(lambda: api.call("ListTables", request, token))


@pytest.mark.parametrize("values", TOURNAMENT_TOKENS, ids=repr)
def test_a_crafted_list_tournaments_token_is_a_bad_page_token(api: Api, values: Any) -> None:
    token = api.register("lister").token
    stub = tournament_service_pb2_grpc.TournamentServiceStub(api.channel)
    request = tournament_service_pb2.ListTournamentsRequest(page_token=_token(values))
    _refused_as_bad_token(
        lambda: stub.ListTournaments(request, metadata=(("authorization", f"Bearer {token}"),))
    )

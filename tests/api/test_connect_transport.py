"""The same services over Connect (``sapsam serve --http``, docs/api.md "Browsers: Connect"):
a real server serving gRPC and Connect from one process, called over HTTP/1.1 by a hand-written
Connect client (``connect_http``) and over gRPC, which must answer alike: the same messages, the
same refusals with the same ErrorInfo reason, the same events on the watch."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from api_client import Api, bearer, error_reason
from connect_http import ConnectFailure, server_stream, unary, unary_json
from serving import serving

from sapsam.api.server import RunningServer
from sapsam_proto.v1 import table_service_pb2

TABLES = "/sapsam.v1.TableService"
MISSING_TABLE = f"tables/{uuid.UUID(int=7)}"


@pytest.fixture(scope="module")
def running(module_database_url: str) -> Iterator[RunningServer]:
    """One server for the module, serving gRPC and Connect (a free port each)."""
    with serving(module_database_url, http_listen="127.0.0.1:0") as running:
        yield running


@pytest.fixture(scope="module")
def api(running: RunningServer, module_database_url: str) -> Iterator[Api]:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        yield Api(channel, module_database_url)


@pytest.fixture(scope="module")
def http_port(running: RunningServer) -> int:
    port = running.served.http_port
    assert port is not None
    return port


@pytest.fixture(scope="module")
def table(api: Api) -> tuple[str, str]:
    """A new table (its name) and its creator's token."""
    creator = api.register("creator")
    created = api.call(
        "CreateTable",
        table_service_pb2.CreateTableRequest(
            request_id=str(uuid.uuid4()), rule_set_preset="pagat", seat_count=2
        ),
        creator.token,
    )
    return created.table.name, creator.token


def test_list_rule_sets_in_json(api: Api, http_port: int) -> None:
    """connect-web's default: a JSON body, camel-case fields; the same presets as gRPC."""
    over_grpc = api.tables.ListRuleSets(table_service_pb2.ListRuleSetsRequest())
    over_connect = unary_json(http_port, f"{TABLES}/ListRuleSets", {})
    assert [r["name"] for r in over_connect["presets"]] == [r.name for r in over_grpc.presets]
    assert over_connect.get("nextPageToken", "") == over_grpc.next_page_token


def test_get_table_in_binary(api: Api, http_port: int, table: tuple[str, str]) -> None:
    name, token = table
    request = table_service_pb2.GetTableRequest(name=name)
    over_connect = unary(
        http_port, f"{TABLES}/GetTable", request, table_service_pb2.GetTableResponse, token
    )
    assert over_connect == api.tables.GetTable(request, metadata=bearer(token))


def _grpc_refusal(api: Api, request: Any, token: str) -> tuple[str, str]:
    with pytest.raises(grpc.RpcError) as raised:
        api.tables.GetTable(request, metadata=bearer(token) if token else ())
    code, reason, _, _ = error_reason(raised.value)
    return code.name.lower(), reason


@pytest.mark.parametrize(
    ("table_name", "token"),
    [
        (MISSING_TABLE, "creator"),  # NOT_FOUND
        ("not-a-table-name", "creator"),  # INVALID_ARGUMENT
        (MISSING_TABLE, ""),  # UNAUTHENTICATED: no token
        (MISSING_TABLE, "made-up"),  # UNAUTHENTICATED: an unknown token
    ],
)
def test_refusals_as_over_grpc(
    api: Api, http_port: int, table: tuple[str, str], table_name: str, token: str
) -> None:
    """The same code and ErrorInfo reason over both, the error as Connect writes it (JSON)."""
    token = {"creator": table[1], "made-up": "x" * 43}.get(token, token)
    request = table_service_pb2.GetTableRequest(name=table_name)
    with pytest.raises(ConnectFailure) as raised:
        unary(http_port, f"{TABLES}/GetTable", request, table_service_pb2.GetTableResponse, token)
    failure = raised.value
    assert (failure.code, failure.reason) == _grpc_refusal(api, request, token)
    assert failure.info.domain == "sapsam.dev"
    assert failure.http_status in (400, 401, 404)


def test_watch_table_streams_history_then_live(
    api: Api, http_port: int, table: tuple[str, str]
) -> None:
    """The table's history as gRPC's watch sends it, then a live event as it happens."""
    name, token = table
    request = table_service_pb2.WatchTableRequest(table=name)
    history = len(api.logged_events(name))
    grpc_watch = api.tables.WatchTable(request, metadata=bearer(token))
    expected = [next(grpc_watch) for _ in range(history)]
    grpc_watch.cancel()
    stream = server_stream(
        http_port, f"{TABLES}/WatchTable", request, table_service_pb2.WatchTableResponse, token
    )
    try:
        assert [next(stream) for _ in range(history)] == expected
        player = api.register("joiner")
        api.call(
            "JoinTable",
            table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=name),
            player.token,
        )
        live = next(stream)
        assert live.event.version == expected[-1].event.version + 1
        assert live.event.WhichOneof("payload") == "player_seated"
    finally:
        stream.close()


def test_watch_refused_as_over_grpc(api: Api, http_port: int, table: tuple[str, str]) -> None:
    """A refused watch ends in its end-of-stream message with the same reason."""
    request = table_service_pb2.WatchTableRequest(table=MISSING_TABLE)
    with pytest.raises(grpc.RpcError) as raised:
        next(iter(api.tables.WatchTable(request, metadata=bearer(table[1]))))
    code, reason, _, _ = error_reason(raised.value)
    with pytest.raises(ConnectFailure) as failed:
        next(
            server_stream(
                http_port,
                f"{TABLES}/WatchTable",
                request,
                table_service_pb2.WatchTableResponse,
                table[1],
            )
        )
    assert (failed.value.code, failed.value.reason) == (code.name.lower(), reason)

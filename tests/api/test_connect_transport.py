"""The same services over Connect (``sapsam serve --http``, docs/api.md "Browsers: Connect"):
a real server serving gRPC and Connect from one process, called over HTTP/1.1 by a hand-written
Connect client (``connect_http``) and over gRPC, which must answer alike: the same messages, the
same refusals with the same ErrorInfo reason, the same events on the watch."""

from __future__ import annotations

import http.client
import json
import os
import signal
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from api_client import Api, bearer, error_reason
from connect_http import ConnectCallError, server_stream, unary, unary_json
from serving import TEST_SERVER_KEYS, serving
from test_two_processes import free_port

from sapsam.api.limits import CallerLimits
from sapsam.api.server import (
    DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
    RunningServer,
    ServerConfig,
    start_server,
)
from sapsam.cli.bootstrap import build_services
from sapsam_proto.v1 import table_service_pb2, table_service_pb2_grpc

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
    with pytest.raises(ConnectCallError) as raised:
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
    with pytest.raises(ConnectCallError) as failed:
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


def test_sapsam_serve_http_answers_and_stops_on_sigterm(database_url: str, tmp_path: Path) -> None:
    """`sapsam serve` with SAPSAM_HTTP (as deploy/ would set it): Connect answers beside gRPC,
    and SIGTERM still stops the process cleanly (uvicorn takes no signal of its own)."""
    port, http = free_port(), free_port()
    environment = {
        **os.environ,
        "DATABASE_URL": database_url,
        "SAPSAM_LISTEN": f"127.0.0.1:{port}",
        "SAPSAM_HTTP": f"127.0.0.1:{http}",
        "SAPSAM_DATA_DIR": str(tmp_path / "data"),
        "SAPSAM_GRACE_SECONDS": "0.5",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "sapsam.cli", "serve"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "the server exited"
            try:
                answer = unary_json(http, f"{TABLES}/ListRuleSets", {"pageSize": 1})
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        assert [preset["name"] for preset in answer["presets"]] == ["pagat"]
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            assert process.wait(60) == 0
        finally:
            if process.poll() is None:
                process.kill()


def test_grpc_web_is_answered_too(api: Api, http_port: int) -> None:
    """gRPC-web (the status in a trailer frame of the body): ListRuleSets as over gRPC."""
    request = table_service_pb2.ListRuleSetsRequest().SerializeToString()
    connection = http.client.HTTPConnection("127.0.0.1", http_port, timeout=10)
    try:
        connection.request(
            "POST",
            f"{TABLES}/ListRuleSets",
            struct.pack(">BI", 0, len(request)) + request,
            {"Content-Type": "application/grpc-web+proto", "X-Grpc-Web": "1"},
        )
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    assert response.status == 200
    frames = []
    while body:
        flags, length = struct.unpack(">BI", body[:5])
        frames.append((flags, body[5 : 5 + length]))
        body = body[5 + length :]
    (data_flags, data), (trailer_flags, trailer) = frames
    assert (data_flags, trailer_flags) == (0, 0x80)
    assert b"grpc-status: 0" in trailer.lower().replace(b"grpc-status:0", b"grpc-status: 0")
    over_grpc = api.tables.ListRuleSets(table_service_pb2.ListRuleSetsRequest())
    assert table_service_pb2.ListRuleSetsResponse.FromString(data) == over_grpc


def test_a_players_streams_count_once_across_both_transports(
    module_database_url: str, table: tuple[str, str]
) -> None:
    """One set of limits per caller: with one stream allowed, a player watching over gRPC is
    refused a second watch over Connect (TOO_MANY_STREAMS), and served once the first ends."""
    name, token = table
    services = build_services(module_database_url, server_keys=TEST_SERVER_KEYS)
    running = start_server(
        ServerConfig(
            listen="127.0.0.1:0",
            http_listen="127.0.0.1:0",
            grace_seconds=1,
            limits=CallerLimits(streams_per_caller=1),
        ),
        services,
    )
    try:
        http = running.served.http_port
        assert http is not None
        request = table_service_pb2.WatchTableRequest(table=name)
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            tables = table_service_pb2_grpc.TableServiceStub(channel)
            grpc_watch = tables.WatchTable(request, metadata=bearer(token))
            first = next(grpc_watch)
            path, response = f"{TABLES}/WatchTable", table_service_pb2.WatchTableResponse
            with pytest.raises(ConnectCallError) as refused:
                next(server_stream(http, path, request, response, token))
            assert (refused.value.code, refused.value.reason) == (
                "resource_exhausted",
                "TOO_MANY_STREAMS",
            )
            grpc_watch.cancel()
            deadline = time.monotonic() + 10
            while True:  # the cancelled stream is released on the server's loop
                try:
                    stream = server_stream(http, path, request, response, token)
                    assert next(stream) == first
                    stream.close()
                    break
                except ConnectCallError:
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
    finally:
        running.stop()


def _post(port: int, path: str, body: bytes, content_type: str, token: str) -> tuple[int, Any]:
    """A raw Connect POST: the HTTP status and the JSON error body (None when not JSON)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Content-Type": content_type, "Connect-Protocol-Version": "1"}
        headers["Authorization"] = f"Bearer {token}"
        connection.request("POST", path, body, headers)
        response = connection.getresponse()
        answer = response.read()
        is_json = response.getheader("Content-Type") == "application/json"
        return response.status, json.loads(answer) if is_json and answer else None
    finally:
        connection.close()


def test_an_oversized_body_is_refused_writing_nothing(
    api: Api, running: RunningServer, http_port: int, table: tuple[str, str]
) -> None:
    """A body over the server's message limit (as gRPC's ``max_receive_message_length``): a
    Connect error naming the limit, and the call's command is never run (no event appended)."""
    _, token = table
    limit = DEFAULT_MAX_RECEIVE_MESSAGE_BYTES
    request = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()), rule_set_preset="x" * (limit + 1), seat_count=2
    )
    before = api.event_count()
    status, error = _post(
        http_port, f"{TABLES}/CreateTable", request.SerializeToString(), "application/proto", token
    )
    assert status == 429, (status, error)
    assert error is not None and error["code"] == "resource_exhausted"
    assert str(limit) in error["message"], error
    assert api.event_count() == before
    # The server goes on serving.
    assert unary_json(http_port, f"{TABLES}/ListRuleSets", {})["presets"]


@pytest.mark.parametrize(
    "path", [f"{TABLES}/NoSuchMethod", "/sapsam.v1.NoSuchService/GetTable", "/", "/metrics"]
)
def test_an_unknown_path_is_not_found(
    api: Api, http_port: int, table: tuple[str, str], path: str
) -> None:
    """A path that names no method: HTTP 404, nothing run and nothing written."""
    before = api.event_count()
    status, _ = _post(http_port, path, b"{}", "application/json", table[1])
    assert status == 404
    assert api.event_count() == before

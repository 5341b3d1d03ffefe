"""The server shell on a real socket: health, reflection, authentication, error mapping, call log.

The servicers here are the generated base classes (every RPC answers UNIMPLEMENTED) plus a small
servicer that raises on purpose, so these tests exercise only what wraps every call. The token
lookup is an in-memory table; the store-backed one is tested with the real servicers.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from sapsam.api import auth, errors
from sapsam.api.auth import TokenLookup
from sapsam.api.call_log import LOGGER_NAME
from sapsam.api.server import RunningServer, ServerConfig, Services, start_server
from sapsam.domain.errors import DomainError, Reason
from sapsam.log.records import ConcurrencyConflict
from sapsam.store.player_tokens import PlayerToken
from sapsam_proto.v1 import (
    player_service_pb2,
    player_service_pb2_grpc,
    table_event_pb2,
    table_service_pb2,
    table_service_pb2_grpc,
)

PLAYER_TOKEN = auth.new_token()
PLAYER_ID = "0b6f3a52-4f7e-4a43-9f57-1d2b9f0c7e11"
OPERATOR_TOKEN = "operator-" + auth.new_token()
TABLE = "tables/5b0e8c7e-3c55-4d7e-8f0a-3a1f2e9d6c01"


class RaisingTableService(table_service_pb2_grpc.TableServiceServicer):  # type: ignore[misc]
    """GetTable raises what the table id asks for; WatchTable sends one event, then raises."""

    def GetTable(  # noqa: N802 (generated method name)
        self, request: table_service_pb2.GetTableRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.GetTableResponse:
        kind = request.name.removeprefix("tables/")
        if kind == "turn":
            raise DomainError(Reason.NOT_YOUR_TURN, "it is seat 2's turn to cut")
        if kind == "cards":
            raise DomainError(Reason.BAD_CARDS, "Zs is not a card", field="arrangement.front")
        if kind == "race":
            raise ConcurrencyConflict(request.name, expected_version=16, current_version=17)
        if kind == "stale":
            raise errors.version_mismatch(expected=3, current=9)
        if kind == "secret":
            raise RuntimeError("seed=00ff00ff nonce=abcdef")
        caller = auth.current_caller()
        return table_service_pb2.GetTableResponse(
            table={"name": request.name, "creator": caller.player_name}
        )

    def WatchTable(  # noqa: N802 (generated method name)
        self, request: table_service_pb2.WatchTableRequest, context: grpc.ServicerContext
    ) -> Iterator[table_service_pb2.WatchTableResponse]:
        yield table_service_pb2.WatchTableResponse(
            event=table_event_pb2.TableEvent(table=request.table, version=1, type="TableCreated")
        )
        raise DomainError(Reason.TABLE_NOT_FOUND, "no such table")


def _lookup(tokens: dict[bytes, PlayerToken]) -> TokenLookup:
    async def lookup(token_hash: bytes) -> PlayerToken | None:
        return tokens.get(token_hash)

    return lookup


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    services = Services(
        table_service=RaisingTableService(),
        player_service=player_service_pb2_grpc.PlayerServiceServicer(),
        token_lookup=_lookup({auth.hash_token(PLAYER_TOKEN): PlayerToken(PLAYER_ID)}),
    )
    running = start_server(
        ServerConfig(listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=1),
        services,
    )
    yield running
    running.stop()


@pytest.fixture()
def channel(server: RunningServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield channel


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def error_details(error: grpc.RpcError) -> tuple[Any, Any]:
    """The ErrorInfo and BadRequest (or None) of a failed call."""
    status = rpc_status.from_call(error)
    assert status is not None, "every error carries a google.rpc.Status"
    info, bad_request = None, None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad_request = error_details_pb2.BadRequest()
            detail.Unpack(bad_request)
    assert info is not None and info.domain == "sapsam.dev"
    return info, bad_request


def get_table_error(channel: grpc.Channel, name: str, token: str = PLAYER_TOKEN) -> grpc.RpcError:
    stub = table_service_pb2_grpc.TableServiceStub(channel)
    with pytest.raises(grpc.RpcError) as raised:
        stub.GetTable(table_service_pb2.GetTableRequest(name=name), metadata=bearer(token))
    return raised.value


def test_health_reports_serving_without_a_token(channel: grpc.Channel) -> None:
    stub = health_pb2_grpc.HealthStub(channel)
    for service in ("", "sapsam.v1.TableService", "sapsam.v1.PlayerService"):
        response = stub.Check(health_pb2.HealthCheckRequest(service=service))
        assert response.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_and_describes_the_services(channel: grpc.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    requests = [
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="sapsam.v1.TableService"),
    ]
    listed, described = list(stub.ServerReflectionInfo(iter(requests)))
    names = {service.name for service in listed.list_services_response.service}
    assert {"sapsam.v1.TableService", "sapsam.v1.PlayerService", "grpc.health.v1.Health"} <= names
    files = described.file_descriptor_response.file_descriptor_proto
    assert any(b"sapsam/v1/table_service.proto" in file for file in files)


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        ((), "MISSING_TOKEN"),
        ((("authorization", "Basic dXNlcjpwYXNz"),), "BAD_AUTHORIZATION_HEADER"),
        ((("authorization", "Bearer "),), "BAD_AUTHORIZATION_HEADER"),
        ((("authorization", f"bearer {PLAYER_TOKEN}"),), "BAD_AUTHORIZATION_HEADER"),
        (bearer("sps_not-a-token-anyone-holds"), "UNKNOWN_TOKEN"),
    ],
)
def test_calls_without_a_known_token_are_unauthenticated(
    channel: grpc.Channel, metadata: tuple[tuple[str, str], ...], reason: str
) -> None:
    stub = table_service_pb2_grpc.TableServiceStub(channel)
    with pytest.raises(grpc.RpcError) as raised:
        stub.GetTable(table_service_pb2.GetTableRequest(name=TABLE), metadata=metadata)
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
    info, _ = error_details(raised.value)
    assert info.reason == reason
    with pytest.raises(grpc.RpcError) as streamed:
        list(stub.WatchTable(table_service_pb2.WatchTableRequest(table=TABLE), metadata=metadata))
    assert streamed.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_details(streamed.value)[0].reason == reason


def test_a_known_player_token_reaches_the_servicer_as_that_player(channel: grpc.Channel) -> None:
    stub = table_service_pb2_grpc.TableServiceStub(channel)
    response = stub.GetTable(
        table_service_pb2.GetTableRequest(name=TABLE), metadata=bearer(PLAYER_TOKEN)
    )
    assert response.table.creator == f"players/{PLAYER_ID}"


def test_the_operator_token_is_the_operator(channel: grpc.Channel) -> None:
    stub = table_service_pb2_grpc.TableServiceStub(channel)
    response = stub.GetTable(
        table_service_pb2.GetTableRequest(name=TABLE), metadata=bearer(OPERATOR_TOKEN)
    )
    assert response.table.creator == ""  # the operator is no player


def test_register_player_needs_no_token(channel: grpc.Channel) -> None:
    stub = player_service_pb2_grpc.PlayerServiceStub(channel)
    with pytest.raises(grpc.RpcError) as raised:
        stub.RegisterPlayer(player_service_pb2.RegisterPlayerRequest(display_name="Ann"))
    # Past authentication: the base servicer answers UNIMPLEMENTED, untouched by error mapping.
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
    with pytest.raises(grpc.RpcError) as refused:
        stub.GetPlayer(player_service_pb2.GetPlayerRequest(name=f"players/{PLAYER_ID}"))
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_a_refused_command_maps_through_the_reason_table(channel: grpc.Channel) -> None:
    error = get_table_error(channel, "tables/turn")
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error.details() == "it is seat 2's turn to cut"
    info, bad_request = error_details(error)
    assert info.reason == "NOT_YOUR_TURN"
    assert bad_request is None


def test_malformed_input_names_the_field(channel: grpc.Channel) -> None:
    error = get_table_error(channel, "tables/cards")
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, bad_request = error_details(error)
    assert info.reason == "BAD_CARDS"
    assert [(v.field, v.description) for v in bad_request.field_violations] == [
        ("arrangement.front", "Zs is not a card")
    ]


@pytest.mark.parametrize(
    ("name", "reason", "version"),
    [("tables/race", "CONCURRENCY_CONFLICT", "17"), ("tables/stale", "VERSION_MISMATCH", "9")],
)
def test_aborted_carries_the_current_version(
    channel: grpc.Channel, name: str, reason: str, version: str
) -> None:
    error = get_table_error(channel, name)
    assert error.code() == grpc.StatusCode.ABORTED
    info, _ = error_details(error)
    assert info.reason == reason
    assert info.metadata["current_version"] == version


def test_an_unexpected_error_is_internal_and_leaks_nothing(
    channel: grpc.Channel, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        error = get_table_error(channel, "tables/secret")
    assert error.code() == grpc.StatusCode.INTERNAL
    assert error.details() == "internal error"
    assert error_details(error)[0].reason == "INTERNAL"
    assert "RuntimeError" in caplog.text  # the operator learns what failed, and where
    assert "00ff00ff" not in caplog.text and "abcdef" not in caplog.text


def test_a_stream_ends_with_the_mapped_status(channel: grpc.Channel) -> None:
    stub = table_service_pb2_grpc.TableServiceStub(channel)
    received = []
    with pytest.raises(grpc.RpcError) as raised:
        for message in stub.WatchTable(
            table_service_pb2.WatchTableRequest(table=TABLE), metadata=bearer(PLAYER_TOKEN)
        ):
            received.append(message.event.version)
    assert received == [1]
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    assert error_details(raised.value)[0].reason == "TABLE_NOT_FOUND"


def test_one_json_log_line_per_call_without_the_token(
    channel: grpc.Channel, caplog: pytest.LogCaptureFixture
) -> None:
    stub = table_service_pb2_grpc.TableServiceStub(channel)
    with caplog.at_level(logging.INFO, logger=LOGGER_NAME):
        stub.GetTable(table_service_pb2.GetTableRequest(name=TABLE), metadata=bearer(PLAYER_TOKEN))
        with pytest.raises(grpc.RpcError):
            stub.GetTable(table_service_pb2.GetTableRequest(name=TABLE))
        with pytest.raises(grpc.RpcError):
            stub.CutDeck(
                table_service_pb2.CutDeckRequest(seat=f"{TABLE}/seats/2", position=7),
                metadata=bearer(PLAYER_TOKEN),
            )
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == LOGGER_NAME]
    table_id = TABLE.removeprefix("tables/")
    assert [(line["method"], line["status"], line["table"], line["seat"]) for line in lines] == [
        ("/sapsam.v1.TableService/GetTable", "OK", table_id, None),
        ("/sapsam.v1.TableService/GetTable", "UNAUTHENTICATED", table_id, None),
        ("/sapsam.v1.TableService/CutDeck", "UNIMPLEMENTED", table_id, 2),
    ]
    assert all(isinstance(line["duration_ms"], float) for line in lines)
    assert PLAYER_TOKEN not in caplog.text


def test_every_domain_reason_has_a_status() -> None:
    missing = [reason.value for reason in Reason if reason not in errors.STATUS_BY_REASON]
    assert missing == []


def test_unlisted_reasons_are_refusals_not_internal_errors() -> None:
    assert errors.status_code_for("SOMETHING_NEW") == grpc.StatusCode.FAILED_PRECONDITION
    assert errors.status_code_for("NOT_SEATED") == grpc.StatusCode.PERMISSION_DENIED


def test_tls_only_with_the_configured_certificate(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    services = Services(
        table_service=RaisingTableService(),
        player_service=player_service_pb2_grpc.PlayerServiceServicer(),
        token_lookup=_lookup({}),
    )
    running = start_server(
        ServerConfig(listen="127.0.0.1:0", tls_cert=cert, tls_key=key, grace_seconds=1), services
    )
    try:
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        with grpc.secure_channel(f"localhost:{running.port}", credentials) as secure:
            response = health_pb2_grpc.HealthStub(secure).Check(
                health_pb2.HealthCheckRequest(), timeout=10
            )
            assert response.status == health_pb2.HealthCheckResponse.SERVING
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as plaintext:
            with pytest.raises(grpc.RpcError) as raised:
                health_pb2_grpc.HealthStub(plaintext).Check(
                    health_pb2.HealthCheckRequest(), timeout=5
                )
            assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        running.stop()


def test_the_api_guide_lists_every_reason_with_its_status() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    section = guide.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].startswith("`"):
            for reason in cells[1].replace("`", "").split(","):
                rows[reason.strip()] = cells[0]
    assert rows == {reason: code.name for reason, code in errors.STATUS_BY_REASON.items()}

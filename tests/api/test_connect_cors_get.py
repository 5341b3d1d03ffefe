"""CORS and GET on the Connect transport (docs/api.md, "Browsers: Connect"): a page from an
allowed origin may call the services (its preflight answered, every answer marked for it), a
page from another origin may not read them; the reads marked ``NO_SIDE_EFFECTS`` in proto/
answer a Connect GET as they answer a POST, and the other calls refuse GET."""

from __future__ import annotations

import base64
import http.client
import json
import subprocess
import sys
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from connect_http import ConnectCallError, unary, unary_json
from serving import serving

from sapsam.api.cors import ALLOWED_HEADERS, parse_origins
from sapsam.api.server import RunningServer
from sapsam_proto.v1 import player_service_pb2, table_service_pb2

TABLES = "/sapsam.v1.TableService"
PAGE = "http://page.example:5173"
OTHER = "https://elsewhere.example"


@pytest.fixture(scope="module")
def running(module_database_url: str) -> Iterator[RunningServer]:
    with serving(
        module_database_url, http_listen="127.0.0.1:0", http_allowed_origins=(PAGE,)
    ) as running:
        yield running


@pytest.fixture(scope="module")
def port(running: RunningServer) -> int:
    http_port = running.served.http_port
    assert http_port is not None
    return http_port


def _request(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, body, headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _preflight(port: int, origin: str, method: str = "POST", headers: str = "") -> Any:
    asked = headers or "content-type,connect-protocol-version,authorization,connect-timeout-ms"
    return _request(
        port,
        "OPTIONS",
        f"{TABLES}/GetTable",
        {
            "Origin": origin,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": asked,
        },
    )


def test_preflight_from_an_allowed_origin(port: int) -> None:
    status, headers, _ = _preflight(port, PAGE)
    assert status == 204
    assert headers["access-control-allow-origin"] == PAGE
    assert headers["access-control-allow-methods"] == "GET, POST"
    allowed = headers["access-control-allow-headers"].split(", ")
    assert {"authorization", "content-type", "connect-protocol-version"} <= set(allowed)
    assert headers["vary"] == "Origin"
    assert int(headers["access-control-max-age"]) > 0


@pytest.mark.parametrize(
    ("origin", "method", "asked"),
    [
        (OTHER, "POST", ""),  # an origin not allowed
        (PAGE, "DELETE", ""),  # a method Connect does not use
        (PAGE, "POST", "content-type,cookie"),  # a header not allowed
    ],
)
def test_preflight_refused(port: int, origin: str, method: str, asked: str) -> None:
    status, headers, _ = _preflight(port, origin, method, asked)
    assert status == 403
    assert "access-control-allow-origin" not in headers


def _list_rule_sets(port: int, origin: str | None) -> tuple[int, dict[str, str], Any]:
    headers = {"Content-Type": "application/json", "Connect-Protocol-Version": "1"}
    if origin is not None:
        headers["Origin"] = origin
    status, answer, body = _request(port, "POST", f"{TABLES}/ListRuleSets", headers, b"{}")
    return status, answer, json.loads(body)


def test_answers_marked_for_an_allowed_origin_only(port: int) -> None:
    status, headers, body = _list_rule_sets(port, PAGE)
    assert status == 200 and body["presets"]
    assert headers["access-control-allow-origin"] == PAGE
    assert "grpc-status" in headers["access-control-expose-headers"]
    # Another origin is served, but without the header the browser hides the answer.
    status, headers, body = _list_rule_sets(port, OTHER)
    assert status == 200 and body["presets"]
    assert "access-control-allow-origin" not in headers
    # No Origin (curl, the SDK): nothing added.
    status, headers, _ = _list_rule_sets(port, None)
    assert status == 200 and "access-control-allow-origin" not in headers


def test_every_answer_varies_with_the_origin(port: int) -> None:
    """A cache (a Connect GET is cacheable) keeping an answer without the CORS headers, for a
    request without an Origin or from another origin, must not reuse it for an allowed page."""
    query = urllib.parse.urlencode({"connect": "v1", "encoding": "json", "message": "{}"})
    for origin in (None, OTHER, PAGE):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            connection.request(
                "GET",
                f"{TABLES}/ListRuleSets?{query}",
                headers={"Origin": origin} if origin else {},
            )
            response = connection.getresponse()
            response.read()
            varies = {
                name.strip().lower()
                for key, value in response.getheaders()
                if key.lower() == "vary"
                for name in value.split(",")
            }
        finally:
            connection.close()
        assert response.status == 200 and "origin" in varies, (origin, response.getheaders())


def test_an_error_is_marked_too(port: int) -> None:
    """A refusal (here UNAUTHENTICATED) must reach the page too, to show its reason."""
    status, headers, body = _request(
        port,
        "POST",
        f"{TABLES}/GetTable",
        {"Content-Type": "application/json", "Connect-Protocol-Version": "1", "Origin": PAGE},
        json.dumps({"name": f"tables/{uuid.UUID(int=7)}"}).encode(),
    )
    assert status == 401 and json.loads(body)["code"] == "unauthenticated"
    assert headers["access-control-allow-origin"] == PAGE


def _get(port: int, path: str, query: dict[str, str], token: str = "") -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    status, _, body = _request(
        port, "GET", f"{path}?{urllib.parse.urlencode({'connect': 'v1', **query})}", headers
    )
    return status, body


def test_get_of_a_read_answers_as_post(port: int) -> None:
    """Connect's GET form: the message in the query, JSON or base64 binary."""
    posted = unary_json(port, f"{TABLES}/ListRuleSets", {"pageSize": 2})
    status, body = _get(
        port, f"{TABLES}/ListRuleSets", {"encoding": "json", "message": '{"pageSize": 2}'}
    )
    assert status == 200 and json.loads(body) == posted
    message = table_service_pb2.ListRuleSetsRequest(page_size=2).SerializeToString()
    status, body = _get(
        port,
        f"{TABLES}/ListRuleSets",
        {
            "encoding": "proto",
            "base64": "1",
            "message": base64.urlsafe_b64encode(message).decode().rstrip("="),
        },
    )
    binary = unary(
        port,
        f"{TABLES}/ListRuleSets",
        table_service_pb2.ListRuleSetsRequest(page_size=2),
        table_service_pb2.ListRuleSetsResponse,
    )
    assert status == 200 and table_service_pb2.ListRuleSetsResponse.FromString(body) == binary


def test_get_with_a_token(port: int) -> None:
    """A read for a player: the token in the Authorization header, as with POST."""
    registered = unary_json(
        port, "/sapsam.v1.PlayerService/RegisterPlayer", {"displayName": "Getter"}
    )
    token, name = registered["token"], registered["player"]["name"]
    status, body = _get(
        port,
        "/sapsam.v1.PlayerService/GetPlayer",
        {"encoding": "json", "message": json.dumps({"name": name})},
        token,
    )
    expected = unary(
        port,
        "/sapsam.v1.PlayerService/GetPlayer",
        player_service_pb2.GetPlayerRequest(name=name),
        player_service_pb2.GetPlayerResponse,
        token,
    )
    assert status == 200
    assert json.loads(body)["player"]["displayName"] == expected.player.display_name == "Getter"


def test_get_refused_for_a_call_that_records(port: int) -> None:
    status, _ = _get(
        port,
        "/sapsam.v1.PlayerService/RegisterPlayer",
        {"encoding": "json", "message": '{"displayName": "x"}'},
    )
    assert status == 405


def test_parse_origins() -> None:
    assert parse_origins("http://a.example, https://b.example:8443 *") == (
        "http://a.example",
        "https://b.example:8443",
        "*",
    )
    assert parse_origins("") == ()
    for bad in ("a.example", "ftp://a.example", "https://a.example/page"):
        with pytest.raises(ValueError, match="--http-allowed-origins"):
            parse_origins(bad)
    assert "cookie" not in ALLOWED_HEADERS  # tokens travel as bearer headers, never cookies


def test_serve_refuses_origins_without_http() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sapsam.cli", "serve", "--http-allowed-origins", PAGE],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--http-allowed-origins needs --http" in done.stderr


@pytest.mark.parametrize(
    ("method", "query"),
    [
        ("GET", {"encoding": "json", "message": '{"pageSize": "' + "9" * 300}),
        ("GET", {"encoding": "json", "message": '{"pageSize": "' + "x" * 300 + '"}'}),
        ("GET", {"encoding": "proto", "base64": "1", "message": "__8"}),  # b"\xff\xff"
        ("POST", {"encoding": "json", "message": '{"pageSize": "' + "x" * 300 + '"}'}),
        ("POST", {"encoding": "proto", "message": "\xff\xff\xff"}),
    ],
    ids=["get-json-cut", "get-json-type", "get-proto", "post-json", "post-proto"],
)
def test_an_undecodable_message_is_invalid_argument_with_error_info(
    port: int, method: str, query: dict[str, str]
) -> None:
    """A message that does not parse, in a GET's query or a POST's body: INVALID_ARGUMENT with
    ErrorInfo, as over gRPC (tests/api/test_undecodable_requests.py), quoting none of it."""
    path = f"{TABLES}/ListRuleSets"
    if method == "GET":
        status, body = _get(port, path, query)
    else:
        json_body = query["encoding"] == "json"
        status, _, body = _request(
            port,
            "POST",
            path,
            {
                "Content-Type": "application/json" if json_body else "application/proto",
                "Connect-Protocol-Version": "1",
            },
            query["message"].encode("utf-8" if json_body else "latin-1"),
        )
    error = ConnectCallError.from_json(status, json.loads(body))
    assert (error.http_status, error.code) == (400, "invalid_argument"), error
    assert error.reason == "INVALID_ARGUMENT", error
    assert "xxxx" not in error.message and "9999" not in error.message, error
    assert "Error" not in error.message, error  # no parser's exception leaks

"""A request body that is not the method's message (bytes that do not parse, a string field that
is not UTF-8) is answered INVALID_ARGUMENT with ErrorInfo, after authentication, and logged like
any call: grpc.aio decodes before the interceptors run and would answer UNKNOWN, bare."""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import pytest
from api_client import Api, bearer, error_reason

from sapsam.api.call_log import LOGGER_NAME
from sapsam.api.server import RunningServer

NOT_A_MESSAGE = b"\xff\xff\xff"
NAME_NOT_UTF8 = b"\x0a\x02\xff\xfe"  # field 1 (name / request_id), two bytes that are not UTF-8
TABLES = "/sapsam.v1.TableService/"


@pytest.fixture(scope="module")
def api(module_running_server: RunningServer, module_database_url: str) -> Iterator[Api]:
    with grpc.insecure_channel(f"127.0.0.1:{module_running_server.port}") as channel:
        yield Api(channel, module_database_url)


def _unary(api: Api, method: str, body: bytes, token: str) -> grpc.RpcError:
    call = api.channel.unary_unary(method)  # bytes in, bytes out: no serializer
    with pytest.raises(grpc.RpcError) as raised:
        call(body, metadata=bearer(token) if token else (), timeout=10)
    return raised.value


@pytest.mark.parametrize("body", [NOT_A_MESSAGE, NAME_NOT_UTF8], ids=["bytes", "utf8"])
@pytest.mark.parametrize(
    "method",
    ["/sapsam.v1.PlayerService/RegisterPlayer", TABLES + "GetTable", TABLES + "GetMyHand"],
)
def test_an_undecodable_request_is_invalid_argument(
    api: Api, method: str, body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    token = api.register("sender").token
    before = api.event_count()
    with caplog.at_level("INFO", LOGGER_NAME):
        error = _unary(api, method, body, token)
    code, reason, _, bad_request = error_reason(error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT")
    assert bad_request is not None
    assert "Error" not in (error.details() or "")  # no exception class leaks
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == LOGGER_NAME]
    assert [(line["method"], line["status"]) for line in lines] == [(method, "INVALID_ARGUMENT")]
    assert api.event_count() == before


def test_an_undecodable_request_is_authenticated_first(api: Api) -> None:
    error = _unary(api, TABLES + "GetTable", NOT_A_MESSAGE, "")
    assert error_reason(error)[:2] == (grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN")


@pytest.mark.parametrize("body", [NOT_A_MESSAGE, NAME_NOT_UTF8], ids=["bytes", "utf8"])
def test_an_undecodable_watch_is_invalid_argument(api: Api, body: bytes) -> None:
    token = api.register("watcher").token
    call = api.channel.unary_stream(TABLES + "WatchTable")
    with pytest.raises(grpc.RpcError) as raised:
        next(iter(call(body, metadata=bearer(token), timeout=10)))
    code, reason, _, _ = error_reason(raised.value)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT")

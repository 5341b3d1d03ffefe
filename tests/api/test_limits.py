"""Limits per caller on a real server: a caller over a limit is refused RESOURCE_EXHAUSTED with
ErrorInfo and RetryInfo, while another caller carries on; requests above the size limit are
refused by grpc itself; the SDK waits as RetryInfo says and then succeeds."""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Api, bearer, error_reason
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from sapsam.api.limits import CallerLimits
from sapsam.api.server import RunningServer, ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam_client import Client
from sapsam_proto.v1 import player_service_pb2, table_service_pb2

LIMITS = CallerLimits(
    registrations_per_minute=10,
    calls_per_second=2.0,
    call_burst=5,
    streams_per_caller=2,
    suggestions_per_minute=2,
)
MAX_MESSAGE_BYTES = 64 * 1024


@dataclass
class Limited:
    """One server with tight limits, reached from two addresses (IPv4 and IPv6 loopback)."""

    server: RunningServer
    here: Api  # 127.0.0.1: the address that floods RegisterPlayer
    there: Api  # [::1]: registers every other player


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def limited(database_factory: Any) -> Iterator[Limited]:
    if not _ipv6_loopback():
        pytest.skip("needs IPv6 loopback as a second caller address")
    name, url = database_factory.create(migrated=True)
    running = start_server(
        ServerConfig(
            listen="[::]:0",
            operator_token=OPERATOR_TOKEN,
            grace_seconds=1,
            limits=LIMITS,
            max_receive_message_bytes=MAX_MESSAGE_BYTES,
        ),
        build_services(url, pool_size=4),
    )
    try:
        with (
            grpc.insecure_channel(f"127.0.0.1:{running.port}") as first,
            grpc.insecure_channel(f"[::1]:{running.port}") as second,
        ):
            yield Limited(running, Api(first, url), Api(second, url))
    finally:
        running.stop()
        database_factory.drop(name)


def _retry_delay(error: grpc.RpcError) -> float:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return float(info.retry_delay.ToNanoseconds()) / 1e9
    raise AssertionError("no RetryInfo")


def _refused(call: Callable[[], Any], reason: str) -> float:
    """Call until refused over a limit; the RetryInfo delay of the refusal."""
    for _ in range(1000):
        try:
            call()
        except grpc.RpcError as error:
            code, got, _, _ = error_reason(error)
            assert (code, got) == (grpc.StatusCode.RESOURCE_EXHAUSTED, reason)
            delay = _retry_delay(error)
            assert delay > 0
            return delay
    raise AssertionError(f"never refused with {reason}")


def _register(api: Api, name: str) -> Any:
    return api.players.RegisterPlayer(
        player_service_pb2.RegisterPlayerRequest(request_id=str(uuid.uuid4()), display_name=name)
    )


def test_registrations_are_limited_per_address(limited: Limited) -> None:
    delay = _refused(lambda: _register(limited.here, "flood"), "TOO_MANY_REGISTRATIONS")
    assert delay <= 60 / LIMITS.registrations_per_minute  # one comes back every 6 s
    assert _register(limited.there, "neighbour").token  # another address is unaffected


def test_calls_are_limited_per_player(limited: Limited) -> None:
    api = limited.there
    ann, bob = api.register("ann"), api.register("bob")
    request = player_service_pb2.GetPlayerRequest(name=ann.name)
    delay = _refused(
        lambda: api.players.GetPlayer(request, metadata=bearer(ann.token)), "RATE_LIMITED"
    )
    assert delay <= 1 / LIMITS.calls_per_second  # a call comes back every half second
    assert api.players.GetPlayer(request, metadata=bearer(bob.token)).player.name == ann.name
    # The operator is not limited.
    for _ in range(20):
        api.players.GetPlayer(request, metadata=bearer(OPERATOR_TOKEN))


def test_suggestions_are_limited_per_player(limited: Limited) -> None:
    """GetSuggestion runs the solver: a burst of at most SUGGESTION_BURST (here the 2 a
    minute allows), then one every 30 s; refused or not, each call counts (the limit comes before
    the request is read)."""
    api = limited.there
    ann, bob = api.register("ann"), api.register("bob")
    request = table_service_pb2.GetSuggestionRequest(seat="tables/x/seats/0")

    def suggest(token: str) -> tuple[grpc.StatusCode, str]:
        with pytest.raises(grpc.RpcError) as raised:
            api.tables.GetSuggestion(request, metadata=bearer(token))
        code, reason, _, _ = error_reason(raised.value)
        return code, reason

    for _ in range(LIMITS.suggestions_per_minute):
        assert suggest(ann.token) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RESOURCE_NAME")
    with pytest.raises(grpc.RpcError) as raised:
        api.tables.GetSuggestion(request, metadata=bearer(ann.token))
    code, reason, _, _ = error_reason(raised.value)
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
    # the suggestions' bucket, not the calls' (which would say half a second at most)
    assert 1 < _retry_delay(raised.value) <= 60 / LIMITS.suggestions_per_minute
    assert suggest(bob.token) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RESOURCE_NAME")
    # Other calls of the same player are not held back by it.
    ann_name = player_service_pb2.GetPlayerRequest(name=ann.name)
    assert api.players.GetPlayer(ann_name, metadata=bearer(ann.token)).player.name == ann.name


def test_the_sdk_waits_as_retry_info_says(limited: Limited) -> None:
    with Client(grpc.insecure_channel(f"[::1]:{limited.server.port}"), attempts=3) as client:
        player = client.register("patient").player
        for _ in range(8):  # over the burst: each refusal is waited out and retried
            assert client.get_player(player).name == player


def test_open_streams_are_limited_per_player(limited: Limited) -> None:
    api = limited.there
    table, players = api.seated_table(2, "pagat", series_length=1)
    ann, bob = players
    watch = table_service_pb2.WatchTableRequest(table=table)
    open_streams = [api.tables.WatchTable(watch, metadata=bearer(ann.token)) for _ in range(2)]
    for stream in open_streams:
        next(stream)  # each is open and serving
    third = api.tables.WatchTable(watch, metadata=bearer(ann.token))
    with pytest.raises(grpc.RpcError) as refused:
        next(third)
    code, reason, _, _ = error_reason(refused.value)
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS")
    assert _retry_delay(refused.value) > 0
    # Another player is unaffected; and once ann closes one, she may open another.
    assert next(api.tables.WatchTable(watch, metadata=bearer(bob.token))).event.version == 1
    open_streams[0].cancel()
    for _ in range(100):
        try:
            assert next(api.tables.WatchTable(watch, metadata=bearer(ann.token)))
            break
        except grpc.RpcError as error:
            # The server counts the stream out at its next poll; meanwhile ann's attempts may
            # also meet her call limit. Either way: wait as RetryInfo says.
            assert error_reason(error)[1] in ("TOO_MANY_STREAMS", "RATE_LIMITED")
            time.sleep(min(_retry_delay(error), 0.2))
    else:
        raise AssertionError("the closed stream was never counted out")
    for stream in open_streams:
        stream.cancel()


def test_a_request_over_the_size_limit_is_refused_by_grpc(limited: Limited) -> None:
    api = limited.there
    player = api.register("big")
    huge = player_service_pb2.GetPlayerRequest(name="players/" + "x" * (MAX_MESSAGE_BYTES + 1000))
    with pytest.raises(grpc.RpcError) as refused:
        api.players.GetPlayer(huge, metadata=bearer(player.token))
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error_reason_absent(refused.value)
    request = player_service_pb2.GetPlayerRequest(name=player.name)
    assert api.players.GetPlayer(request, metadata=bearer(player.token)).player.name == player.name


def error_reason_absent(error: grpc.RpcError) -> bool:
    """grpc refused it before any sapsam code ran: no google.rpc.Status, so no ErrorInfo."""
    return rpc_status.from_call(error) is None  # type: ignore[arg-type]

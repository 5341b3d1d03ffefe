"""The SDK's retry set, as docs/api.md ("What to retry") states it, from errors as grpc raises
them: UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED, CANCELLED, and RESOURCE_EXHAUSTED only with a
RetryInfo (whose delay the client then waits at least)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from sapsam_client import Client
from sapsam_client.backoff import MAX_RETRY_DELAY_SECONDS
from sapsam_client.errors import ResourceExhaustedError, UnavailableError, from_rpc_error


class RaisedError(grpc.RpcError):  # type: ignore[misc]
    """What a failed stub call raises: a code, details and trailing metadata."""

    def __init__(self, code: grpc.StatusCode, *details: Any) -> None:
        self._code = code
        packed = []
        for detail in details:
            wrapper = any_pb2.Any()
            wrapper.Pack(detail)
            packed.append(wrapper)
        status = status_pb2.Status(code=code.value[0], message="m", details=packed)
        self._trailing = (("grpc-status-details-bin", status.SerializeToString()),)

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return "m"

    def trailing_metadata(self) -> Any:
        return self._trailing


def _info(reason: str) -> Any:
    return error_details_pb2.ErrorInfo(reason=reason, domain="sapsam.dev")


def _retry_info(seconds: float) -> Any:
    info = error_details_pb2.RetryInfo()
    info.retry_delay.FromNanoseconds(int(seconds * 1e9))
    return info


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (RaisedError(grpc.StatusCode.UNAVAILABLE, _info("SERVER_STOPPING")), True),
        (RaisedError(grpc.StatusCode.UNAVAILABLE), True),
        (RaisedError(grpc.StatusCode.CANCELLED), True),
        (RaisedError(grpc.StatusCode.DEADLINE_EXCEEDED), True),
        (RaisedError(grpc.StatusCode.ABORTED, _info("CONCURRENCY_CONFLICT")), True),
        (
            RaisedError(
                grpc.StatusCode.RESOURCE_EXHAUSTED, _info("RATE_LIMITED"), _retry_info(0.25)
            ),
            True,
        ),
        (RaisedError(grpc.StatusCode.RESOURCE_EXHAUSTED), False),  # a request over the size limit
        (RaisedError(grpc.StatusCode.FAILED_PRECONDITION, _info("WRONG_PHASE")), False),
        (RaisedError(grpc.StatusCode.INTERNAL, _info("INTERNAL")), False),
    ],
)
def test_the_retry_set(error: RaisedError, retryable: bool) -> None:
    assert from_rpc_error(error).retryable is retryable


def test_a_cancelled_call_is_unavailable_and_retry_info_gives_the_delay() -> None:
    assert isinstance(from_rpc_error(RaisedError(grpc.StatusCode.CANCELLED)), UnavailableError)
    limited = from_rpc_error(
        RaisedError(grpc.StatusCode.RESOURCE_EXHAUSTED, _info("RATE_LIMITED"), _retry_info(1.5))
    )
    assert isinstance(limited, ResourceExhaustedError)
    assert (limited.reason, limited.retry_delay) == ("RATE_LIMITED", 1.5)


class RemovedStream(grpc.RpcError):  # type: ignore[misc]
    """What grpc raises when a call's HTTP/2 stream ends with no gRPC status (a proxy ending it
    as the server behind it dies: HAProxy 2.6, cluster/tests)."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return "Stream removed (Data frame with END_STREAM flag received)"

    def trailing_metadata(self) -> Any:
        return ()


def test_a_stream_ended_with_no_status_is_unavailable_and_retried() -> None:
    error = from_rpc_error(RemovedStream())
    assert isinstance(error, UnavailableError) and error.retryable
    assert (error.code, error.reason) == ("UNAVAILABLE", "STREAM_REMOVED")
    assert "END_STREAM" in error.message
    # A server's own UNKNOWN (a fault) stays an error that is not retried.
    assert not from_rpc_error(RaisedError(grpc.StatusCode.UNKNOWN)).retryable


def test_the_client_waits_at_least_the_retry_info_delay() -> None:
    calls: list[int] = []

    def stub(request: Any, metadata: Any, timeout: float) -> str:
        calls.append(1)
        if len(calls) == 1:
            raise RaisedError(
                grpc.StatusCode.RESOURCE_EXHAUSTED, _info("RATE_LIMITED"), _retry_info(0.3)
            )
        return "answer"

    client = Client(grpc.insecure_channel("127.0.0.1:9"), attempts=2, backoff_seconds=0.01)
    error = from_rpc_error(
        RaisedError(grpc.StatusCode.RESOURCE_EXHAUSTED, _info("RATE_LIMITED"), _retry_info(0.3))
    )
    # At least the server's delay (longer than the 0.01 s backoff), spread by up to 20 %.
    assert all(0.3 <= client._pause(error, 0) <= 0.36 for _ in range(100))
    assert client.call(stub, object(), str) == "answer"
    assert len(calls) == 2
    client.close()


def _limited_stub(seconds: float, calls: list[int]) -> Any:
    """A stub that answers the first call RATE_LIMITED with a RetryInfo of ``seconds``."""

    def stub(request: Any, metadata: Any, timeout: float) -> str:
        calls.append(1)
        if len(calls) == 1:
            raise RaisedError(
                grpc.StatusCode.RESOURCE_EXHAUSTED, _info("RATE_LIMITED"), _retry_info(seconds)
            )
        return "answer"

    return stub


def test_a_retry_info_delay_past_the_bound_is_raised_not_waited_for() -> None:
    calls: list[int] = []
    client = Client(grpc.insecure_channel("127.0.0.1:9"), attempts=3)
    with pytest.raises(ResourceExhaustedError) as raised:
        client.call(_limited_stub(MAX_RETRY_DELAY_SECONDS + 1, calls), object(), str)
    assert raised.value.retry_delay == MAX_RETRY_DELAY_SECONDS + 1
    assert len(calls) == 1  # raised at once: no second attempt after sleeping it out
    client.close()


def test_a_negative_retry_info_delay_is_retried_at_once() -> None:
    calls: list[int] = []
    client = Client(grpc.insecure_channel("127.0.0.1:9"), attempts=2)
    # time.sleep(-0.5) raises ValueError: the SDK must not pass a server's delay through raw.
    assert client.call(_limited_stub(-0.5, calls), object(), str) == "answer"
    assert len(calls) == 2
    client.close()

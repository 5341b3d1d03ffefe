"""Refused calls become typed errors with the server's reason code; retries reuse request ids."""

from __future__ import annotations

import threading
from typing import Any

import grpc
import pytest

from sapsam_client import (
    AlreadyExistsError,
    ErrorReason,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    UnauthenticatedError,
    UnavailableError,
    connect,
)
from sapsam_client.client import Client
from sapsam_client.errors import SapsamError, error_reason_of
from sapsam_proto.v1 import table_service_pb2


def test_a_server_error_matches_the_shared_reason_enum(address: str) -> None:
    ann = connect(address)
    ann.register("Ann")
    with pytest.raises(SapsamError) as not_found:
        ann.get_table("tables/5a9c7e3e-1f2b-4c8d-9e0f-112233445566")
    assert not_found.value.error_reason == ErrorReason.ERROR_REASON_TABLE_NOT_FOUND
    assert ErrorReason.Name(not_found.value.error_reason) == "ERROR_REASON_TABLE_NOT_FOUND"
    table = ann.create_table(2, series_length=1)
    with pytest.raises(SapsamError) as unseated:
        ann.choose_dealer(table.name)
    assert unseated.value.error_reason == ErrorReason.ERROR_REASON_NOT_SEATED
    # A reason this SDK does not know (a newer server's) is UNSPECIFIED, never an error.
    assert error_reason_of("SOMETHING_NEWER") == ErrorReason.ERROR_REASON_UNSPECIFIED


def test_refusals_carry_their_reason_codes(address: str) -> None:
    anonymous = connect(address)
    with pytest.raises(UnauthenticatedError) as missing:
        anonymous.create_table(2)
    assert (missing.value.code, missing.value.reason) == ("UNAUTHENTICATED", "MISSING_TOKEN")

    stranger = connect(address, token="no-such-token")
    with pytest.raises(UnauthenticatedError) as unknown:
        stranger.get_table("tables/5a9c7e3e-1f2b-4c8d-9e0f-112233445566")
    assert unknown.value.reason == "UNKNOWN_TOKEN"

    ann = connect(address)
    ann.register("Ann")
    with pytest.raises(InvalidArgumentError) as bad_count:
        ann.create_table(7)
    assert bad_count.value.reason == "BAD_SEAT_COUNT"
    assert "seat_count" in bad_count.value.fields
    assert not bad_count.value.retryable

    with pytest.raises(NotFoundError) as not_found:
        ann.get_table("tables/5a9c7e3e-1f2b-4c8d-9e0f-112233445566")
    assert not_found.value.reason == "TABLE_NOT_FOUND"

    table = ann.create_table(2, series_length=1)
    seat = ann.join_table(table.name)
    with pytest.raises(AlreadyExistsError) as seated:
        ann.join_table(table.name)
    assert seated.value.reason == "ALREADY_SEATED"
    with pytest.raises(FailedPreconditionError) as early:
        ann.choose_dealer(table.name)
    assert early.value.reason == "WRONG_PHASE"

    bob = connect(address)
    bob.register("Bob")
    with pytest.raises(PermissionDeniedError) as foreign:
        bob.get_my_hand(seat.name)
    assert foreign.value.reason == "NOT_YOUR_SEAT"
    assert "WRONG_PHASE" in str(early.value)


def test_an_unreachable_server_is_unavailable_after_the_retries() -> None:
    client = connect("127.0.0.1:1", attempts=2, timeout=2, reconnect_seconds=0)
    client.backoff_seconds = 0.01
    with pytest.raises(UnavailableError) as error:
        client.register("nobody")
    assert error.value.retryable


class FlakyStub:
    """Fails the first calls with UNAVAILABLE after passing them on, as a reply lost on the way
    back would; records each request it was given."""

    def __init__(self, method: Any, failures: int) -> None:
        self.method = method
        self.failures = failures
        self.requests: list[Any] = []
        self.lock = threading.Lock()

    def __call__(self, request: Any, **kwargs: Any) -> Any:
        self.requests.append(request)
        response = self.method(request, **kwargs)
        with self.lock:
            if self.failures > 0:
                self.failures -= 1
                raise LostReply()
        return response


class LostReply(grpc.RpcError):
    """What grpcio raises when a reply is lost (UNAVAILABLE, no details)."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "reply lost"

    def trailing_metadata(self) -> tuple[()]:
        return ()


def test_a_retry_sends_the_same_request_id_and_gets_the_first_answer(address: str) -> None:
    client: Client = connect(address)
    client.backoff_seconds = 0.01
    client.register("Retrier")
    flaky = FlakyStub(client.tables.CreateTable, failures=2)
    request = table_service_pb2.CreateTableRequest(request_id="retry-1", seat_count=2)
    table = client.call(flaky, request, table_service_pb2.CreateTableResponse).table
    assert [r.request_id for r in flaky.requests] == ["retry-1"] * 3
    # Three deliveries, one table: the server answered the repeats with the first response.
    listed = [t.name for t in client.list_tables()]
    assert listed.count(table.name) == 1 and len(listed) == 1

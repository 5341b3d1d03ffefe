"""Hostile input over gRPC gets a clean INVALID_ARGUMENT with its ErrorInfo and a short message:
an export beyond the audit limits (deep nesting, huge integers) and megabyte-long card strings,
rule-set names, presets and resource names. Nothing reaches INTERNAL, and no error is so large
that gRPC turns it into RESOURCE_EXHAUSTED without its ErrorInfo."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Api, bearer, error_reason
from grpc_status import rpc_status

from sapsam.api.errors import MAX_MESSAGE_BYTES
from sapsam.audit import Requester, select_deal, write_lines
from sapsam.audit.sample_series import recorded_stream
from sapsam_proto.v1 import (
    audit_service_pb2,
    audit_service_pb2_grpc,
    player_service_pb2,
    rule_set_pb2,
    table_pb2,
    table_service_pb2,
)

MEGABYTE_TEXT = "A" * 1_000_000  # within the server's 1 MiB message limit, with room to spare


def sent_export(value: str) -> str:
    """A genuine deal export with ``value`` (JSON text) added to its first event's data."""
    lines = list(write_lines(select_deal(recorded_stream(2), 1, Requester.operator())))
    lines[1] = lines[1].replace('"data":{', '"data":{"x":' + value + ",", 1)
    return "\n".join(lines) + "\n"


def refused(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str, Any, Any]:
    with pytest.raises(grpc.RpcError) as error:
        result = call()
        if not hasattr(result, "SerializeToString"):  # a stream: the error comes with the first
            list(result)
    code, reason, info, bad_request = error_reason(error.value)
    status = rpc_status.from_call(error.value)
    assert status is not None and len(status.message.encode()) <= MAX_MESSAGE_BYTES
    assert len(status.SerializeToString()) < 4_000
    return code, reason, info, bad_request


@pytest.mark.parametrize(
    "value",
    ["[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000, "9" * 5_000],
    ids=["100k-deep array", "50k-deep object", "5,000-digit integer"],
)
def test_verify_deal_refuses_an_export_beyond_the_limits(api: Api, value: str) -> None:
    audit = audit_service_pb2_grpc.AuditServiceStub(api.channel)
    request = audit_service_pb2.VerifyDealRequest(export=sent_export(value))
    code, reason, _, bad_request = refused(
        lambda: audit.VerifyDeal(request, metadata=bearer(OPERATOR_TOKEN))
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "EXPORT_LIMIT_EXCEEDED")
    assert [violation.field for violation in bad_request.field_violations] == ["export"]


def test_verify_deal_still_reports_on_an_export_within_the_limits(api: Api) -> None:
    audit = audit_service_pb2_grpc.AuditServiceStub(api.channel)
    request = audit_service_pb2.VerifyDealRequest(export=sent_export("[[[1]]]"))
    report = audit.VerifyDeal(request, metadata=bearer(OPERATOR_TOKEN))
    assert report.checks and report.checks[0].name == "format"


def test_megabyte_inputs_are_refused_briefly_with_their_error_info(api: Api) -> None:
    creator = api.register("creator")
    table, players = api.seated_table(2, "pagat", series_length=1)
    cases: list[tuple[str, Callable[[], Any], str]] = [
        (
            "a card",
            lambda: api.call(
                "RevealArrangement",
                table_service_pb2.RevealArrangementRequest(
                    request_id=str(uuid.uuid4()),
                    seat=players[0].seat,
                    arrangement=table_pb2.Arrangement(front=[MEGABYTE_TEXT, "As", "Kd"]),
                    nonce=bytes(16),
                ),
                players[0].token,
            ),
            "BAD_CARDS",
        ),
        (
            "a card among cards",
            lambda: api.call(
                "RevealArrangement",
                table_service_pb2.RevealArrangementRequest(
                    request_id=str(uuid.uuid4()),
                    seat=players[0].seat,
                    arrangement=table_pb2.Arrangement(front=["As", "Kd", "7" + MEGABYTE_TEXT]),
                    nonce=bytes(16),
                ),
                players[0].token,
            ),
            "BAD_CARDS",
        ),
        (
            "a rule-set name",
            lambda: api.call(
                "CreateTable",
                table_service_pb2.CreateTableRequest(
                    rule_set=rule_set_pb2.RuleSet(name=MEGABYTE_TEXT), seat_count=2
                ),
                creator.token,
            ),
            "BAD_RULE_SET",
        ),
        (
            "a preset name",
            lambda: api.call(
                "CreateTable",
                table_service_pb2.CreateTableRequest(rule_set_preset=MEGABYTE_TEXT, seat_count=2),
                creator.token,
            ),
            "BAD_RULE_SET",
        ),
        (
            "a table name",
            lambda: api.call(
                "GetTable", table_service_pb2.GetTableRequest(name=MEGABYTE_TEXT), creator.token
            ),
            "BAD_RESOURCE_NAME",
        ),
        (
            "a seat name",
            lambda: api.call(
                "GetMyHand",
                table_service_pb2.GetMyHandRequest(seat=table + "/seats/" + MEGABYTE_TEXT),
                players[0].token,
            ),
            "BAD_RESOURCE_NAME",
        ),
        (
            "a seat name asked for a suggestion",
            lambda: api.call(
                "GetSuggestion",
                table_service_pb2.GetSuggestionRequest(seat=table + "/seats/" + MEGABYTE_TEXT),
                players[0].token,
            ),
            "BAD_RESOURCE_NAME",
        ),
        (
            "a request id",
            lambda: api.call(
                "StartDeal",
                table_service_pb2.StartDealRequest(request_id=MEGABYTE_TEXT, table=table),
                players[0].token,
            ),
            "BAD_REQUEST_ID",
        ),
        (
            "a display name",
            lambda: api.call(
                "RegisterPlayer",
                player_service_pb2.RegisterPlayerRequest(
                    request_id=str(uuid.uuid4()), display_name=MEGABYTE_TEXT
                ),
                "",
            ),
            "BAD_DISPLAY_NAME",
        ),
    ]
    before = api.event_count()
    for what, call, expected in cases:
        code, reason, _, bad_request = refused(call)
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, expected), what
        assert bad_request is not None and bad_request.field_violations, what
    assert api.event_count() == before

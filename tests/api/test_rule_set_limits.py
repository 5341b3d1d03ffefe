"""CreateTable refuses every rule-set number beyond its documented range, naming the field."""

from __future__ import annotations

import uuid

import grpc
import pytest
from api_client import Api, error_reason

from sapsam.rules.royalties import ROYALTY_FIELDS
from sapsam.rules.ruleset import (
    MAX_BONUS_UNITS,
    MAX_DEADLINE_SECONDS,
    MAX_ROW_UNIT,
    MAX_SERIES_LENGTH,
)
from sapsam_proto.v1 import rule_set_pb2, table_service_pb2

INT32_MAX = 2**31 - 1
LIMITS = {
    "row_unit": MAX_ROW_UNIT,
    "scoop_bonus": MAX_BONUS_UNITS,
    "one_six_two_of_three": MAX_BONUS_UNITS,
    "one_six_scoop": MAX_BONUS_UNITS,
    "series_length": MAX_SERIES_LENGTH,
    "arrange_seconds": MAX_DEADLINE_SECONDS,
    "reveal_seconds": MAX_DEADLINE_SECONDS,
    **dict.fromkeys(ROYALTY_FIELDS, MAX_BONUS_UNITS),
}


def create(api: Api, token: str, **fields: object) -> table_service_pb2.CreateTableResponse:
    request = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()), seat_count=2, **fields
    )
    return api.call("CreateTable", request, token)


def test_every_rule_set_number_is_bounded_with_a_field_violation(api: Api) -> None:
    token = api.register("ann").token
    before = api.event_count()
    for key, largest in LIMITS.items():
        for value in (largest + 1, INT32_MAX, -1):
            with pytest.raises(grpc.RpcError) as raised:
                create(api, token, rule_set=rule_set_pb2.RuleSet(**{key: value}))
            code, reason, _, bad_request = error_reason(raised.value)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RULE_SET"), key
            assert [v.field for v in bad_request.field_violations] == [f"rule_set.{key}"]
    with pytest.raises(grpc.RpcError) as raised:
        create(api, token, series_length=INT32_MAX)
    code, reason, _, bad_request = error_reason(raised.value)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SERIES_LENGTH")
    assert [v.field for v in bad_request.field_violations] == ["series_length"]
    assert api.event_count() == before
    # Every maximum at once is a valid table.
    created = create(api, token, rule_set=rule_set_pb2.RuleSet(**LIMITS))
    assert created.table.rule_set.row_unit == MAX_ROW_UNIT

"""The request digest (``sapsam.api.request_digest``) is over the request without its request id,
computed without a copy of the request: the same bytes as the copy gives, the request left as the
client sent it."""

from __future__ import annotations

import hashlib

import pytest
from google.protobuf.message import Message

from sapsam.api.request_digest import request_digest
from sapsam_proto.v1 import player_service_pb2, table_service_pb2

SIGNED = table_service_pb2.CommitArrangementRequest(
    request_id="abc", seat="tables/x/seats/1", commitment=b"\x01" * 32, confirm=True, deal_number=3
)
SIGNED.signature.public_key = b"\x02" * 32


def copied_digest(request: Message) -> bytes:
    """The digest as its definition says it, from a copy with the request id cleared."""
    unkeyed = type(request)()
    unkeyed.CopyFrom(request)
    if "request_id" in request.DESCRIPTOR.fields_by_name:
        unkeyed.ClearField("request_id")
    body = unkeyed.SerializeToString(deterministic=True)
    return hashlib.sha256(request.DESCRIPTOR.full_name.encode() + b"\n" + body).digest()


@pytest.mark.parametrize(
    "request_message",
    [
        SIGNED,
        table_service_pb2.CommitArrangementRequest(seat="tables/x/seats/1"),  # no request id
        table_service_pb2.ContributeEntropyRequest(request_id="r", entropy=b"\x00" * 16),
        table_service_pb2.GetTableRequest(name="tables/x"),  # no request id field
        player_service_pb2.RegisterPlayerRequest(request_id="r", display_name="Ann"),
    ],
)
def test_the_digest_is_the_copys_and_the_request_is_left_unchanged(
    request_message: Message,
) -> None:
    sent = request_message.SerializeToString(deterministic=True)
    assert request_digest(request_message) == copied_digest(request_message)
    assert request_message.SerializeToString(deterministic=True) == sent


def test_only_the_request_id_is_left_out() -> None:
    other_id = table_service_pb2.CommitArrangementRequest()
    other_id.CopyFrom(SIGNED)
    other_id.request_id = "another"
    other_payload = table_service_pb2.CommitArrangementRequest()
    other_payload.CopyFrom(SIGNED)
    other_payload.confirm = False
    assert request_digest(other_id) == request_digest(SIGNED)
    assert request_digest(other_payload) != request_digest(SIGNED)

"""Every error status stays small whatever a caller of ``build_status`` quoted: gRPC refuses
trailing metadata over 16 KB, and the client would get RESOURCE_EXHAUSTED without its ErrorInfo."""

from __future__ import annotations

import pytest
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from sapsam.api.errors import (
    MAX_DETAIL_BYTES,
    MAX_MESSAGE_BYTES,
    ApiError,
    build_status,
    status_for_exception,
)

GRPC_METADATA_LIMIT = 16 * 1024


def wire_size(status: object) -> int:
    """What the status costs in trailing metadata: the percent-encoded message (at worst three
    bytes per UTF-8 byte) and the base64-encoded details."""
    details = dict(status.trailing_metadata)["grpc-status-details-bin"]  # type: ignore[attr-defined]
    return 3 * len(status.details.encode()) + 4 * len(details) // 3 + 100  # type: ignore[attr-defined]


@pytest.mark.parametrize("character", ["x", "\N{LATIN SMALL LETTER E WITH ACUTE}", "\U0001f0a1"])
def test_a_megabyte_message_field_and_metadata_are_cut(character: str) -> None:
    huge = character * 1_000_000
    status = build_status("BAD_CARDS", huge, field=huge, metadata={"player": huge, huge: "x"})
    assert wire_size(status) < GRPC_METADATA_LIMIT // 4
    assert len(status.details.encode()) <= MAX_MESSAGE_BYTES
    parsed = status_pb2.Status.FromString(dict(status.trailing_metadata)["grpc-status-details-bin"])
    info = error_details_pb2.ErrorInfo()
    assert parsed.details[0].Unpack(info) and info.reason == "BAD_CARDS"
    for key, value in info.metadata.items():
        assert len(key.encode()) <= MAX_DETAIL_BYTES and len(value.encode()) <= MAX_DETAIL_BYTES
    bad_request = error_details_pb2.BadRequest()
    assert parsed.details[1].Unpack(bad_request)
    violation = bad_request.field_violations[0]
    assert len(violation.field.encode()) <= MAX_DETAIL_BYTES
    assert len(violation.description.encode()) <= MAX_MESSAGE_BYTES


def test_a_short_message_is_kept_whole() -> None:
    status = status_for_exception(ApiError("BAD_CARDS", "bad card 'Zz'", field="arrangement.front"))
    assert status.details == "bad card 'Zz'"

"""A write's response carries its receipt filled in place (``with_receipt``): the same bytes as a
``Receipt`` message given to the response's constructor, and no field when there is no receipt."""

from __future__ import annotations

from sapsam.api.receipt_messages import receipt_message, with_receipt
from sapsam.app.receipts import ReceiptSigner
from sapsam.log.records import recorded_event
from sapsam.log.signed_note import NoteSigner
from sapsam_proto.v1 import table_service_pb2

SIGNER = ReceiptSigner(NoteSigner.from_seed("sapsam.example/log", bytes(range(32))))
METADATA = {"request_id": "ann/CommitArrangement/1", "recorded_at": "2026-12-02T17:00:00.000001Z"}
EVENTS = [
    recorded_event(40 + version, "table-x", version, kind, 1, {}, METADATA, bytes([version]) * 32)
    for version, kind in ((7, "ArrangementCommitted"), (8, "SeatConfirmed"))
]


def test_the_receipt_filled_in_place_is_the_constructors() -> None:
    issued = SIGNER.sign(EVENTS)
    assert issued is not None
    built = table_service_pb2.CommitArrangementResponse(
        version=8, receipt=receipt_message(issued), confirmed=True
    )
    filled = with_receipt(
        table_service_pb2.CommitArrangementResponse(version=8, confirmed=True), issued
    )
    assert filled == built
    assert filled.SerializeToString(deterministic=True) == built.SerializeToString(
        deterministic=True
    )
    assert [event.version for event in filled.receipt.events] == [7, 8]
    assert filled.receipt.signed_note == issued.note


def test_no_receipt_leaves_the_field_unset() -> None:
    response = with_receipt(table_service_pb2.ConfirmArrangementResponse(version=3), None)
    assert not response.HasField("receipt")
    assert receipt_message(None) is None

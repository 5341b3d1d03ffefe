"""The API's ``Receipt`` message of a receipt signed by ``sapsam.app.receipts``.

Conversion only: the signed note is passed through byte for byte, the other fields are read from
the receipt it signs (docs/transparency.md §9).
"""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import Message

from sapsam.app.receipts import IssuedReceipt
from sapsam_proto.v1 import receipt_pb2

AnsweredWith = TypeVar("AnsweredWith", bound=Message)


def receipt_message(issued: IssuedReceipt | None) -> receipt_pb2.Receipt | None:
    """The message of ``issued``; None (the field left unset) when there is no receipt."""
    if issued is None:
        return None
    message = receipt_pb2.Receipt()
    _fill(message, issued)
    return message


def with_receipt(response: AnsweredWith, issued: IssuedReceipt | None) -> AnsweredWith:
    """``response`` with ``issued`` as its ``receipt`` field (unset when there is none), filled in
    place: the game's writes answer this way, without a ``Receipt`` message made and then copied
    into the response by its constructor."""
    if issued is not None:
        _fill(response.receipt, issued)  # type: ignore[attr-defined]
    return response


def _fill(message: receipt_pb2.Receipt, issued: IssuedReceipt) -> None:
    receipt = issued.receipt
    message.signed_note = issued.note
    message.log = receipt.log
    message.stream = receipt.stream
    message.first_version = receipt.first_version
    message.last_version = receipt.last_version
    message.request_id = receipt.request_id
    message.recorded_time = receipt.time
    add_event = message.events.add
    for event in receipt.events:
        add_event(version=event.version, position=event.position, type=event.type, hash=event.hash)
    message.key_id = issued.key_id

"""The API's ``Receipt`` message of a receipt signed by ``sapsam.app.receipts``.

Conversion only: the signed note is passed through byte for byte, the other fields are read from
the receipt it signs (docs/transparency.md §9).
"""

from __future__ import annotations

from sapsam.app.receipts import IssuedReceipt
from sapsam_proto.v1 import receipt_pb2


def receipt_message(issued: IssuedReceipt | None) -> receipt_pb2.Receipt | None:
    """The message of ``issued``; None (the field left unset) when there is no receipt."""
    if issued is None:
        return None
    receipt = issued.receipt
    return receipt_pb2.Receipt(
        signed_note=issued.note,
        log=receipt.log,
        stream=receipt.stream,
        first_version=receipt.first_version,
        last_version=receipt.last_version,
        request_id=receipt.request_id,
        recorded_time=receipt.time,
        events=[
            receipt_pb2.ReceiptEvent(
                version=event.version, position=event.position, type=event.type, hash=event.hash
            )
            for event in receipt.events
        ],
        key_id=issued.key_id,
    )

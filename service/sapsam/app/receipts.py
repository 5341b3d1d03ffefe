"""Signed receipts of acknowledged calls (docs/transparency.md §9): the one place the table and
tournament services sign what an append did.

A receipt is built from the recorded events alone (``sapsam.log.receipt``), so the original call
and any retry of its request id, answered from the log, get the same bytes. It is signed after
the append committed, where the outcome is known; the servicers only convert it to the API's
``Receipt`` message. A server without a signing key issues none.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sapsam.log.receipt import Receipt, receipt_of, sign_receipt
from sapsam.log.records import RecordedEvent
from sapsam.log.signed_note import NoteError, NoteSigner

_logger = logging.getLogger("sapsam.app.receipts")


@dataclass(frozen=True)
class IssuedReceipt:
    """A signed receipt: the receipt, its signed note (what the client keeps) and the signing
    key's id."""

    receipt: Receipt
    note: str
    key_id: int


class ReceiptSigner:
    """Signs the receipts of appends with the server's key (its name is the log's origin)."""

    __slots__ = ("key_id", "signer")

    def __init__(self, signer: NoteSigner) -> None:
        self.signer = signer
        self.key_id = signer.verifier.key_id

    def sign(self, events: Sequence[RecordedEvent]) -> IssuedReceipt | None:
        """The signed receipt of one append's events; None for no events, or for events no
        receipt can name (logged: the call itself succeeded and is answered without one)."""
        if not events:
            return None
        try:
            receipt = receipt_of(self.signer.name, events)
            note = sign_receipt(receipt, self.signer)
        except NoteError as error:
            _logger.warning(
                "no receipt for %s versions %d..%d: %s",
                events[0].stream_id,
                events[0].version,
                events[-1].version,
                error,
            )
            return None
        return IssuedReceipt(receipt, note, self.key_id)


def sign_if_enabled(
    signer: ReceiptSigner | None, events: Sequence[RecordedEvent]
) -> IssuedReceipt | None:
    """``signer.sign(events)``, or None when the service issues no receipts."""
    return None if signer is None else signer.sign(events)

"""The receipt vectors of docs/transparency-vectors.json (its ``receipts`` part), from fixed
inputs: ``sapsam.log.transparency_vectors`` includes them; docs/transparency.md §9 explains them.

Pure. The signing key is the vectors' fixed test server key (never use it for anything real).
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from sapsam.log.receipt import Receipt, ReceiptEvent, sign_receipt
from sapsam.log.signed_note import NoteSigner, sign_note

STREAM: Final = "table-5b0e7f3e-2f53-5c1d-9a4e-0d6b8f1c2a77"
REQUEST_ID: Final = "d1c9e2a4-7b3f-4c55-8e0a-3f6b2d9c1e88/RevealArrangement/reveal-deal-3-seat-1"
TIME: Final = "2026-01-01T00:00:01.250000Z"
EVENTS: Final = (
    (41, 1207, "ArrangementRevealed"),
    (42, 1208, "SeedRevealed"),
    (43, 1209, "DealScored"),
)


def _hash(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


def vector_receipt(origin: str) -> Receipt:
    """The receipt of a last reveal: the reveal, the seed and the score in one append."""
    return Receipt(
        origin,
        STREAM,
        REQUEST_ID,
        TIME,
        tuple(
            ReceiptEvent(version, position, event_type, _hash(f"receipt event {version}"))
            for version, position, event_type in EVENTS
        ),
    )


def receipt_vectors(server: NoteSigner, witness: NoteSigner) -> dict[str, Any]:
    """The receipt, its text and signed note, and notes a verifier must refuse."""
    receipt = vector_receipt(server.name)
    text = receipt.text()
    signed = sign_receipt(receipt, server)
    forged_hash = _hash("forged").hex()
    original_hash = receipt.events[1].hash.hex()
    rewritten = text.replace(original_hash, forged_hash)
    refused = [
        {
            "why": "an event's hash changed after signing (the signature fails)",
            "note": signed.replace(original_hash, forged_hash),
        },
        {
            "why": "a reveal turned into a timeout after signing (the signature fails)",
            "note": signed.replace(" ArrangementRevealed ", " SeatTimedOut "),
        },
        {
            "why": "signed by a key the reader does not know (another key of the same name)",
            "note": sign_note(
                rewritten, [NoteSigner.from_seed(server.name, _hash("not the server's key"))]
            ),
        },
        {
            "why": "the versions line disagrees with the events (signed, but not a receipt)",
            "note": sign_note(text.replace("versions 41 43", "versions 41 44"), [server]),
        },
        {
            "why": "signed by the log's key but for another log (the log line is not its name)",
            "note": sign_note(
                text.replace(f"log {server.name}\n", "log sapsam/other.example\n"), [server]
            ),
        },
        {
            "why": "a witness's cosignature alone (not the log's own signature)",
            "note": sign_note(text, [witness], timestamp=1767225660),
        },
    ]
    return {
        "log": server.name,
        "stream": receipt.stream,
        "request_id": receipt.request_id,
        "time": receipt.time,
        "events": [
            {
                "version": event.version,
                "position": event.position,
                "type": event.type,
                "hash": event.hash.hex(),
            }
            for event in receipt.events
        ],
        "text": text,
        "server_vkey": server.verifier.vkey(),
        "server_key_id": f"{server.verifier.key_id:08x}",
        "signed_note": signed,
        "refused": refused,
    }

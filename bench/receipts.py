"""CPU per signed receipt (docs/transparency.md §9), as a game call pays it on the server.

Prints one JSON object: CPU microseconds (``time.process_time``, best and median of ``--runs``
runs of ``--count`` receipts) for the raw Ed25519 signature of a receipt's text, for building and
signing a receipt (``sapsam.app.receipts.ReceiptSigner.sign``), and for that plus the API's
``Receipt`` message serialized, each for a one-event call (a commitment) and a three-event call
(a last reveal: the reveal, the seed, the score). CPU per operation, so a loaded machine changes
it less than wall-clock figures.

Usage: ``python bench/receipts.py [--count 2000] [--runs 7]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections.abc import Callable

from sapsam.api.receipt_messages import receipt_message
from sapsam.app.receipts import ReceiptSigner
from sapsam.log.receipt import receipt_of
from sapsam.log.records import RecordedEvent
from sapsam.log.signed_note import NoteSigner

STREAM = "table-5b0e7f3e-2f53-5c1d-9a4e-0d6b8f1c2a77"
REQUEST = (
    "d1c9e2a4-7b3f-4c55-8e0a-3f6b2d9c1e88/CommitArrangement/5b0e7f3e-2f53-5c1d-9a4e-0d6b8f1c2a77"
)


def _event(version: int, event_type: str) -> RecordedEvent:
    metadata = {"request_id": REQUEST, "recorded_at": "2026-12-02T07:00:00.000001Z", "actor": "p"}
    digest = hashlib.sha256(bytes([version])).digest()
    return RecordedEvent(1000 + version, STREAM, version, event_type, 1, {}, metadata, digest)


def _cpu_us(
    operations: dict[str, Callable[[], object]], count: int, runs: int
) -> dict[str, dict[str, float]]:
    """Each operation's CPU per call, the operations taking turns in every run (alternating
    rounds), so a change of the machine's pace during the run falls on all of them alike."""
    samples: dict[str, list[float]] = {name: [] for name in operations}
    for _ in range(runs):
        for name, operation in operations.items():
            began = time.process_time()
            for _ in range(count):
                operation()
            samples[name].append((time.process_time() - began) / count * 1e6)
    return {
        name: {"best": round(min(values), 1), "median": round(statistics.median(values), 1)}
        for name, values in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    arguments = parser.parse_args()
    signer = ReceiptSigner(NoteSigner.from_seed("sapsam/bench", bytes(32)))
    calls = {
        "one_event": [_event(10, "ArrangementCommitted")],
        "three_events": [
            _event(10, "ArrangementRevealed"),
            _event(11, "SeedRevealed"),
            _event(12, "DealScored"),
        ],
    }
    result: dict[str, object] = {"unit": "CPU microseconds per receipt"}
    for name, events in calls.items():
        text = receipt_of(signer.signer.name, events).text()

        def sign_only(text: str = text) -> object:
            return signer.signer.sign(text)

        def build_and_sign(events: list[RecordedEvent] = events) -> object:
            return signer.sign(events)

        def with_message(events: list[RecordedEvent] = events) -> object:
            message = receipt_message(signer.sign(events))
            assert message is not None
            return message.SerializeToString()

        result[name] = _cpu_us(
            {
                "ed25519_sign_only": sign_only,
                "build_and_sign": build_and_sign,
                "build_sign_and_message": with_message,
            },
            arguments.count,
            arguments.runs,
        )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

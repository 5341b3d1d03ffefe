"""Signed receipts (sapsam.log.receipt): the vectors of docs/transparency-vectors.json from the
page alone (docs/transparency.md §9, with hashlib, base64 and raw Ed25519 only), and the code's
build, sign, open and refusals."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from sapsam.log.receipt import (
    Receipt,
    ReceiptError,
    ReceiptEvent,
    open_receipt,
    receipt_of,
    sign_receipt,
)
from sapsam.log.records import RecordedEvent
from sapsam.log.signed_note import NoteError, NoteSigner, NoteVerificationError, VerifierKey
from sapsam.log.transparency_vectors import vector_signers

VECTORS_PATH = Path(__file__).resolve().parents[2] / "docs" / "transparency-vectors.json"
RECEIPTS: dict[str, Any] = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))["receipts"]


def _spec_receipt_text(vector: dict[str, Any]) -> str:
    """§9.1, line by line."""
    events = vector["events"]
    lines = [
        "sapsam receipt v1",
        f"log {vector['log']}",
        f"stream {vector['stream']}",
        f"versions {events[0]['version']} {events[-1]['version']}",
        f"request {vector['request_id']}",
        f"time {vector['time']}",
        *(f"event {e['version']} {e['position']} {e['type']} {e['hash']}" for e in events),
    ]
    return "".join(line + "\n" for line in lines)


def _spec_open(note: str, vkey: str) -> dict[str, Any]:
    """§9.2: verify the log's signature, then read the fields; raises on any failure."""
    name, id_text, material = vkey.split("+", 2)
    raw_key = base64.b64decode(material, validate=True)
    assert raw_key[0] == 0x01
    text, _, block = note.rpartition("\n\n")
    text += "\n"
    lines = text[:-1].split("\n")
    if lines[0] != "sapsam receipt v1" or lines[1] != f"log {name}":
        raise ValueError("not a receipt of this log")
    verified = False
    for line in block.rstrip("\n").split("\n"):
        signer, encoded = line[2:].split(" ")
        raw = base64.b64decode(encoded, validate=True)
        if signer == name and raw[:4].hex() == id_text:
            Ed25519PublicKey.from_public_bytes(raw_key[1:]).verify(raw[4:], text.encode())
            verified = True
    if not verified:
        raise ValueError("no signature by the pinned key")
    first, last = map(int, lines[3].split(" ")[1:])
    events = []
    for line in lines[6:]:
        _, version, position, event_type, digest = line.split(" ")
        assert re.fullmatch("[0-9a-f]{64}", digest)
        events.append((int(version), int(position), event_type, digest))
    if [event[0] for event in events] != list(range(first, last + 1)):
        raise ValueError("the versions line does not match the events")
    return {"stream": lines[2][len("stream ") :], "events": events}


def test_the_receipt_vector_from_the_page() -> None:
    assert RECEIPTS["text"] == _spec_receipt_text(RECEIPTS)
    assert RECEIPTS["signed_note"].startswith(RECEIPTS["text"] + "\n— " + RECEIPTS["log"] + " ")
    opened = _spec_open(RECEIPTS["signed_note"], RECEIPTS["server_vkey"])
    assert opened["stream"] == RECEIPTS["stream"]
    assert [event[3] for event in opened["events"]] == [e["hash"] for e in RECEIPTS["events"]]
    # And the code agrees.
    key = VerifierKey.parse(RECEIPTS["server_vkey"])
    assert f"{key.key_id:08x}" == RECEIPTS["server_key_id"]
    receipt = open_receipt(RECEIPTS["signed_note"], [key], RECEIPTS["log"]).receipt
    assert receipt.text() == RECEIPTS["text"]
    assert (receipt.first_version, receipt.last_version) == (41, 43)


@pytest.mark.parametrize("vector", RECEIPTS["refused"], ids=lambda v: v["why"])
def test_refused_receipt_vectors(vector: dict[str, Any]) -> None:
    with pytest.raises((InvalidSignature, ValueError, AssertionError)):
        _spec_open(vector["note"], RECEIPTS["server_vkey"])
    with pytest.raises(NoteError):
        open_receipt(vector["note"], [VerifierKey.parse(RECEIPTS["server_vkey"])], RECEIPTS["log"])


def _recorded(version: int, position: int, request: str = "p/JoinTable/r1") -> RecordedEvent:
    return RecordedEvent(
        position,
        "table-1",
        version,
        "PlayerSeated",
        1,
        {},
        {"request_id": request, "recorded_at": "2026-12-02T07:00:00.000001Z", "actor": "p"},
        bytes([version]) * 32,
    )


def test_built_from_recorded_events_and_deterministic() -> None:
    server, _ = vector_signers()
    events = [_recorded(3, 10), _recorded(4, 12)]
    receipt = receipt_of(server.name, events)
    assert receipt.request_id == "p/JoinTable/r1"
    assert receipt.time == "2026-12-02T07:00:00.000001Z"
    assert [(e.version, e.position) for e in receipt.events] == [(3, 10), (4, 12)]
    note = sign_receipt(receipt, server)
    assert sign_receipt(receipt_of(server.name, events), server) == note  # same bytes
    opened = open_receipt(note.encode(), [server.verifier])
    assert opened.receipt == receipt and opened.key == server.verifier
    assert Receipt.parse(receipt.text()) == receipt


def test_tampered_receipts_fail() -> None:
    server, witness = vector_signers()
    note = sign_receipt(receipt_of(server.name, [_recorded(1, 1)]), server)
    for forged in (
        note.replace("event 1 1 ", "event 1 2 "),
        note.replace("PlayerSeated", "SeatTimedOut"),
        note.replace("0101", "0102", 1),
    ):
        with pytest.raises(NoteVerificationError):
            open_receipt(forged, [server.verifier])
    with pytest.raises(NoteVerificationError):  # nobody the reader trusts
        open_receipt(note, [witness.verifier])
    with pytest.raises(ReceiptError):
        open_receipt(note, [server.verifier], log="sapsam/elsewhere")
    other = NoteSigner.from_seed("sapsam/elsewhere", bytes(32))
    with pytest.raises(ReceiptError):
        sign_receipt(receipt_of(server.name, [_recorded(1, 1)]), other)


@pytest.mark.parametrize(
    "change",
    [
        ("sapsam receipt v1\n", "sapsam receipt v2\n"),
        ("versions 1 1", "versions 01 1"),
        ("versions 1 1", "versions 1"),
        ("request p/JoinTable/r1\n", ""),
        ("time 2026-12-02T07:00:00.000001Z", "time two words"),
        ("event 1 1 PlayerSeated", "event 1 0 PlayerSeated"),
        ("event 1 1 PlayerSeated", "event 1 1 Player-Seated"),
    ],
)
def test_malformed_text_is_refused(change: tuple[str, str]) -> None:
    text = receipt_of("sapsam/x", [_recorded(1, 1)]).text()
    assert change[0] in text
    with pytest.raises(ReceiptError):
        Receipt.parse(text.replace(*change))


def test_invalid_receipts_cannot_be_built() -> None:
    event = ReceiptEvent(1, 5, "PlayerSeated", bytes(32))
    with pytest.raises(ReceiptError):
        Receipt("sapsam/x", "table-1", "a\nb", "t", (event,))
    with pytest.raises(ReceiptError):
        Receipt("sapsam/x", "table-1", "r", "t", ())
    with pytest.raises(ReceiptError):  # a control character is no part of a word
        Receipt("sapsam/x", "table\x01", "r", "t", (event,))
    with pytest.raises(ReceiptError):  # versions not consecutive
        Receipt("sapsam/x", "table-1", "r", "t", (event, ReceiptEvent(3, 6, "X", bytes(32))))
    with pytest.raises(ReceiptError):  # positions not increasing
        Receipt("sapsam/x", "table-1", "r", "t", (event, ReceiptEvent(2, 5, "X", bytes(32))))
    with pytest.raises(ReceiptError):
        receipt_of("sapsam/x", [])


def test_the_word_control_and_type_checks_decide_as_their_patterns() -> None:
    from sapsam.log import receipt as receipt_module

    characters = [chr(code) for code in range(0x300)] + [
        "\u2028", "\u3000", "\ufeff", "\U0001f600", "\ud800", "\x85", "\xa0",
    ]  # fmt: skip
    texts = ["", "Deal.Started_2", "a" * 100, "a" * 101, "1Deal", "table-x y", "req\x7fid"]
    texts += characters + [first + second for first in characters[::5] for second in characters]
    for text in texts:
        word = receipt_module._WORD.fullmatch(text) is not None
        control = receipt_module._CONTROL.search(text) is not None
        type_name = receipt_module._TYPE.fullmatch(text) is not None
        assert receipt_module._is_word(text) is word, repr(text)
        assert receipt_module._has_control(text) is control, repr(text)
        for _twice in range(2):  # the second time a good type name is remembered
            assert receipt_module._is_type_name(text) is type_name, repr(text)

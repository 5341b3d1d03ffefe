"""Checking a receipt as it arrives: the server's signature and the receipt's text.

Written from docs/transparency.md alone (§5.2 the signed note and the key forms, §5.3 opening a
note, §9.1 the receipt text, §9.2 steps 1 and 2), so the client needs no server code; the tests
hold it to the published vectors (``receipts`` in docs/transparency-vectors.json).

:func:`check_receipt` raises :class:`ReceiptCheckError` saying why a receipt is refused: a
malformed note or text, no signature by a pinned key named as the receipt's log, a signature by
such a key that does not verify, or a receipt whose stream or versions are not the ones the
response carried beside it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

ED25519_TYPE: Final = 0x01
MAX_NOTE_BYTES: Final = 65_536
MAX_SIGNATURE_LINES: Final = 100
MAX_RECEIPT_EVENTS: Final = 256
MAX_INTEGER: Final = 2**63 - 1
EM_DASH: Final = "\u2014"
FIRST_LINE: Final = "sapsam receipt v1"
_DECIMAL: Final = re.compile(r"0|[1-9][0-9]{0,18}")
_TYPE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
_HASH: Final = re.compile(r"[0-9a-f]{64}")
_KEY_ID: Final = re.compile(r"[0-9a-f]{8}")
_NO_SPACE: Final = re.compile(r"[^ ]+")


class ReceiptCheckError(ValueError):
    """A receipt refused; the message says why."""


@dataclass(frozen=True)
class ServerKey:
    """A pinned server key: an Ed25519 verifier key (``vkey``, §5.2) of signature type 0x01."""

    name: str
    key_id: bytes
    public_key: bytes

    @classmethod
    def parse(cls, vkey: str) -> ServerKey:
        """``<name>+<key id, 8 hex digits>+<base64(0x01 || 32-byte key)>``; the key id must be
        the first 4 bytes of SHA-256(name || 0x0A || 0x01 || key). ``ReceiptCheckError``
        otherwise."""
        # A key name holds no '+' (§5.2); the base64 after the key id may.
        name, plus, rest = vkey.strip().partition("+")
        key_id, plus2, rest = rest.partition("+")
        if not plus or not plus2 or not name or not _KEY_ID.fullmatch(key_id):
            raise ReceiptCheckError(f"{vkey[:80]!r} is not <name>+<8 hex digits>+<base64 key>")
        try:
            raw = base64.b64decode(rest, validate=True)
        except (binascii.Error, ValueError):
            raise ReceiptCheckError(f"{vkey[:80]!r}: the key is not base64") from None
        if len(raw) != 33 or raw[0] != ED25519_TYPE:
            raise ReceiptCheckError(f"{vkey[:80]!r} is not an Ed25519 key (type 0x01, 32 bytes)")
        key = cls(name, bytes.fromhex(key_id), raw[1:])
        if key_id_of(name, raw[1:]) != key.key_id:
            raise ReceiptCheckError(f"{vkey[:80]!r}: the key id does not match the name and key")
        return key

    @property
    def vkey(self) -> str:
        """The key in ``vkey`` form again (what :meth:`parse` reads)."""
        encoded = base64.b64encode(bytes([ED25519_TYPE]) + self.public_key).decode()
        return f"{self.name}+{self.key_id.hex()}+{encoded}"


def key_id_of(name: str, public_key: bytes) -> bytes:
    """SHA-256(name || 0x0A || 0x01 || public key)[:4]."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([ED25519_TYPE]) + public_key).digest()[:4]


@dataclass(frozen=True)
class ReceiptText:
    """What a receipt's text states (§9.1) that the keeper compares."""

    log: str
    stream: str
    first_version: int
    last_version: int
    request: str


def check_receipt(
    note: str,
    keys: Sequence[ServerKey],
    stream: str | None = None,
    first_version: int | None = None,
    last_version: int | None = None,
    request: str | None = None,
) -> ReceiptText:
    """Open ``note`` against the pinned ``keys`` (§5.3, §9.2) and parse its text (§9.1); with
    ``stream``, the versions and ``request`` (the store's request id, ``{caller}/{method}/{id}``),
    they must be the text's. Raises ``ReceiptCheckError``."""
    text, signatures = _split(note)
    stated = _parse_text(text)
    verified = False
    for name, key_id, signature in signatures:
        matching = [key for key in keys if (key.name, key.key_id) == (name, key_id)]
        if len(set(matching)) > 1:
            raise ReceiptCheckError(f"two pinned keys named {name} share a key id")
        if not matching:
            continue  # a key we do not pin (a witness, a key rotated long ago): ignored
        try:
            Ed25519PublicKey.from_public_bytes(matching[0].public_key).verify(
                signature, text.encode()
            )
        except InvalidSignature:
            raise ReceiptCheckError(f"the signature by {name} does not verify") from None
        verified = verified or name == stated.log
    if not verified:
        raise ReceiptCheckError(
            f"no signature by a pinned key of the log {stated.log!r}"
            f" (pinned: {', '.join(sorted({key.name for key in keys})) or 'none'})"
        )
    given = (stream, first_version, last_version, request)
    found = (stated.stream, stated.first_version, stated.last_version, stated.request)
    for expected, actual, what in zip(
        given, found, ("stream", "first_version", "last_version", "request"), strict=True
    ):
        if expected is not None and expected != actual:
            raise ReceiptCheckError(f"the response says {what} {expected}, the receipt {actual}")
    return stated


def _split(note: str) -> tuple[str, list[tuple[str, bytes, bytes]]]:
    """(text, [(key name, key id, signature)]) of a signed note (§5.2)."""
    data = note.encode("utf-8", "surrogatepass")
    if len(data) > MAX_NOTE_BYTES:
        raise ReceiptCheckError(f"a note is at most {MAX_NOTE_BYTES} bytes")
    if any(character < " " and character != "\n" for character in note):
        raise ReceiptCheckError("a note holds no control character but newline")
    end = note.rfind("\n\n")
    if end < 0 or not note.endswith("\n"):
        raise ReceiptCheckError("a note is its text, a blank line and signature lines")
    text, lines = note[: end + 1], note[end + 2 : -1].split("\n")
    if len(lines) > MAX_SIGNATURE_LINES:
        raise ReceiptCheckError(f"a note holds at most {MAX_SIGNATURE_LINES} signatures")
    signatures: list[tuple[str, bytes, bytes]] = []
    for line in lines:
        dash, _, rest = line.partition(" ")
        name, _, encoded = rest.partition(" ")
        if dash != EM_DASH or not name or not encoded or " " in encoded:
            raise ReceiptCheckError(f"{line[:80]!r} is not a signature line")
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ReceiptCheckError(f"the signature of {name} is not base64") from None
        if len(raw) < 5:
            raise ReceiptCheckError(f"the signature of {name} is too short")
        signatures.append((name, raw[:4], raw[4:]))
    return text, signatures


def _parse_text(text: str) -> ReceiptText:
    """The receipt text of §9.1, or ``ReceiptCheckError``."""
    lines = text[:-1].split("\n")
    if len(lines) < 7 or lines[0] != FIRST_LINE:
        raise ReceiptCheckError(f"not a receipt: the text does not start {FIRST_LINE!r}")
    fields = {}
    for line, word in zip(
        lines[1:6], ("log", "stream", "versions", "request", "time"), strict=True
    ):
        head, space, value = line.partition(" ")
        if head != word or not space or not value:
            raise ReceiptCheckError(f"line {line[:80]!r}: expected {word!r}")
        fields[word] = value
    for word in ("log", "stream", "time"):
        if not _NO_SPACE.fullmatch(fields[word]):
            raise ReceiptCheckError(f"the {word} holds a space")
    first_text, _, last_text = fields["versions"].partition(" ")
    first, last = _integer(first_text), _integer(last_text)
    events = lines[6:]
    if first < 1 or last < first or last - first + 1 != len(events):
        raise ReceiptCheckError("the versions line does not match the event lines")
    if len(events) > MAX_RECEIPT_EVENTS:
        raise ReceiptCheckError(f"a receipt holds at most {MAX_RECEIPT_EVENTS} events")
    previous_position = 0
    for version, line in enumerate(events, start=first):
        parts = line.split(" ")
        if len(parts) != 5 or parts[0] != "event":
            raise ReceiptCheckError(f"line {line[:80]!r}: expected an event line")
        if _integer(parts[1]) != version:
            raise ReceiptCheckError(f"event line {line[:80]!r}: expected version {version}")
        position = _integer(parts[2])
        if position <= previous_position:
            raise ReceiptCheckError("the event positions do not increase from 1")
        previous_position = position
        if not _TYPE.fullmatch(parts[3]) or not _HASH.fullmatch(parts[4]):
            raise ReceiptCheckError(f"event line {line[:80]!r}: a malformed type or hash")
    return ReceiptText(fields["log"], fields["stream"], first, last, fields["request"])


def _integer(text: str) -> int:
    if not _DECIMAL.fullmatch(text) or int(text) > MAX_INTEGER:
        raise ReceiptCheckError(f"{text[:30]!r} is not a decimal in 0..2^63-1")
    return int(text)

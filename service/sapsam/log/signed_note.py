"""Signed notes (C2SP ``signed-note``, as Go's golang.org/x/mod/sumdb/note writes them) with
Ed25519 signatures (type 0x01) and Ed25519 witness cosignatures (C2SP ``tlog-cosignature``,
type 0x04).

A note is UTF-8 text without control characters other than newline, ending in a newline,
then a blank line, then one or more signature lines::

    — <key name> <base64(4-byte key id, big-endian || signature)>

    key id (Ed25519)             = SHA-256(name || 0x0A || 0x01 || 32-byte public key)[:4]
    key id (Ed25519 cosignature) = SHA-256(name || 0x0A || 0x04 || 32-byte public key)[:4]

An Ed25519 signature signs the note text (every byte up to and including its last newline,
not the blank line). A cosignature is ``8-byte big-endian POSIX time || Ed25519 signature`` over
``"cosignature/v1\\ntime <time>\\n" || note text``.

A verifier key is written as Go's ``vkey``: ``<name>+<8 hex digits of key id>+<base64(type ||
public key)>``; a signing key as Go's ``skey``: ``PRIVATE+KEY+<name>+<key id>+<base64(0x01 ||
32-byte seed)>`` (so a key made here works with Go's ``note.NewSigner`` and back).

Opening a note against known keys: a signature whose (name, key id) matches no known key is
ignored (kept as unverified); one that matches a known key must verify, or the whole note is
refused; a note with no verified signature is refused. So a server key and any number of
witnesses can sign the same checkpoint, and a reader who pins only some of them still reads it.

``cryptography`` (keys) and libsodium (signing and verifying, ``sapsam.fairness.ed25519``) are
imported only where a key signs or verifies, so parsing costs no start-up.
Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Final

from sapsam.frozen import from_fields

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ED25519: Final = 0x01
"""Signature type of an Ed25519 note signature."""
COSIGNATURE_V1: Final = 0x04
"""Signature type of a timestamped Ed25519 witness cosignature (C2SP tlog-cosignature)."""
SIGNATURE_TYPES: Final = {ED25519: "Ed25519", COSIGNATURE_V1: "Ed25519 cosignature/v1"}

PUBLIC_KEY_SIZE: Final = 32
ED25519_SIGNATURE_SIZE: Final = 64
MAX_SIGNATURES: Final = 100
"""More signature lines than this make a note malformed (Go's limit; C2SP asks for >= 16)."""
MAX_NOTE_BYTES: Final = 1 << 16
"""A note longer than this is refused unread (a checkpoint with 100 signatures is under 16 KiB)."""
MAX_COSIGNATURE_TIME: Final = 2**63 - 1

_DASH: Final = "— "
_SKEY_PREFIX: Final = "PRIVATE+KEY+"
_COSIGNATURE_HEADER: Final = "cosignature/v1\ntime {time}\n"
_CONTROL: Final = re.compile(r"[\x00-\x09\x0b-\x1f]")
"""What C2SP forbids in a note: the ASCII control characters (below U+0020) but newline."""


class NoteError(ValueError):
    """A note, key or signature line that is not well formed."""


class NoteVerificationError(NoteError):
    """A well-formed note the known keys do not vouch for: no known signature, a known
    signature that does not verify, or two known keys with one name and key id."""


@lru_cache(maxsize=64)
def check_key_name(name: str) -> None:
    """Refuse a key name that is empty or holds a space (any Unicode space) or a plus sign
    (a name seen before is not checked again: receipts and checkpoints name one key)."""
    if not name or "+" in name or any(character.isspace() for character in name):
        raise NoteError(f"key name {name!r}: must be non-empty, without spaces or '+'")
    if _CONTROL.search(name):
        raise NoteError(f"key name {name!r}: control characters are not allowed")


def key_id(name: str, signature_type: int, public_key: bytes) -> int:
    """SHA-256(name || 0x0A || type || public key)[:4] as a big-endian unsigned integer."""
    digest = hashlib.sha256(name.encode() + b"\n" + bytes([signature_type]) + public_key).digest()
    return int.from_bytes(digest[:4], "big")


def _b64decode(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise NoteError(f"{what} is not standard base64") from None


def _b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class Signature:
    """One signature line: the key's name, its key id, and the signature bytes after the id."""

    name: str
    key_id: int
    signature: bytes

    def line(self) -> str:
        """``— <name> <base64(key id || signature)>`` and a newline."""
        return f"{_DASH}{self.name} {_b64encode(self.key_id.to_bytes(4, 'big') + self.signature)}\n"

    @classmethod
    def parse(cls, line: str) -> Signature:
        """A signature line without its newline."""
        if not line.startswith(_DASH):
            raise NoteError(f"signature line {line[:40]!r} does not start with an em dash")
        name, space, encoded = line[len(_DASH) :].partition(" ")
        if not space:
            raise NoteError(f"signature line {line[:40]!r} has no signature")
        check_key_name(name)
        raw = _b64decode(encoded, f"the signature of {name}")
        if len(raw) < 5:
            raise NoteError(f"the signature of {name} is too short")
        return cls(name, int.from_bytes(raw[:4], "big"), raw[4:])


@dataclass(frozen=True)
class Note:
    """A note's text (ending in a newline) and its signatures, in order."""

    text: str
    signatures: tuple[Signature, ...] = ()

    def encode(self) -> str:
        """The note as sent: text, blank line, signature lines."""
        check_text(self.text)
        if not self.signatures:
            raise NoteError("a signed note needs at least one signature")
        return self.text + "\n" + "".join(signature.line() for signature in self.signatures)


def _utf8(text: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError:
        raise NoteError("a note must be UTF-8 (it holds a lone surrogate)") from None


def _utf8_size(text: str) -> int:
    return len(_utf8(text))


def check_text(text: str) -> None:
    """Refuse note text that could not be signed: empty, not ending in a newline, holding a
    control character other than newline, or too long."""
    _checked_text_bytes(text)


def _checked_text_bytes(text: str) -> bytes:
    """``check_text``, and the text's UTF-8 bytes it measured (what a signature signs)."""
    if not text.endswith("\n"):
        raise NoteError("note text must end with a newline")
    if _CONTROL.search(text):
        raise NoteError("note text must hold no control characters other than newline")
    encoded = _utf8(text)
    if len(encoded) > MAX_NOTE_BYTES:
        raise NoteError(f"note text is longer than {MAX_NOTE_BYTES} bytes")
    return encoded


def parse_note(message: str | bytes) -> Note:
    """Split a signed note into text and signature lines, checking its syntax only."""
    if isinstance(message, bytes):
        if len(message) > MAX_NOTE_BYTES:
            raise NoteError(f"a note is at most {MAX_NOTE_BYTES} bytes")
        try:
            message = message.decode("utf-8")
        except UnicodeDecodeError:
            raise NoteError("a note must be UTF-8") from None
    if len(message) > MAX_NOTE_BYTES or _utf8_size(message) > MAX_NOTE_BYTES:
        raise NoteError(f"a note is at most {MAX_NOTE_BYTES} bytes")
    if _CONTROL.search(message):
        raise NoteError("a note must hold no control characters other than newline")
    split = message.rfind("\n\n")
    if split < 0:
        raise NoteError("a note needs a blank line between its text and its signatures")
    text, block = message[: split + 1], message[split + 2 :]
    if not block.endswith("\n"):
        raise NoteError("a note must end with a newline after its last signature")
    lines = block[:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise NoteError(f"a note holds at most {MAX_SIGNATURES} signatures")
    return Note(text, tuple(Signature.parse(line) for line in lines))


@dataclass(frozen=True)
class VerifierKey:
    """A public key that may vouch for notes: name, signature type and 32-byte Ed25519 key."""

    name: str
    signature_type: int
    public_key: bytes

    def __post_init__(self) -> None:
        check_key_name(self.name)
        if self.signature_type not in SIGNATURE_TYPES:
            raise NoteError(f"unsupported signature type {self.signature_type:#04x}")
        if len(self.public_key) != PUBLIC_KEY_SIZE:
            raise NoteError(f"an Ed25519 public key has 32 bytes, not {len(self.public_key)}")

    @cached_property
    def key_id(self) -> int:
        """The key id a signature by this key carries (a hash: computed once per key, not at
        every signature)."""
        return key_id(self.name, self.signature_type, self.public_key)

    def vkey(self) -> str:
        """``<name>+<key id in 8 hex digits>+<base64(type || public key)>``."""
        material = bytes([self.signature_type]) + self.public_key
        return f"{self.name}+{self.key_id:08x}+{_b64encode(material)}"

    @classmethod
    def parse(cls, vkey: str) -> VerifierKey:
        """A key in ``vkey`` form; its key id must match its name and key."""
        name, plus, rest = vkey.partition("+")
        id_text, plus_again, encoded = rest.partition("+")
        if not plus or not plus_again or not re.fullmatch(r"[0-9a-f]{8}", id_text):
            raise NoteError(f"{vkey!r} is not <name>+<8 hex digits>+<base64 key>")
        material = _b64decode(encoded, "the verifier key")
        if not material:
            raise NoteError("the verifier key is empty")
        key = cls(name, material[0], material[1:])
        if key.key_id != int(id_text, 16):
            raise NoteError(f"{vkey!r}: the key id does not match the name and key")
        return key

    def verify(self, text: str, signature: Signature) -> int | None:
        """Check ``signature`` (by this key's name and id) over ``text``; raises
        ``NoteVerificationError`` if it does not hold. Returns a cosignature's time, else None."""
        from sapsam.fairness import ed25519

        message = text.encode()
        raw = signature.signature
        timestamp = None
        if self.signature_type == COSIGNATURE_V1:
            if len(raw) != 8 + ED25519_SIGNATURE_SIZE:
                raise NoteVerificationError(f"invalid cosignature for key {self.label}")
            timestamp = int.from_bytes(raw[:8], "big")
            if timestamp > MAX_COSIGNATURE_TIME:
                raise NoteVerificationError(f"invalid cosignature time for key {self.label}")
            message = _COSIGNATURE_HEADER.format(time=timestamp).encode() + message
            raw = raw[8:]
        if not ed25519.holds(self.public_key, raw, message):
            raise NoteVerificationError(f"invalid signature for key {self.label}")
        return timestamp

    @property
    def label(self) -> str:
        """``name+keyid`` as Go's errors name a key."""
        return f"{self.name}+{self.key_id:08x}"


class NoteSigner:
    """An Ed25519 private key under a name: signs notes (type 0x01) or cosigns them (0x04)."""

    __slots__ = ("_private", "_secret", "_sign_bytes", "name", "signature_type", "verifier")

    def __init__(
        self, name: str, private_key: Ed25519PrivateKey, signature_type: int = ED25519
    ) -> None:
        from cryptography.hazmat.primitives.serialization import (
            Encoding,
            NoEncryption,
            PrivateFormat,
            PublicFormat,
        )

        from sapsam.fairness import ed25519

        public = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.verifier = VerifierKey(name, signature_type, public)
        self.name = name
        self.signature_type = signature_type
        self._private = private_key
        # libsodium's form of the same key, which signs (sapsam.fairness.ed25519: the same bytes).
        seed = private_key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        self._secret = ed25519.secret_key(seed)
        # Held rather than imported in ``sign``: an import statement there cost ~0.5 us a receipt.
        self._sign_bytes = ed25519.sign

    @classmethod
    def from_seed(cls, name: str, seed: bytes, signature_type: int = ED25519) -> NoteSigner:
        """The signer of a 32-byte Ed25519 seed (RFC 8032 private key)."""
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        if len(seed) != 32:
            raise NoteError(f"an Ed25519 seed has 32 bytes, not {len(seed)}")
        return cls(name, Ed25519PrivateKey.from_private_bytes(seed), signature_type)

    @classmethod
    def generate(cls, name: str, signature_type: int = ED25519) -> NoteSigner:
        """A signer with a fresh random key."""
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls(name, Ed25519PrivateKey.generate(), signature_type)

    @classmethod
    def from_skey(cls, skey: str) -> NoteSigner:
        """A signer from Go's ``PRIVATE+KEY+<name>+<key id>+<base64(type || seed)>``."""
        text = skey.strip()
        if not text.startswith(_SKEY_PREFIX):
            raise NoteError("a signing key starts with PRIVATE+KEY+")
        parts = text[len(_SKEY_PREFIX) :].split("+")
        # The base64 part may itself hold '+': name and key id are the first two fields.
        if len(parts) < 3 or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
            raise NoteError("a signing key is PRIVATE+KEY+<name>+<key id>+<base64 key>")
        name, id_text, encoded = parts[0], parts[1], "+".join(parts[2:])
        material = _b64decode(encoded, "the signing key")
        if len(material) != 33 or material[0] not in SIGNATURE_TYPES:
            raise NoteError("the signing key is not an Ed25519 seed")
        check_key_name(name)
        signer = cls.from_seed(name, material[1:], material[0])
        if signer.verifier.key_id != int(id_text, 16):
            raise NoteError("the signing key's id does not match its name and key")
        return signer

    def skey(self) -> str:
        """The key in Go's ``skey`` form (secret: write it only where no one else can read)."""
        from cryptography.hazmat.primitives.serialization import (
            Encoding,
            NoEncryption,
            PrivateFormat,
        )

        seed = self._private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        material = _b64encode(bytes([self.signature_type]) + seed)
        return f"{_SKEY_PREFIX}{self.name}+{self.verifier.key_id:08x}+{material}"

    def sign(self, text: str, timestamp: int | None = None) -> Signature:
        """This key's signature over note text (a cosignature needs its POSIX ``timestamp``)."""
        message = _checked_text_bytes(text)
        prefix = b""
        if self.signature_type == COSIGNATURE_V1:
            if timestamp is None or not 0 <= timestamp <= MAX_COSIGNATURE_TIME:
                raise NoteError("a cosignature needs a time in 0..2**63-1")
            message = _COSIGNATURE_HEADER.format(time=timestamp).encode() + message
            prefix = timestamp.to_bytes(8, "big")
        elif timestamp is not None:
            raise NoteError("only a cosignature carries a time")
        signed = self._sign_bytes(self._secret, message)
        # Signature(...) without the frozen dataclass's three object.__setattr__ (every receipt).
        return from_fields(
            Signature,
            {"name": self.name, "key_id": self.verifier.key_id, "signature": prefix + signed},
        )


def sign_note(text: str, signers: Iterable[NoteSigner], timestamp: int | None = None) -> str:
    """A signed note of ``text`` by each signer, in order."""
    signatures = tuple(signer.sign(text, timestamp) for signer in signers)
    return Note(text, signatures).encode()


def add_signature(message: str, signer: NoteSigner, timestamp: int | None = None) -> str:
    """``message`` with one more signature (a witness cosigning a checkpoint); an earlier
    signature by the same name and key id is replaced."""
    note = parse_note(message)
    added = signer.sign(note.text, timestamp)
    kept = tuple(
        signature
        for signature in note.signatures
        if (signature.name, signature.key_id) != (added.name, added.key_id)
    )
    return Note(note.text, (*kept, added)).encode()


@dataclass(frozen=True)
class VerifiedSignature:
    """A signature a known key verified; ``timestamp`` is a cosignature's time."""

    key: VerifierKey
    signature: Signature
    timestamp: int | None


@dataclass(frozen=True)
class OpenedNote:
    """A note whose text at least one known key vouches for."""

    text: str
    verified: tuple[VerifiedSignature, ...]
    unverified: tuple[Signature, ...]

    def verified_by(self, key: VerifierKey) -> bool:
        """Whether ``key`` is among the keys that signed."""
        return any(entry.key == key for entry in self.verified)


def open_note(message: str | bytes, known_keys: Sequence[VerifierKey]) -> OpenedNote:
    """Parse a note and verify it against the keys the reader trusts (see the module
    docstring); raises ``NoteError`` for a malformed note and ``NoteVerificationError`` for one
    no known key vouches for."""
    return verify_note(parse_note(message), known_keys)


def verify_note(note: Note, known_keys: Sequence[VerifierKey]) -> OpenedNote:
    """``open_note`` of a note already parsed (``parse_note``): its signatures verified against
    the keys the reader trusts, for a caller that read the note's text before it opens it."""
    by_label: dict[tuple[str, int], list[VerifierKey]] = {}
    for key in known_keys:
        entries = by_label.setdefault((key.name, key.key_id), [])
        if key not in entries:
            entries.append(key)
    verified: list[VerifiedSignature] = []
    unverified: list[Signature] = []
    seen: set[tuple[str, int]] = set()
    for signature in note.signatures:
        label = (signature.name, signature.key_id)
        candidates = by_label.get(label, [])
        if not candidates:
            if signature not in unverified:
                unverified.append(signature)
            continue
        if len(candidates) > 1:
            raise NoteVerificationError(f"ambiguous key {signature.name}+{signature.key_id:08x}")
        if any(entry.signature == signature for entry in verified):
            continue  # the same line again: verified once is enough
        timestamp = candidates[0].verify(note.text, signature)
        if label not in seen:
            seen.add(label)
            verified.append(VerifiedSignature(candidates[0], signature, timestamp))
    if not verified:
        raise NoteVerificationError("note has no verifiable signatures")
    return OpenedNote(note.text, tuple(verified), tuple(unverified))

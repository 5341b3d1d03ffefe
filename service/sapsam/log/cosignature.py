"""Witness cosignatures of checkpoints (C2SP ``tlog-cosignature``, Ed25519, ``cosignature/v1``).

A witness (``sapsam audit monitor --witness-key``) cosigns a checkpoint once it has verified that
the checkpoint is consistent with every one it saw before. The cosignature is one signed-note
signature line::

    — <witness name> base64(u32be(key id) || u64be(time) || Ed25519(message))

    key id  = SHA-256(<witness name> || 0x0A || 0x04 || 32-byte public key)[:4]
    message = "cosignature/v1\\n" || "time <time>\\n" || <checkpoint text>

where ``<time>`` is the decimal POSIX time of the cosignature (no leading zeros), also the 8 bytes
before the signature, and the checkpoint text is the note's body up to and including its last
newline (no signature lines). The server keeps the cosignatures it accepted
(``AddCheckpointCosignature``) and appends them to the checkpoint's note after its own signature
(``with_cosignatures``), so a reader that pins a witness's key can require its cosignature.

The limits here are the server's: at most ``MAX_WITNESSES_PER_CHECKPOINT`` cosignatures per
checkpoint, a witness key in ``vkey`` form of at most ``MAX_WITNESS_KEY_BYTES`` bytes, a
cosignature line of at most ``MAX_COSIGNATURE_LINE_BYTES`` bytes.

Pure: no I/O (the monitor's CLI keeps the witness's key file).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sapsam.log.signed_note import (
    COSIGNATURE_V1,
    MAX_SIGNATURES,
    Note,
    NoteError,
    NoteSigner,
    Signature,
    VerifierKey,
    parse_note,
)

MAX_WITNESSES_PER_CHECKPOINT: Final = 16
"""Cosignatures the server keeps per checkpoint (C2SP asks verifiers to accept at least 16
signature lines; a note with the log's signature and 16 cosignatures is under 4 KiB)."""
MAX_WITNESS_KEY_BYTES: Final = 400
"""A witness's ``vkey`` (name up to about 300 bytes, key id, base64 of 33 bytes)."""
MAX_COSIGNATURE_LINE_BYTES: Final = 512
"""A cosignature line: the name, a space and the base64 of 4 + 8 + 64 bytes (104 characters)."""
COSIGNATURE_HEADER: Final = "cosignature/v1\n"


class CosignatureError(NoteError):
    """A cosignature that is malformed, of another key, or does not verify."""


def cosigned_message(text: str, time: int) -> bytes:
    """The bytes a ``cosignature/v1`` signs over checkpoint ``text`` at POSIX ``time``."""
    return f"{COSIGNATURE_HEADER}time {time}\n{text}".encode()


def witness_signer(name: str) -> NoteSigner:
    """A new witness key (type 0x04) named ``name``: write ``skey()`` where only you can read."""
    return NoteSigner.generate(name, COSIGNATURE_V1)


def cosign(note: str, signer: NoteSigner, time: int) -> Signature:
    """The witness's cosignature line over a signed checkpoint note (only its text is signed)."""
    if signer.signature_type != COSIGNATURE_V1:
        raise CosignatureError("a witness cosigns with a cosignature/v1 key (type 0x04)")
    return signer.sign(parse_note(note).text, time)


@dataclass(frozen=True)
class CheckedCosignature:
    """A cosignature line that verified: the witness's key, the line as sent, and its time."""

    witness: VerifierKey
    line: str
    time: int


def check_cosignature(text: str, origin: str, witness_key: str, line: str) -> CheckedCosignature:
    """Verify one cosignature line (without its newline) by the witness ``witness_key`` (a
    ``vkey`` of type 0x04) over checkpoint ``text`` of the log ``origin``. Raises
    ``CosignatureError`` saying what is wrong: a key that is not a cosigning key or that bears
    the log's own name, a line of another key, a signature that does not verify."""
    if len(witness_key.encode()) > MAX_WITNESS_KEY_BYTES:
        raise CosignatureError(f"a witness key is at most {MAX_WITNESS_KEY_BYTES} bytes")
    if len(line.encode()) > MAX_COSIGNATURE_LINE_BYTES:
        raise CosignatureError(f"a cosignature line is at most {MAX_COSIGNATURE_LINE_BYTES} bytes")
    try:
        witness = VerifierKey.parse(witness_key)
        signature = Signature.parse(line)
    except NoteError as error:
        raise CosignatureError(str(error)) from None
    if witness.signature_type != COSIGNATURE_V1:
        raise CosignatureError("a witness key has signature type 0x04 (cosignature/v1)")
    if witness.name == origin:
        raise CosignatureError(f"a witness may not bear the log's own name {origin!r}")
    if (signature.name, signature.key_id) != (witness.name, witness.key_id):
        raise CosignatureError(f"the cosignature line is not by the key {witness.label}")
    try:
        time = witness.verify(text, signature)
    except NoteError as error:
        raise CosignatureError(str(error)) from None
    assert time is not None  # a type 0x04 key always reads a time
    return CheckedCosignature(witness, signature.line()[:-1], time)


def with_cosignatures(note: str, lines: Sequence[str]) -> str:
    """The signed note with cosignature ``lines`` appended after its own signatures (a line
    already there, or one past the note's limit of signature lines, is left out)."""
    parsed = parse_note(note)
    signatures = list(parsed.signatures)
    for line in lines:
        signature = Signature.parse(line)
        if signature not in signatures and len(signatures) < MAX_SIGNATURES:
            signatures.append(signature)
    return Note(parsed.text, tuple(signatures)).encode()

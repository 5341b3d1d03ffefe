"""Checkpoints of the Merkle tree (C2SP ``tlog-checkpoint``), signed as notes.

The checkpoint is the note text::

    <origin>\\n                      the log's name: sapsam/<server name>, the signing key's name
    <tree size>\\n                   ASCII decimal, no leading zeros ("0" for the empty tree)
    <base64 root hash>\\n            standard base64 of the 32-byte RFC 9162 root
    [<extension line>\\n ...]        optional, non-empty; sapsam writes one: "time <POSIX seconds>"

sapsam's server signs it with its Ed25519 note key (``sapsam.log.signed_note``); witnesses add
cosignatures. A reader opens it against the keys it pins (``open_checkpoint``); the origin must
be the one it expects, so a checkpoint of another log signed by the same key is refused.

Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sapsam.log.merkle import HASH_SIZE, MAX_TREE_SIZE
from sapsam.log.merkle_proofs import verify_consistency
from sapsam.log.signed_note import (
    Note,
    NoteError,
    NoteSigner,
    OpenedNote,
    VerifierKey,
    check_key_name,
    open_note,
    sign_note,
    verify_note,
)

TIME_EXTENSION: Final = "time "
_SIZE: Final = re.compile(r"0|[1-9][0-9]*")


class CheckpointError(NoteError):
    """Note text that is not a checkpoint, or a checkpoint of another log."""


@dataclass(frozen=True)
class Checkpoint:
    """A tree head: which log, how many leaves, which root; and any extension lines."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.origin or "\n" in self.origin:
            raise CheckpointError("a checkpoint's origin is one non-empty line")
        if not 0 <= self.size <= MAX_TREE_SIZE:
            raise CheckpointError(f"a checkpoint's size is in 0..{MAX_TREE_SIZE}")
        if len(self.root) != HASH_SIZE:
            raise CheckpointError(f"a checkpoint's root hash has {HASH_SIZE} bytes")
        for line in self.extensions:
            if not line or "\n" in line:
                raise CheckpointError("an extension line is one non-empty line")

    def text(self) -> str:
        """The note text."""
        root = base64.b64encode(self.root).decode("ascii")
        lines = [self.origin, str(self.size), root, *self.extensions]
        return "".join(line + "\n" for line in lines)

    @property
    def time(self) -> int | None:
        """The POSIX time of sapsam's ``time`` extension line, if it has one."""
        for line in self.extensions:
            if line.startswith(TIME_EXTENSION):
                value = line[len(TIME_EXTENSION) :]
                if _SIZE.fullmatch(value):
                    return int(value)
        return None

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        """A checkpoint from note text (ending in a newline)."""
        if not text.endswith("\n"):
            raise CheckpointError("checkpoint text ends with a newline")
        lines = text[:-1].split("\n")
        if len(lines) < 3:
            raise CheckpointError("a checkpoint has an origin, a size and a root hash")
        origin, size_text, root_text, *extensions = lines
        if not _SIZE.fullmatch(size_text) or len(size_text) > 19:
            raise CheckpointError(f"checkpoint size {size_text[:30]!r} is not a decimal number")
        try:
            root = base64.b64decode(root_text.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raise CheckpointError("the checkpoint's root hash is not base64") from None
        if base64.b64encode(root).decode("ascii") != root_text:
            raise CheckpointError("the checkpoint's root hash is not canonical base64")
        return cls(origin, int(size_text), root, tuple(extensions))


def sapsam_checkpoint(origin: str, size: int, root: bytes, time: int) -> Checkpoint:
    """A checkpoint as sapsam's server issues it: with its ``time <POSIX seconds>`` line."""
    if time < 0:
        raise CheckpointError("a checkpoint's time is not before 1970")
    return Checkpoint(origin, size, root, (f"{TIME_EXTENSION}{time}",))


def sign_checkpoint(checkpoint: Checkpoint, signer: NoteSigner) -> str:
    """The signed note of ``checkpoint``; the key's name must be the origin."""
    if signer.name != checkpoint.origin:
        raise CheckpointError(
            f"the key {signer.name!r} does not sign for the log {checkpoint.origin!r}"
        )
    return sign_note(checkpoint.text(), [signer])


@dataclass(frozen=True)
class OpenedCheckpoint:
    """A checkpoint and the signatures that vouch for it."""

    checkpoint: Checkpoint
    note: OpenedNote


def open_checkpoint(
    message: str | bytes,
    known_keys: Sequence[VerifierKey],
    origin: str,
    require_log_key: bool = True,
) -> OpenedCheckpoint:
    """Verify a signed checkpoint of the log ``origin``: some known key vouches for it and, with
    ``require_log_key``, one of them is the log's own (a key named ``origin``, type 0x01, as a
    witness's cosignature alone does not make the log's statement)."""
    check_key_name(origin)
    note = open_note(message, known_keys)
    checkpoint = Checkpoint.parse(note.text)
    if checkpoint.origin != origin:
        raise CheckpointError(f"a checkpoint of {checkpoint.origin!r}, not of {origin!r}")
    return _vouched(checkpoint, note, require_log_key)


def open_parsed_checkpoint(
    note: Note, checkpoint: Checkpoint, known_keys: Sequence[VerifierKey]
) -> OpenedCheckpoint:
    """``open_checkpoint(message, known_keys, checkpoint.origin)`` for a reader that parsed the
    note (``parse_note(message)``) and its checkpoint (``Checkpoint.parse(note.text)``) already:
    the same checks in the same order, without reading either again."""
    origin = checkpoint.origin
    check_key_name(origin)
    return _vouched(checkpoint, verify_note(note, known_keys), True)


def _vouched(checkpoint: Checkpoint, note: OpenedNote, require_log_key: bool) -> OpenedCheckpoint:
    """With ``require_log_key``, refuse a checkpoint no known key of its log signed."""
    origin = checkpoint.origin
    if require_log_key and not any(
        entry.key.name == origin and entry.timestamp is None for entry in note.verified
    ):
        raise CheckpointError(f"no known key of the log {origin!r} signed this checkpoint")
    return OpenedCheckpoint(checkpoint, note)


def check_extends(old: Checkpoint, new: Checkpoint, proof: Sequence[bytes]) -> None:
    """What a monitor checks of each new checkpoint against the last one it trusted: the same
    log, no fewer leaves (a truncated log), the same root for the same size (a fork), and a
    consistency proof from the old tree to the new (a rewritten history). Raises
    ``CheckpointError`` naming which, or ``ProofError`` for a proof that does not hold."""
    if new.origin != old.origin:
        raise CheckpointError(f"a checkpoint of {new.origin!r} cannot extend {old.origin!r}")
    if new.size < old.size:
        raise CheckpointError(f"the log shrank from {old.size} to {new.size} leaves (truncated)")
    if new.size == old.size and new.root != old.root:
        raise CheckpointError(f"two different roots for {new.size} leaves (a fork)")
    verify_consistency(old.size, new.size, old.root, new.root, proof)

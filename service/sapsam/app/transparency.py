"""The transparency log's application side (docs/transparency.md): what the server signs, and
the answers of the TransparencyService with their bounds.

The checkpointer (``sapsam.store.transparency``) asks ``checkpoint_signer`` for the signed note
of each checkpoint it issues: the C2SP checkpoint of origin ``keys.origin`` (``sapsam/<server
name>``) with its ``time`` line, signed by the server's current key.

The questions (``checkpoint``, ``inclusion_proof``, ``consistency_proof``) check every number a
client sends against the latest signed checkpoint before anything is read: a tree size is at most
that checkpoint's (so every subtree a proof needs is stored: the tree's rows and the checkpoint
commit together), a leaf lies inside the tree asked for, and no proof holds more than
``MAX_PROOF_HASHES`` hashes. A refusal is a ``TransparencyQuestionError`` naming its reason and
field; a log that cannot be read here (no tables, no privilege, a stored tree missing a subtree)
a ``TransparencyUnavailableError``, one of them (``TRANSPARENCY_UNAVAILABLE``).

Nothing is written but a witness's cosignature (``add_cosignature``): by a witness the operator
lists (``ServerKeys.witnesses``), over a checkpoint the server issued, verified before it is kept,
at most ``MAX_WITNESSES_PER_CHECKPOINT`` per checkpoint and one per witness (the first is kept).
``witnessed_note`` is a checkpoint's note with the cosignatures kept appended, as GetCheckpoint
returns it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from sapsam.keys import ServerKeys
from sapsam.log.checkpoint import sapsam_checkpoint, sign_checkpoint
from sapsam.log.cosignature import (
    MAX_COSIGNATURE_LINE_BYTES,
    MAX_WITNESS_KEY_BYTES,
    MAX_WITNESSES_PER_CHECKPOINT,
    CosignatureError,
    check_cosignature,
    with_cosignatures,
)
from sapsam.log.merkle_proofs import Range, consistency_plan, inclusion_plan
from sapsam.log.signed_note import NoteError, VerifierKey, parse_note

MAX_PROOF_HASHES: Final = 64
"""No proof of a tree below 2**63 leaves holds more (an inclusion proof at most 63 hashes, a
consistency proof at most 63 halvings and the old tree's own subtree)."""
MAX_LEAVES_PER_ANSWER: Final = 1_000
"""GetLeaves returns at most this many leaves (40 bytes each on the wire)."""


@dataclass(frozen=True)
class StoredCheckpoint:
    """A signed checkpoint as stored: the tree's size and root, and the signed note."""

    size: int
    root: bytes
    note: str


@dataclass(frozen=True)
class InclusionAnswer:
    """An inclusion proof and what it is for."""

    leaf_index: int
    position: int
    tree_size: int
    hashes: list[bytes]


class TransparencyQuestionError(Exception):
    """A question refused: ``reason`` (an ``ErrorReason`` name), ``field`` the request's."""

    def __init__(self, reason: str, message: str, field: str | None = None) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason, self.message, self.field = reason, message, field


class TransparencyUnavailableError(TransparencyQuestionError):
    """The transparency log cannot be read here: its tables were never made (migration 0008 not
    applied) or this database role may not read them (docs/store.md). FAILED_PRECONDITION,
    reason ``TRANSPARENCY_UNAVAILABLE``: the operator must migrate or grant, a retry won't do."""

    def __init__(self, message: str) -> None:
        super().__init__("TRANSPARENCY_UNAVAILABLE", message)


class IncompleteTreeError(TransparencyUnavailableError, LookupError):
    """The stored tree lacks a subtree a checkpoint's proof needs. The tree's tables are
    append-only and a checkpoint commits with its subtrees, so only a database changed outside
    the service (or a bug) gets here; answered as ``TRANSPARENCY_UNAVAILABLE``, never INTERNAL."""


class TransparencyReads(Protocol):
    """What the answers read (``sapsam.store.transparency.PooledTransparencyReads``)."""

    async def latest_checkpoint(self) -> StoredCheckpoint | None: ...

    async def checkpoint_of_size(self, size: int) -> StoredCheckpoint | None: ...

    async def leaf_of_position(self, position: int) -> int | None: ...

    async def position_of_leaf(self, leaf_index: int) -> int | None: ...

    async def proof_hashes(self, plan: Sequence[Range]) -> list[bytes]: ...

    async def leaves(self, start: int, end: int) -> list[tuple[int, bytes]]: ...

    async def cosignatures(self, size: int) -> list[str]: ...

    async def add_cosignature(
        self, size: int, witness_key: str, line: str, time: int, most: int
    ) -> bool | None: ...


def checkpoint_signer(keys: ServerKeys) -> Callable[[int, bytes, int], str]:
    """sign(size, root, time) -> the signed note, by the server's current key."""

    def sign(size: int, root: bytes, time: int) -> str:
        return sign_checkpoint(sapsam_checkpoint(keys.origin, size, root, time), keys.signer)

    return sign


async def checkpoint(reads: TransparencyReads, tree_size: int) -> StoredCheckpoint:
    """The checkpoint of ``tree_size`` leaves; 0: the latest."""
    if tree_size < 0:
        raise TransparencyQuestionError("BAD_TREE_SIZE", "tree_size is below 0", "tree_size")
    latest = await reads.latest_checkpoint()
    if latest is None:
        raise TransparencyQuestionError("CHECKPOINT_NOT_FOUND", "no checkpoint has been issued yet")
    if tree_size == 0 or tree_size == latest.size:
        return latest
    if tree_size > latest.size:
        raise _not_checkpointed(tree_size, latest.size, "tree_size")
    found = await reads.checkpoint_of_size(tree_size)
    if found is None:
        raise TransparencyQuestionError(
            "CHECKPOINT_NOT_FOUND", f"no checkpoint was issued for {tree_size} leaves", "tree_size"
        )
    return found


async def inclusion_proof(
    reads: TransparencyReads, position: int | None, leaf_index: int | None, tree_size: int
) -> InclusionAnswer:
    """The proof that the event at ``position`` (or leaf ``leaf_index``) is in the tree of
    ``tree_size`` leaves (0: the latest checkpoint's)."""
    if position is None and leaf_index is None:
        raise TransparencyQuestionError("MISSING_FIELD", "give position or leaf_index", "leaf")
    if position is not None and position < 1:
        raise TransparencyQuestionError(
            "INVALID_ARGUMENT", "a log position is at least 1", "position"
        )
    if leaf_index is not None and leaf_index < 0:
        raise TransparencyQuestionError(
            "BAD_LEAF_INDEX", "a leaf index is at least 0", "leaf_index"
        )
    size = await _checkpointed_size(reads, tree_size, "tree_size")
    if position is not None:
        leaf_index = await reads.leaf_of_position(position)
        if leaf_index is None:
            raise TransparencyQuestionError(
                "LEAF_NOT_FOUND", f"no event at position {position} is in the tree", "position"
            )
    assert leaf_index is not None
    if leaf_index >= size:
        raise TransparencyQuestionError(
            "BAD_LEAF_INDEX",
            f"leaf {leaf_index} is not in the tree of {size} leaves",
            "position" if position is not None else "leaf_index",
        )
    if position is None:
        position = await reads.position_of_leaf(leaf_index)
        if position is None:  # every leaf below a checkpoint's size is stored, unless tampered
            raise IncompleteTreeError(
                f"the stored tree lacks leaf {leaf_index} of the checkpoint of {size} leaves"
            )
    hashes = await reads.proof_hashes(inclusion_plan(leaf_index, size))
    return InclusionAnswer(leaf_index, position, size, _bounded(hashes))


async def consistency_proof(
    reads: TransparencyReads, old_size: int, new_size: int
) -> tuple[int, int, list[bytes]]:
    """(old size, new size, proof) that the tree of ``old_size`` leaves is a prefix of the tree
    of ``new_size`` (0: the latest checkpoint's)."""
    if old_size < 1:
        raise TransparencyQuestionError("BAD_TREE_SIZE", "old_size is at least 1", "old_size")
    if new_size < 0:
        raise TransparencyQuestionError("BAD_TREE_SIZE", "new_size is below 0", "new_size")
    size = await _checkpointed_size(reads, new_size, "new_size")
    if old_size > size:
        raise TransparencyQuestionError(
            "BAD_TREE_SIZE", f"old_size {old_size} is above new_size {size}", "old_size"
        )
    hashes = await reads.proof_hashes(consistency_plan(old_size, size))
    return old_size, size, _bounded(hashes)


async def leaves(
    reads: TransparencyReads, start_index: int, end_index: int
) -> list[tuple[int, bytes]]:
    """(position, chained hash) of the leaves from ``start_index`` up to ``end_index`` (0: the
    latest checkpoint's size), at most ``MAX_LEAVES_PER_ANSWER`` of them."""
    if end_index < 0:
        raise TransparencyQuestionError("BAD_LEAF_INDEX", "end_index is below 0", "end_index")
    if start_index < 0:
        raise TransparencyQuestionError("BAD_LEAF_INDEX", "start_index is below 0", "start_index")
    end = await _checkpointed_size(reads, end_index, "end_index")
    if start_index >= end:
        raise TransparencyQuestionError(
            "BAD_LEAF_INDEX", f"start_index {start_index} is not below {end}", "start_index"
        )
    found = await reads.leaves(start_index, min(end, start_index + MAX_LEAVES_PER_ANSWER))
    if not found:  # every leaf below a checkpoint's size is stored, and so is its event
        raise IncompleteTreeError(f"no leaves are stored from {start_index} below {end}")
    return found


async def witnessed_note(reads: TransparencyReads, found: StoredCheckpoint) -> str:
    """The checkpoint's signed note with the witnesses' cosignatures kept for it appended."""
    lines = await reads.cosignatures(found.size)
    return with_cosignatures(found.note, lines) if lines else found.note


async def add_cosignature(
    reads: TransparencyReads, keys: ServerKeys, tree_size: int, witness_key: str, line: str
) -> tuple[str, bool]:
    """Keep a listed witness's cosignature of the checkpoint of ``tree_size`` leaves once it
    verifies; (the checkpoint's note with its cosignatures, whether this one was added)."""
    # Cheapest first, so hostile input costs little: presence and sizes, then parsing the key,
    # then the operator's list, then the database, and the signature last.
    if not witness_key:
        raise TransparencyQuestionError("MISSING_FIELD", "give witness_key", "witness_key")
    if not line:
        raise TransparencyQuestionError("MISSING_FIELD", "give cosignature", "cosignature")
    if tree_size < 1:
        raise TransparencyQuestionError("BAD_TREE_SIZE", "tree_size is at least 1", "tree_size")
    if (
        len(witness_key) > MAX_WITNESS_KEY_BYTES
        or len(witness_key.encode()) > MAX_WITNESS_KEY_BYTES
    ):
        raise TransparencyQuestionError(
            "BAD_COSIGNATURE",
            f"a witness key is at most {MAX_WITNESS_KEY_BYTES} bytes",
            "witness_key",
        )
    if len(line) > MAX_COSIGNATURE_LINE_BYTES or len(line.encode()) > MAX_COSIGNATURE_LINE_BYTES:
        raise TransparencyQuestionError(
            "BAD_COSIGNATURE",
            f"a cosignature line is at most {MAX_COSIGNATURE_LINE_BYTES} bytes",
            "cosignature",
        )
    try:
        witness = VerifierKey.parse(witness_key)
    except NoteError as error:
        raise TransparencyQuestionError("BAD_COSIGNATURE", str(error), "witness_key") from None
    if witness not in keys.witnesses:
        raise TransparencyQuestionError(
            "WITNESS_NOT_ACCEPTED",
            f"the operator does not list {witness.label} among the witnesses it accepts",
            "witness_key",
        )
    found = await checkpoint(reads, tree_size)
    try:
        checked = check_cosignature(parse_note(found.note).text, keys.origin, witness_key, line)
    except CosignatureError as error:
        raise TransparencyQuestionError("BAD_COSIGNATURE", str(error), "cosignature") from None
    added = await reads.add_cosignature(
        found.size, witness.vkey(), checked.line, checked.time, MAX_WITNESSES_PER_CHECKPOINT
    )
    if added is None:
        raise TransparencyQuestionError(
            "TOO_MANY_COSIGNATURES",
            f"the checkpoint of {found.size} leaves has {MAX_WITNESSES_PER_CHECKPOINT}"
            " cosignatures already",
            "tree_size",
        )
    return await witnessed_note(reads, found), added


async def _checkpointed_size(reads: TransparencyReads, size: int, field: str) -> int:
    """``size`` (0: the latest checkpoint's) once it is known to be at most the latest's."""
    if size < 0:
        raise TransparencyQuestionError("BAD_TREE_SIZE", f"{field} is below 0", field)
    latest = await reads.latest_checkpoint()
    latest_size = latest.size if latest is not None else 0
    if size > latest_size or latest_size == 0:
        raise _not_checkpointed(size, latest_size, field)
    return size or latest_size


def _not_checkpointed(size: int, latest: int, field: str) -> TransparencyQuestionError:
    return TransparencyQuestionError(
        "TREE_SIZE_NOT_CHECKPOINTED",
        f"the latest checkpoint covers {latest} leaves, not {size}: ask again in a few seconds",
        field,
    )


def _bounded(hashes: list[bytes]) -> list[bytes]:
    if len(hashes) > MAX_PROOF_HASHES:  # cannot happen below 2**63 leaves; never sent if it did
        raise RuntimeError(f"a proof of {len(hashes)} hashes")
    return hashes

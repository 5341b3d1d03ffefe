"""Reading the proof an export carries: the header's ``transparency`` object and an event's
``inclusion`` (docs/audit.md §2.5), within their bounds.

Pure and light (no cryptography: signatures are checked in ``sapsam.audit.anchoring``). Each
reader raises ``ExportFormatError`` naming the field, which the verifier reports as a failed
``format`` check; an export beyond a bound is malformed, not verified.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from sapsam.audit.export_format import (
    ConsistencyProof,
    EventInclusion,
    ExportFormatError,
    ExportTransparency,
)
from sapsam.frozen import from_fields

_new: Final = object.__new__
_set_attribute: Final = object.__setattr__

HASH_HEX: Final = 64
"""Hex digits of one 32-byte hash."""
MAX_INCLUSION_HASHES: Final = 64
"""An inclusion proof in a tree below 2**63 leaves holds at most 63 hashes."""
MAX_CONSISTENCY_HASHES: Final = 128
"""A consistency proof holds at most about twice as many (docs/transparency.md §4.3)."""
MAX_CONSISTENCY_PROOFS: Final = 8
"""Consistency proofs one export carries (one per tree size a reader may hold)."""
MAX_CHECKPOINT_CHARS: Final = 1 << 16
"""A signed note is at most 64 KiB (docs/transparency.md §5.2)."""
MAX_LEAF_INDEX: Final = 2**63 - 2
"""The last leaf of the largest tree (sizes are at most 2**63 - 1)."""


def _fail(where: str, message: str) -> ExportFormatError:
    return ExportFormatError(f"{where}: {message}")


def _size(value: object, where: str, largest: int) -> int:
    if type(value) is not int or not 0 <= value <= largest:
        raise _fail(where, f"must be an integer in 0..{largest}")
    return value


def proof_bytes(value: object, where: str, most: int) -> bytes:
    """A proof's hashes: lowercase hex of 32-byte hashes, concatenated, at most ``most``."""
    if type(value) is not str:
        raise _fail(where, "must be a hex string")
    if len(value) % HASH_HEX or len(value) > most * HASH_HEX:
        raise _fail(where, f"must hold whole 32-byte hashes, at most {most}")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise _fail(where, "is not hex") from None
    if len(raw) * 2 != len(value):
        raise _fail(where, "must be hex digits only")
    return raw


def inclusion_from_value(value: object, where: str) -> EventInclusion:
    """An event's ``inclusion`` object: ``{"leaf_index": I, "proof": "<hex>"}``."""
    if type(value) is not dict:
        raise _fail(where, "must be a JSON object")
    return EventInclusion(
        leaf_index=_size(value.get("leaf_index"), f"{where}.leaf_index", MAX_LEAF_INDEX),
        proof=proof_bytes(value.get("proof"), f"{where}.proof", MAX_INCLUSION_HASHES),
    )


def quick_transparency(value: object) -> ExportTransparency | None:
    """``transparency_from_value`` of the usual header object (a checkpoint within bounds, no
    consistency proof or an empty list of them), or None to take the named checks."""
    if type(value) is not dict or len(value) > 2:
        return None
    checkpoint = value.get("checkpoint")
    proofs = value.get("consistency", [])
    if (
        type(checkpoint) is not str
        or not checkpoint
        or len(checkpoint) > MAX_CHECKPOINT_CHARS
        or proofs != []
        or type(proofs) is not list
        or len(value) != 1 + ("consistency" in value)
    ):
        return None
    return from_fields(ExportTransparency, {"checkpoint": checkpoint, "consistency": ()})


def transparency_from_value(value: object, where: str) -> ExportTransparency:
    """The header's ``transparency`` object: ``{"checkpoint": "<signed note>", "consistency":
    [{"old_size", "new_size", "proof"}, ...]}`` (``consistency`` may be absent or empty)."""
    if type(value) is not dict:
        raise _fail(where, "must be a JSON object")
    checkpoint = value.get("checkpoint")
    if type(checkpoint) is not str or not checkpoint:
        raise _fail(f"{where}.checkpoint", "must be the signed checkpoint's text")
    if len(checkpoint) > MAX_CHECKPOINT_CHARS:
        raise _fail(f"{where}.checkpoint", f"is longer than {MAX_CHECKPOINT_CHARS} characters")
    proofs = value.get("consistency", [])
    if type(proofs) is not list or len(proofs) > MAX_CONSISTENCY_PROOFS:
        raise _fail(f"{where}.consistency", f"must be a list of at most {MAX_CONSISTENCY_PROOFS}")
    return ExportTransparency(
        checkpoint=checkpoint,
        consistency=tuple(
            _consistency(entry, f"{where}.consistency[{index}]")
            for index, entry in enumerate(proofs)
        ),
    )


def _consistency(value: object, where: str) -> ConsistencyProof:
    if type(value) is not dict:
        raise _fail(where, "must be a JSON object")
    entry: Mapping[str, Any] = value
    return ConsistencyProof(
        old_size=_size(entry.get("old_size"), f"{where}.old_size", MAX_LEAF_INDEX + 1),
        new_size=_size(entry.get("new_size"), f"{where}.new_size", MAX_LEAF_INDEX + 1),
        proof=proof_bytes(entry.get("proof"), f"{where}.proof", MAX_CONSISTENCY_HASHES),
    )

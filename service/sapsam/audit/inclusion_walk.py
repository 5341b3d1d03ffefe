"""RFC 9162's inclusion walk (§2.1.3.2) for many proofs in one process, sharing what they share.

The proofs of one tree climb to the same root, and above the node where two leaves' paths meet they
walk the same nodes with the same hashes: the events of one export, and the events of the many
exports a verifier goes through under one checkpoint (deals exported within a few seconds carry
the same one). The walk from a state to its end depends on nothing but that state and the hashes
left in the proof: the state is ``(fn, sn, r)`` of the RFC, which the tree size, the height (the
number of halvings of the leaf index so far) and ``r``, the node hash reached, determine. So
:func:`inclusion_root` remembers, for each node hash it reaches, the state and the rest of the
proof that reached it, and, once that proof is done, the root it reached; a later proof that
reaches the same state with the same remaining hashes reaches the same root: it stops there and
takes that root. This is a memo of a pure function, so every result is exactly the RFC walk's
(``ProofError`` included): a proof with any other hash left, or of another tree size, walks on.

A process keeps at most :data:`_STATES_KEPT` states (then forgets them all and starts again);
:func:`forget_walks` empties them, so that the next proofs are walked in full.
"""

from __future__ import annotations

from hashlib import sha256 as _sha256
from typing import Final

from sapsam.audit.proof_format import MAX_INCLUSION_HASHES
from sapsam.log.merkle_proofs import ProofError

HASH_SIZE: Final = 32

# What a proof left at the state where it reached a node hash: the tree size, the height, fn, the
# proof and where its remaining hashes start, and a one-element list holding the root that proof
# reached (None until it is done, or if it failed). sn is (size - 1) >> height, so not kept.
_Passed = tuple[int, int, int, bytes, int, list[bytes | None]]

_STATES: dict[bytes, _Passed] = {}
_STATES_KEPT: Final = 1 << 16
"""About 13 MB at most: a 4-seat deal export in a tree of 4,000 leaves leaves ~300 states."""


# The events a table's deal exports share (its opening events, read once for all of them:
# ``export_reading.OPENING_TYPES``) whose proofs reached a root: by the event's identity, each
# entry holding the event (so the id is not reused while kept), the tree size and that root. An
# event is immutable, so the same event in a tree of the same size reaches the same root again
# (``anchoring`` keeps at most 4,096).
EVENT_ROOTS: dict[int, tuple[object, int, bytes]] = {}


def forget_walks() -> None:
    """Forget every state walked so far (the next proofs are walked in full)."""
    _STATES.clear()
    EVENT_ROOTS.clear()


def inclusion_root(leaf: int, size: int, leaf_hash: bytes, proof: bytes) -> bytes:
    """The root that the concatenated ``proof`` makes of leaf ``leaf``'s hash in a tree of
    ``size`` leaves, exactly as RFC 9162 §2.1.3.2 computes it (``ProofError`` where it fails),
    with fewer hashes computed (see the module docstring)."""
    end = len(proof)
    if end % HASH_SIZE:
        raise ProofError("the proof is not whole 32-byte hashes")
    if end > MAX_INCLUSION_HASHES * HASH_SIZE:
        raise ProofError(f"a proof holds at most {MAX_INCLUSION_HASHES} hashes")
    if not 0 <= leaf < size or size >= 1 << MAX_INCLUSION_HASHES:
        raise ProofError(f"leaf index {leaf} is not in a tree of {size} leaves")
    states = _STATES
    if len(states) >= _STATES_KEPT:
        states.clear()
    reached: list[bytes | None] = [None]
    fn, sn, result = leaf, size - 1, leaf_hash
    height = start = 0
    while start < end:
        passed = states.get(result)
        if (
            passed is not None
            and passed[0] == size
            and passed[1] == height
            and passed[2] == fn
            and passed[5][0] is not None
            and end - start == len(passed[3]) - passed[4]
            and proof[start:] == passed[3][passed[4] :]
        ):
            root = passed[5][0]
            reached[0] = root
            return root
        states[result] = (size, height, fn, proof, start, reached)
        if sn == 0:
            raise ProofError("the proof is longer than the path from the leaf to the root")
        sibling = proof[start : start + HASH_SIZE]
        start += HASH_SIZE
        if fn & 1 or fn == sn:
            result = _sha256(b"\x01" + sibling + result).digest()
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
                height += 1
        else:
            result = _sha256(b"\x01" + result + sibling).digest()
        fn >>= 1
        sn >>= 1
        height += 1
    if sn != 0:
        raise ProofError("the proof is shorter than the path from the leaf to the root")
    reached[0] = result
    return result

"""RFC 9162's inclusion walk (§2.1.3.2) for the many proofs of one export, sharing upper paths.

The events of an export lie in one tree, so their proofs climb to the same root and, above the
node where two leaves' paths meet, walk the same nodes with the same hashes. :class:`SharedWalk`
remembers, for each height of the walk (the number of halvings of the leaf index so far), the
state at which the last proof passed it: ``(fn, sn, r)`` of the RFC, with the proof's remaining
hashes and, once that proof is done, the root it reached. A later proof that reaches a remembered
state with the same remaining hashes reaches the same root, since the walk depends on nothing
else: it stops there and takes that root. It checks this only from the height where its leaf's
path meets the previous proof's leaf's path (the highest differing bit of the two indexes), the
first height where they can meet, so the walk below costs no look-up. Proofs taken in leaf order
(as an export's are) meet each other's paths as low as any earlier proof's; in any other order
the result is the same, with fewer shortcuts.
"""

from __future__ import annotations

from hashlib import sha256 as _sha256
from typing import Final

from sapsam.audit.proof_format import MAX_INCLUSION_HASHES
from sapsam.log.merkle_proofs import ProofError

HASH_SIZE: Final = 32

# What a proof left at one height: fn, sn, r, the proof and where its remaining hashes start, and
# a one-element list holding the root that proof reached (None until it is done, or if it failed).
_Passed = tuple[int, int, bytes, bytes, int, list[bytes | None]]


class SharedWalk:
    """The inclusion walk of one export's proofs, all in one tree (see the module docstring)."""

    __slots__ = ("_heights", "_last_leaf")

    def __init__(self) -> None:
        self._heights: list[_Passed | None] = [None] * (MAX_INCLUSION_HASHES + 1)
        self._last_leaf: int | None = None

    def root_of(self, leaf: int, size: int, leaf_hash: bytes, proof: bytes) -> bytes:
        """The root that the concatenated ``proof`` makes of leaf ``leaf``'s hash in a tree of
        ``size`` leaves, exactly as RFC 9162 §2.1.3.2 computes it (``ProofError`` where it
        fails), with fewer hashes computed."""
        end = len(proof)
        if end % HASH_SIZE:
            raise ProofError("the proof is not whole 32-byte hashes")
        if end > MAX_INCLUSION_HASHES * HASH_SIZE:
            raise ProofError(f"a proof holds at most {MAX_INCLUSION_HASHES} hashes")
        if not 0 <= leaf < size or size >= 1 << MAX_INCLUSION_HASHES:
            raise ProofError(f"leaf index {leaf} is not in a tree of {size} leaves")
        heights = self._heights
        last = self._last_leaf
        self._last_leaf = leaf
        # The first height at which this leaf's path can meet the previous one's.
        meet = (leaf ^ last).bit_length() if last is not None else MAX_INCLUSION_HASHES + 1
        reached: list[bytes | None] = [None]
        fn, sn, result = leaf, size - 1, leaf_hash
        height = start = 0
        while start < end:
            if height >= meet:
                passed = heights[height]
                if (
                    passed is not None
                    and passed[0] == fn
                    and passed[1] == sn
                    and passed[2] == result
                    and passed[5][0] is not None
                    and end - start == len(passed[3]) - passed[4]
                    and proof[start:] == passed[3][passed[4] :]
                ):
                    root = passed[5][0]
                    reached[0] = root
                    return root
            heights[height] = (fn, sn, result, proof, start, reached)
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

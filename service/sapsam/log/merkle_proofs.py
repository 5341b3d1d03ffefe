"""Inclusion and consistency proofs: RFC 9162 §2.1.3 and §2.1.4, planned for a node store.

Generation goes in two steps so that a store answers a proof with one query:

1. ``inclusion_plan(index, size)`` / ``consistency_plan(old_size, new_size)``: the subtrees whose
   MTHs the proof lists, as leaf ranges ``[start, end)``, in the RFC's order (PATH and SUBPROOF
   of §2.1.3.1 and §2.1.4.1, deepest first). At most one range per proof is not a perfect
   subtree (it lies on the right edge of the tree), so ``plan_nodes`` of a plan is O(log n)
   perfect subtrees: ``NodeId``s a store reads in one statement.
2. ``proof_from_plan(plan, node)``: each range's MTH from those perfect subtrees
   (``sapsam.log.merkle.subtree_hash``).

``inclusion_proof`` and ``consistency_proof`` do both. Verification follows the RFC's
algorithms (§2.1.3.2 and §2.1.4.2) step by step, needs only the hashes, and raises
``ProofError`` saying what does not hold; a proof longer than any tree of its size could need is
refused before any hashing (``MAX_PROOF_HASHES``).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sapsam.log.merkle import (
    EMPTY_ROOT,
    HASH_SIZE,
    MerkleError,
    NodeId,
    check_hash,
    check_size,
    node_hash,
    perfect_subtrees,
    subtree_hash,
)

Range = tuple[int, int]
"""Leaves ``[start, end)`` of the tree: a subtree the RFC's recursion reaches."""

MAX_PROOF_HASHES: Final = 2 * 64
"""No proof for a tree below 2**63 leaves holds more hashes (inclusion: at most 63; consistency:
at most about twice that); a longer one is refused unread."""


class ProofError(ValueError):
    """A proof that does not prove what it is offered for."""


def _split(size: int) -> int:
    """k: the largest power of two smaller than ``size`` (``size`` > 1)."""
    return 1 << ((size - 1).bit_length() - 1)


def inclusion_plan(index: int, size: int) -> tuple[Range, ...]:
    """The subtrees of PATH(index, D[size]) (RFC 9162 §2.1.3.1), deepest first."""
    check_size(size)
    if not 0 <= index < size:
        raise MerkleError(f"leaf index {index} is not in a tree of {size} leaves")
    plan: list[Range] = []
    start, end = 0, size
    while end - start > 1:
        k = _split(end - start)
        if index < start + k:
            plan.append((start + k, end))
            end = start + k
        else:
            plan.append((start, start + k))
            start += k
    plan.reverse()
    return tuple(plan)


def consistency_plan(old_size: int, new_size: int) -> tuple[Range, ...]:
    """The subtrees of PROOF(old_size, D[new_size]) (RFC 9162 §2.1.4.1), deepest first; empty
    when ``old_size`` is 0 or equals ``new_size`` (nothing to prove)."""
    check_size(new_size)
    if not 0 <= old_size <= new_size:
        raise MerkleError(f"no consistency proof from size {old_size} to size {new_size}")
    if old_size in (0, new_size):
        return ()
    plan: list[Range] = []
    start, end, whole = 0, new_size, True
    # SUBPROOF(m, D[start:end], whole), m = old_size - start, unrolled.
    while old_size != end:
        k = _split(end - start)
        if old_size <= start + k:
            plan.append((start + k, end))
            end = start + k
        else:
            plan.append((start, start + k))
            start += k
            whole = False
    if not whole:
        # SUBPROOF(m, D[m], false) = MTH(D[m]): the old tree's own subtree ends the recursion.
        plan.append((start, end))
    plan.reverse()
    return tuple(plan)


def plan_nodes(plan: Sequence[Range]) -> tuple[NodeId, ...]:
    """Every perfect subtree a plan's hashes are made of, each once, in plan order."""
    seen: dict[NodeId, None] = {}
    for start, end in plan:
        for node_id in perfect_subtrees(start, end):
            seen.setdefault(node_id)
    return tuple(seen)


def proof_from_plan(plan: Sequence[Range], node: Callable[[NodeId], bytes]) -> list[bytes]:
    """The proof's hashes: each planned subtree's MTH from stored perfect subtrees."""
    return [subtree_hash(start, end, node) for start, end in plan]


def inclusion_proof(index: int, size: int, node: Callable[[NodeId], bytes]) -> list[bytes]:
    """The inclusion proof of leaf ``index`` in the tree of ``size`` leaves."""
    return proof_from_plan(inclusion_plan(index, size), node)


def consistency_proof(old_size: int, new_size: int, node: Callable[[NodeId], bytes]) -> list[bytes]:
    """The consistency proof from the tree of ``old_size`` leaves to that of ``new_size``."""
    return proof_from_plan(consistency_plan(old_size, new_size), node)


def _check_proof_hashes(proof: Sequence[bytes]) -> None:
    if len(proof) > MAX_PROOF_HASHES:
        raise ProofError(f"a proof holds at most {MAX_PROOF_HASHES} hashes, not {len(proof)}")
    for position, value in enumerate(proof):
        if len(value) != HASH_SIZE:
            raise ProofError(f"proof hash {position} has {len(value)} bytes, not {HASH_SIZE}")


def _checked_arguments(size: int, hashes: dict[str, bytes], proof: Sequence[bytes]) -> None:
    try:
        check_size(size)
        for what, value in hashes.items():
            check_hash(value, what)
    except MerkleError as error:
        raise ProofError(str(error)) from None
    _check_proof_hashes(proof)


def root_from_inclusion_proof(
    index: int, size: int, leaf_hash: bytes, proof: Sequence[bytes]
) -> bytes:
    """The root that ``proof`` makes of leaf ``index``'s hash in a tree of ``size`` leaves
    (RFC 9162 §2.1.3.2 steps 1-5); ``ProofError`` if the proof cannot be for that place."""
    _checked_arguments(size, {"leaf hash": leaf_hash}, proof)
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is not in a tree of {size} leaves")
    fn, sn, result = index, size - 1, leaf_hash
    for sibling in proof:
        if sn == 0:
            raise ProofError("the proof is longer than the path from the leaf to the root")
        if fn & 1 or fn == sn:
            result = node_hash(sibling, result)
            # Past the right edge's missing siblings: climb until this node is a right child.
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            result = node_hash(result, sibling)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the proof is shorter than the path from the leaf to the root")
    return result


def verify_inclusion(
    index: int, size: int, leaf_hash: bytes, proof: Sequence[bytes], root: bytes
) -> None:
    """Check that leaf ``index`` of the tree of ``size`` leaves with root ``root`` has hash
    ``leaf_hash``; raises ``ProofError`` otherwise."""
    _checked_arguments(size, {"root": root}, proof)
    if root_from_inclusion_proof(index, size, leaf_hash, proof) != root:
        raise ProofError(f"the proof of leaf {index} does not lead to the tree's root")


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """Check that the tree of ``new_size`` leaves with ``new_root`` extends the one of
    ``old_size`` leaves with ``old_root`` (RFC 9162 §2.1.4.2); raises ``ProofError`` otherwise.

    Sizes 0 and equal sizes take an empty proof: the empty tree (whose root must be
    ``EMPTY_ROOT``) is a prefix of every tree, and a tree is consistent with itself only if both
    roots are the same.
    """
    _checked_arguments(new_size, {"old root": old_root, "new root": new_root}, proof)
    if not 0 <= old_size <= new_size:
        raise ProofError(f"a tree of {new_size} leaves cannot extend one of {old_size}")
    if old_size == 0 or old_size == new_size:
        if proof:
            raise ProofError("the proof between these sizes must be empty")
        if old_size == 0 and old_root != EMPTY_ROOT:
            raise ProofError("the old root is not the empty tree's")
        if old_size == new_size and old_root != new_root:
            raise ProofError(f"two different roots for the tree of {new_size} leaves")
        return
    if not proof:
        raise ProofError("the proof is empty")
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is a node of the new tree
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    old_result = new_result = path[0]
    for sibling in path[1:]:
        if sn == 0:
            raise ProofError("the proof is longer than the new tree's right edge")
        if fn & 1 or fn == sn:
            old_result = node_hash(sibling, old_result)
            new_result = node_hash(sibling, new_result)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            new_result = node_hash(new_result, sibling)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the proof is shorter than the new tree's right edge")
    if old_result != old_root:
        raise ProofError(f"the proof does not lead to the old root (size {old_size})")
    if new_result != new_root:
        raise ProofError(f"the proof does not lead to the new root (size {new_size})")

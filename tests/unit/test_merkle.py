"""sapsam.log.merkle and merkle_proofs against RFC 9162 §2.1 written out literally here.

The reference below (``_mth``, ``_path``, ``_subproof``) is the RFC's recursive definitions over
lists of leaves, sharing nothing with the code under test but SHA-256. Exhaustive where cheap:
every tree size 0..64, every leaf of each for inclusion, every pair of sizes for consistency,
every single-bit and structural tampering of every proof refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sapsam.log.merkle import (
    EMPTY_ROOT,
    Frontier,
    MerkleError,
    MerkleTree,
    NodeId,
    event_leaf_hash,
    leaf_hash,
    perfect_subtrees,
    root_hash,
)
from sapsam.log.merkle_proofs import (
    MAX_PROOF_HASHES,
    ProofError,
    consistency_plan,
    consistency_proof,
    inclusion_plan,
    inclusion_proof,
    plan_nodes,
    root_from_inclusion_proof,
    verify_consistency,
    verify_inclusion,
)

SIZES = range(65)
LEAVES = [b"leaf %d" % number for number in range(max(SIZES))]
TREE = MerkleTree.of_leaves(LEAVES)


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def _mth(leaves: Sequence[bytes]) -> bytes:
    if not leaves:
        return _sha(b"")
    if len(leaves) == 1:
        return _sha(b"\x00" + leaves[0])
    k = _split(len(leaves))
    return _sha(b"\x01" + _mth(leaves[:k]) + _mth(leaves[k:]))


def _path(m: int, leaves: Sequence[bytes]) -> list[bytes]:
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if m < k:
        return [*_path(m, leaves[:k]), _mth(leaves[k:])]
    return [*_path(m - k, leaves[k:]), _mth(leaves[:k])]


def _subproof(m: int, leaves: Sequence[bytes], whole: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if whole else [_mth(leaves)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, leaves[:k], whole), _mth(leaves[k:])]
    return [*_subproof(m - k, leaves[k:], False), _mth(leaves[:k])]


def _flip(value: bytes, bit: int) -> bytes:
    return bytes([value[0] ^ (1 << bit), *value[1:]])


def _inclusion_refused(
    index: int, size: int, hashed: bytes, proof: Sequence[bytes], root: bytes
) -> bool:
    try:
        verify_inclusion(index, size, hashed, proof, root)
    except ProofError:
        return True
    return False


def _consistency_refused(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    try:
        verify_consistency(old_size, new_size, old_root, new_root, proof)
    except ProofError:
        return True
    return False


def test_the_empty_tree_and_the_prefixes() -> None:
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert root_hash([]) == EMPTY_ROOT == MerkleTree().root()
    assert leaf_hash(b"") == _sha(b"\x00")
    assert event_leaf_hash(bytes(32)) == _sha(b"\x00" + bytes(32))
    with pytest.raises(MerkleError):
        event_leaf_hash(bytes(31))


@pytest.mark.parametrize("size", SIZES)
def test_roots_of_every_size_agree_with_the_rfc_definition(size: int) -> None:
    expected = _mth(LEAVES[:size])
    assert TREE.root(size) == expected
    assert root_hash(leaf_hash(leaf) for leaf in LEAVES[:size]) == expected
    frontier = Frontier.from_nodes(size, TREE.node)
    assert frontier.root() == expected
    assert len(frontier.hashes) == size.bit_count()


def test_the_frontier_grows_leaf_by_leaf_and_hands_out_each_complete_subtree_once() -> None:
    frontier = Frontier()
    stored: dict[NodeId, bytes] = {}
    for size, leaf in enumerate(LEAVES):
        completed = frontier.append(leaf_hash(leaf))
        # The leaf itself plus one parent per trailing 1-bit of the old size.
        assert len(completed) == 1 + (~size & (size + 1)).bit_length() - 1
        for node_id, hashed in completed:
            assert node_id not in stored
            assert hashed == _mth(LEAVES[node_id.start : node_id.end])
            stored[node_id] = hashed
        assert frontier.size == size + 1
        assert frontier.root() == _mth(LEAVES[: size + 1])
        assert frontier.hashes == Frontier.from_nodes(size + 1, stored.__getitem__).hashes
    # About two stored nodes per leaf: 2n - popcount(n).
    assert len(stored) == 2 * len(LEAVES) - len(LEAVES).bit_count()


def test_a_frontier_is_checked_and_copies_are_independent() -> None:
    with pytest.raises(MerkleError):
        Frontier(3, [bytes(32)])
    with pytest.raises(MerkleError):
        Frontier(1, [bytes(31)])
    with pytest.raises(MerkleError):
        Frontier(-1, [])
    frontier = TREE.frontier()
    copy = frontier.copy()
    copy.append(leaf_hash(b"more"))
    assert frontier.size == TREE.size and copy.size == TREE.size + 1
    with pytest.raises(MerkleError):
        frontier.append(b"short")


def test_perfect_subtrees_are_the_binary_digits_of_a_right_edge() -> None:
    assert perfect_subtrees(0, 7) == (NodeId(2, 0), NodeId(1, 2), NodeId(0, 6))
    assert perfect_subtrees(88, 95) == (NodeId(2, 22), NodeId(1, 46), NodeId(0, 94))
    assert perfect_subtrees(8, 16) == (NodeId(3, 1),)
    with pytest.raises(MerkleError):
        perfect_subtrees(4, 4)


def _inclusion_cases() -> list[tuple[int, int]]:
    return [(index, size) for size in SIZES for index in range(size)]


@pytest.mark.parametrize("size", SIZES[1:])
def test_inclusion_proofs_of_every_leaf_match_the_rfc_and_verify(size: int) -> None:
    root = _mth(LEAVES[:size])
    for index in range(size):
        proof = inclusion_proof(index, size, TREE.node)
        assert proof == _path(index, LEAVES[:size])
        hashed = leaf_hash(LEAVES[index])
        verify_inclusion(index, size, hashed, proof, root)
        assert root_from_inclusion_proof(index, size, hashed, proof) == root


@pytest.mark.parametrize("size", SIZES[1:])
def test_tampered_inclusion_proofs_are_refused(size: int) -> None:
    root = _mth(LEAVES[:size])
    for index in range(size):
        proof = inclusion_proof(index, size, TREE.node)
        hashed = leaf_hash(LEAVES[index])
        for other in range(size):
            if other != index:
                # Another place in the same tree: the leaf's hash is not there.
                assert _inclusion_refused(other, size, hashed, proof, root)
        wrong: list[tuple[int, int, bytes, list[bytes], bytes]] = [
            (index, size * 2, hashed, proof, root),
            (index, size // 2, hashed, proof, root),
            (index, size, leaf_hash(b"other"), proof, root),
            (index, size, hashed, proof, EMPTY_ROOT),
            (index, size, hashed, [*proof, root], root),
            (index, size, hashed, [root, *proof], root),
            (index, size, hashed, proof[:-1], root),
            (size, size, hashed, proof, root),
            (-1, size, hashed, proof, root),
        ]
        for position in range(len(proof)):
            for bit in (0, 3, 7):
                changed = list(proof)
                changed[position] = _flip(changed[position], bit)
                wrong.append((index, size, hashed, changed, root))
            wrong.append((index, size, hashed, proof[:position] + proof[position + 1 :], root))
        if len(proof) > 1:
            wrong.append((index, size, hashed, [proof[1], proof[0], *proof[2:]], root))
        for case in wrong:
            if case[1:] == (size, hashed, proof, root) and case[0] == index:
                continue
            assert _inclusion_refused(*case), case[:2]


@pytest.mark.parametrize("new_size", SIZES)
def test_consistency_proofs_of_every_pair_match_the_rfc_and_verify(new_size: int) -> None:
    new_root = _mth(LEAVES[:new_size])
    for old_size in range(new_size + 1):
        proof = consistency_proof(old_size, new_size, TREE.node)
        expected = [] if old_size in (0, new_size) else _subproof(old_size, LEAVES[:new_size], True)
        assert proof == expected
        verify_consistency(old_size, new_size, _mth(LEAVES[:old_size]), new_root, proof)


@pytest.mark.parametrize("new_size", SIZES[2:])
def test_tampered_consistency_proofs_are_refused(new_size: int) -> None:
    new_root = _mth(LEAVES[:new_size])
    for old_size in range(1, new_size):
        old_root = _mth(LEAVES[:old_size])
        proof = consistency_proof(old_size, new_size, TREE.node)
        wrong: list[tuple[int, int, bytes, bytes, list[bytes]]] = [
            (old_size, new_size, old_root, new_root, []),
            (old_size, new_size, new_root, old_root, proof),
            (old_size, new_size, _mth(LEAVES[1 : old_size + 1]), new_root, proof),
            (old_size, new_size, old_root, _mth(LEAVES[1 : new_size + 1]), proof),
            (old_size, new_size, old_root, new_root, [*proof, new_root]),
            (old_size, new_size, old_root, new_root, [old_root, *proof]),
            (old_size, new_size, old_root, new_root, proof[:-1]),
            (old_size, new_size * 2, old_root, new_root, proof),
            (new_size, old_size, new_root, old_root, proof),
        ]
        for other in range(1, new_size + 1):
            if other != old_size:
                # The proof is for one old size only (the old root given is the wrong one's).
                wrong.append((other, new_size, old_root, new_root, proof))
        for position in range(len(proof)):
            for bit in (0, 4, 7):
                changed = list(proof)
                changed[position] = _flip(changed[position], bit)
                wrong.append((old_size, new_size, old_root, new_root, changed))
        for case in wrong:
            assert _consistency_refused(*case), case[:2]


def test_degenerate_consistency_cases() -> None:
    root = _mth(LEAVES[:5])
    verify_consistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])
    verify_consistency(0, 5, EMPTY_ROOT, root, [])
    verify_consistency(5, 5, root, root, [])
    for case in [
        (0, 5, root, root, []),  # the empty tree's root is fixed
        (5, 5, root, EMPTY_ROOT, []),  # a fork: two roots for one size
        (5, 5, root, root, [root]),
        (0, 5, EMPTY_ROOT, root, [root]),
        (6, 5, root, root, []),
    ]:
        assert _consistency_refused(*case), case


def test_malformed_arguments_are_refused_before_hashing() -> None:
    root = _mth(LEAVES[:4])
    proof = inclusion_proof(1, 4, TREE.node)
    hashed = leaf_hash(LEAVES[1])
    for case in [
        (1, 4, hashed, [*proof[:-1], proof[-1][:31]], root),
        (1, 4, hashed[:31], proof, root),
        (1, 4, hashed, proof, root + b"\x00"),
        (1, 2**63, hashed, proof, root),
        (1, 4, hashed, [root] * (MAX_PROOF_HASHES + 1), root),
    ]:
        assert _inclusion_refused(*case), case
    assert _consistency_refused(1, 4, root[:5], root, proof)
    with pytest.raises(MerkleError):
        inclusion_plan(4, 4)
    with pytest.raises(MerkleError):
        consistency_plan(5, 4)
    with pytest.raises(MerkleError):
        TREE.root(TREE.size + 1)
    with pytest.raises(MerkleError):
        TREE.node(NodeId(0, TREE.size))


def _cost_bound(size: int) -> int:
    return 2 * max(size.bit_length(), 1)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1, max_value=2**62), st.data())
def test_any_proof_needs_only_logarithmically_many_stored_nodes(
    size: int, data: st.DataObject
) -> None:
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    old_size = data.draw(st.integers(min_value=0, max_value=size))
    for plan in (inclusion_plan(index, size), consistency_plan(old_size, size)):
        nodes = plan_nodes(plan)
        assert len(nodes) <= _cost_bound(size)
        for start, end in plan:
            assert 0 <= start < end <= size
        assert all(node.end <= size for node in nodes)
    # At most one planned range per proof is not a perfect subtree.
    for plan in (inclusion_plan(index, size), consistency_plan(old_size, size)):
        assert sum(len(perfect_subtrees(*subtree)) > 1 for subtree in plan) <= 1


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=700), st.data())
def test_larger_random_trees_agree_with_the_reference(size: int, data: st.DataObject) -> None:
    leaves = [b"%d" % number for number in range(size)]
    tree = MerkleTree.of_leaves(leaves)
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    old_size = data.draw(st.integers(min_value=1, max_value=size))
    root = _mth(leaves)
    assert tree.root() == root
    lookups: list[NodeId] = []

    def counted(node_id: NodeId) -> bytes:
        lookups.append(node_id)
        return tree.node(node_id)

    proof = inclusion_proof(index, size, counted)
    assert proof == _path(index, leaves)
    assert len(lookups) <= _cost_bound(size)
    verify_inclusion(index, size, leaf_hash(leaves[index]), proof, root)
    lookups.clear()
    proof = consistency_proof(old_size, size, counted)
    assert len(lookups) <= _cost_bound(size)
    verify_consistency(old_size, size, _mth(leaves[:old_size]), root, proof)

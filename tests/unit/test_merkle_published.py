"""sapsam.log.merkle against an independent implementation's published test data.

The vectors are transcribed (data only, no code) from the Go module
github.com/transparency-dev/merkle (the Merkle library of Certificate Transparency and Trillian):

- leaves, roots, inclusion and consistency proofs, and the corruption probes:
  ``proof/verify_test.go`` (``leaves``, ``roots``, ``inclusionProofs`` — leaf numbers there
  are 1-based —, ``consistencyProofs``, ``corruptInclusionProof``, ``corruptConsistencyProof``,
  ``TestVerifyConsistency``);
- which stored nodes each proof is made of: ``proof/proof_test.go`` (``TestInclusion``,
  ``TestConsistency``; their ``NewNodeID(level, index)`` is our ``NodeId(level, index)``, and
  they list a right-edge subtree's parts smallest first, where ``perfect_subtrees`` lists them
  largest first).

One deliberate difference: their ``VerifyConsistency`` accepts any old root for an old size of
0; ours requires the empty tree's root there (``test_merkle.test_degenerate_consistency_cases``).
"""

from __future__ import annotations

import pytest

from sapsam.log.merkle import EMPTY_ROOT, MerkleTree, NodeId, leaf_hash, perfect_subtrees
from sapsam.log.merkle_proofs import (
    ProofError,
    consistency_plan,
    consistency_proof,
    inclusion_plan,
    inclusion_proof,
    verify_consistency,
    verify_inclusion,
)

LEAVES = [
    bytes.fromhex(text)
    for text in (
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    )
]
ROOTS = [  # roots[n - 1] is the root of the first n leaves
    bytes.fromhex(text)
    for text in (
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    )
]
SOME_HASH = bytes.fromhex("abacaba000000000000000000000000000000000000000000060061e00123456")


def _hashes(*texts: str) -> list[bytes]:
    return [bytes.fromhex(text) for text in texts]


# (leaf number, 1-based as published; tree size; proof)
INCLUSION = [
    (
        1,
        8,
        _hashes(
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ),
    ),
    (
        6,
        8,
        _hashes(
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ),
    ),
    (3, 3, _hashes("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125")),
    (
        2,
        5,
        _hashes(
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ),
    ),
    (1, 1, []),
]

# (old size, new size, proof)
CONSISTENCY = [
    (1, 1, []),
    (
        1,
        8,
        _hashes(
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ),
    ),
    (
        6,
        8,
        _hashes(
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ),
    ),
    (
        2,
        5,
        _hashes(
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ),
    ),
    (
        6,
        7,
        _hashes(
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ),
    ),
]


def N(level: int, index: int) -> NodeId:  # noqa: N802 - reads like the published NewNodeID
    return NodeId(level, index)


# proof/proof_test.go TestInclusion: (size, index, nodes in their order)
INCLUSION_NODES = [
    (1, 0, []),
    (2, 0, [N(0, 1)]),
    (2, 1, [N(0, 0)]),
    (3, 1, [N(0, 0), N(0, 2)]),
    (7, 0, [N(0, 1), N(1, 1), N(0, 6), N(1, 2)]),
    (7, 1, [N(0, 0), N(1, 1), N(0, 6), N(1, 2)]),
    (7, 2, [N(0, 3), N(1, 0), N(0, 6), N(1, 2)]),
    (7, 3, [N(0, 2), N(1, 0), N(0, 6), N(1, 2)]),
    (7, 4, [N(0, 5), N(0, 6), N(2, 0)]),
    (7, 5, [N(0, 4), N(0, 6), N(2, 0)]),
    (7, 6, [N(1, 2), N(2, 0)]),
    (4, 2, [N(0, 3), N(1, 0)]),
    (5, 3, [N(0, 2), N(1, 0), N(0, 4)]),
    (6, 3, [N(0, 2), N(1, 0), N(1, 2)]),
    (6, 4, [N(0, 5), N(2, 0)]),
    (15, 10, [N(0, 11), N(1, 4), N(0, 14), N(1, 6), N(3, 0)]),
    (31, 24, [N(0, 25), N(1, 13), N(0, 30), N(1, 14), N(3, 2), N(4, 0)]),
    (95, 81, [N(0, 80), N(1, 41), N(2, 21), N(0, 94), N(1, 46), N(2, 22), N(4, 4), N(6, 0)]),
]

# proof/proof_test.go TestConsistency: (old size, new size, nodes in their order)
CONSISTENCY_NODES = [
    (1, 2, [N(0, 1)]),
    (1, 4, [N(0, 1), N(1, 1)]),
    (1, 6, [N(0, 1), N(1, 1), N(1, 2)]),
    (2, 3, [N(0, 2)]),
    (2, 8, [N(1, 1), N(2, 1)]),
    (3, 7, [N(0, 2), N(0, 3), N(1, 0), N(0, 6), N(1, 2)]),
    (4, 7, [N(0, 6), N(1, 2)]),
    (5, 7, [N(0, 4), N(0, 5), N(0, 6), N(2, 0)]),
    (6, 7, [N(1, 2), N(0, 6), N(2, 0)]),
    (7, 8, [N(0, 6), N(0, 7), N(1, 2), N(2, 0)]),
    (1, 1, []),
    (2, 2, []),
    (3, 3, []),
    (4, 4, []),
    (5, 5, []),
    (7, 7, []),
    (8, 8, []),
    (2, 4, [N(1, 1)]),
    (3, 5, [N(0, 2), N(0, 3), N(1, 0), N(0, 4)]),
    (3, 6, [N(0, 2), N(0, 3), N(1, 0), N(1, 2)]),
    (4, 6, [N(1, 2)]),
    (1, 7, [N(0, 1), N(1, 1), N(0, 6), N(1, 2)]),
    (10, 15, [N(1, 4), N(1, 5), N(0, 14), N(1, 6), N(3, 0)]),
    (24, 31, [N(3, 2), N(0, 30), N(1, 14), N(2, 6), N(4, 0)]),
    (
        81,
        95,
        [N(0, 80), N(0, 81), N(1, 41), N(2, 21), N(0, 94), N(1, 46), N(2, 22), N(4, 4), N(6, 0)],
    ),
]

TREE = MerkleTree.of_leaves(LEAVES)


def _in_their_order(plan: tuple[tuple[int, int], ...]) -> list[NodeId]:
    return [node for subtree in plan for node in reversed(perfect_subtrees(*subtree))]


def test_the_published_roots() -> None:
    assert [TREE.root(size) for size in range(1, 9)] == ROOTS
    assert TREE.root(0) == EMPTY_ROOT


@pytest.mark.parametrize(("number", "size", "proof"), INCLUSION)
def test_the_published_inclusion_proofs(number: int, size: int, proof: list[bytes]) -> None:
    index = number - 1
    assert inclusion_proof(index, size, TREE.node) == proof
    verify_inclusion(index, size, leaf_hash(LEAVES[index]), proof, ROOTS[size - 1])


@pytest.mark.parametrize(("number", "size", "proof"), INCLUSION)
def test_the_published_inclusion_corruptions_are_refused(
    number: int, size: int, proof: list[bytes]
) -> None:
    index, root, hashed = number - 1, ROOTS[size - 1], leaf_hash(LEAVES[number - 1])
    probes = [
        (index - 1, size, root, hashed, proof),
        (index + 1, size, root, hashed, proof),
        (index ^ 2, size, root, hashed, proof),
        (index, size * 2, root, hashed, proof),
        (index, size // 2, root, hashed, proof),
        (index, size, root, b"WrongLeaf", proof),
        (index, size, EMPTY_ROOT, hashed, proof),
        (index, size, SOME_HASH, hashed, proof),
        (index, size, root, hashed, [*proof, b""]),
        (index, size, root, hashed, [*proof, root]),
        (index, size, root, hashed, [b"", *proof]),
        (index, size, root, hashed, [root, *proof]),
    ]
    for position in range(len(proof)):
        changed = list(proof)
        changed[position] = bytes([changed[position][0] ^ 8, *changed[position][1:]])
        probes.append((index, size, root, hashed, changed))
    if proof:
        probes.append((index, size, root, hashed, proof[:-1]))
    if len(proof) > 1:
        probes.append((index, size, root, hashed, [proof[0], SOME_HASH, *proof[1:]]))
    for probe_index, probe_size, probe_root, probe_leaf, probe_proof in probes:
        with pytest.raises(ProofError):
            verify_inclusion(probe_index, probe_size, probe_leaf, probe_proof, probe_root)


@pytest.mark.parametrize(("old_size", "new_size", "proof"), CONSISTENCY)
def test_the_published_consistency_proofs(old_size: int, new_size: int, proof: list[bytes]) -> None:
    assert consistency_proof(old_size, new_size, TREE.node) == proof
    verify_consistency(old_size, new_size, ROOTS[old_size - 1], ROOTS[new_size - 1], proof)


@pytest.mark.parametrize(("old_size", "new_size", "proof"), [c for c in CONSISTENCY if c[2]])
def test_the_published_consistency_corruptions_are_refused(
    old_size: int, new_size: int, proof: list[bytes]
) -> None:
    old_root, new_root = ROOTS[old_size - 1], ROOTS[new_size - 1]
    probes = [
        (old_size - 1, new_size, old_root, new_root, proof),
        (old_size + 1, new_size, old_root, new_root, proof),
        (old_size ^ 2, new_size, old_root, new_root, proof),
        (old_size, new_size * 2, old_root, new_root, proof),
        (old_size, new_size // 2, old_root, new_root, proof),
        (old_size, new_size, b"WrongRoot", new_root, proof),
        (old_size, new_size, old_root, b"WrongRoot", proof),
        (old_size, new_size, new_root, old_root, proof),
        (old_size, new_size, old_root, new_root, []),
        (old_size, new_size, old_root, new_root, [*proof, b""]),
        (old_size, new_size, old_root, new_root, [*proof, old_root]),
        (old_size, new_size, old_root, new_root, [*proof, new_root]),
        (old_size, new_size, old_root, new_root, [b"", *proof]),
        (old_size, new_size, old_root, new_root, [old_root, *proof]),
        (old_size, new_size, old_root, new_root, [new_root, *proof]),
        (old_size, new_size, old_root, new_root, [proof[0], *proof]),
        (old_size, new_size, old_root, new_root, proof[:-1]),
    ]
    for position in range(len(proof)):
        changed = list(proof)
        changed[position] = bytes([changed[position][0] ^ 16, *changed[position][1:]])
        probes.append((old_size, new_size, old_root, new_root, changed))
    for probe in probes:
        with pytest.raises(ProofError):
            verify_consistency(*probe)


def test_the_published_degenerate_consistency_cases() -> None:
    # TestVerifyConsistency's table, with "don't care" roots; old size 0 as noted above.
    root1, root2 = b"don't care 1".ljust(32), b"don't care 2".ljust(32)
    refused = [
        (0, 0, root1, root2, []),
        (1, 1, root1, root2, []),
        (1, 0, root1, root2, []),
        (2, 1, root1, root2, []),
        (1, 2, root1, root2, []),
        (0, 0, EMPTY_ROOT, root2, []),
        (1, 1, EMPTY_ROOT, root2, []),
        (0, 0, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]),
        (0, 1, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]),
        (1, 1, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]),
    ]
    for probe in refused:
        with pytest.raises(ProofError):
            verify_consistency(*probe)
    verify_consistency(1, 1, root2, root2, [])
    verify_consistency(0, 1, EMPTY_ROOT, root2, [])


def test_the_published_single_entry_cases() -> None:
    hashed = leaf_hash(b"data")
    verify_inclusion(0, 1, hashed, [], hashed)
    for leaf, root in [(hashed, b""), (b"", hashed), (b"", b"")]:
        with pytest.raises(ProofError):
            verify_inclusion(0, 1, leaf, [], root)
    for index, size in [(0, 0), (0, 1), (1, 0), (2, 1)]:
        for leaf, root in [(SOME_HASH, b""), (b"", EMPTY_ROOT), (SOME_HASH, EMPTY_ROOT)]:
            with pytest.raises(ProofError):
                verify_inclusion(index, size, leaf, [], root)


@pytest.mark.parametrize(("size", "index", "nodes"), INCLUSION_NODES)
def test_inclusion_proofs_read_the_published_stored_nodes(
    size: int, index: int, nodes: list[NodeId]
) -> None:
    assert _in_their_order(inclusion_plan(index, size)) == nodes


@pytest.mark.parametrize(("old_size", "new_size", "nodes"), CONSISTENCY_NODES)
def test_consistency_proofs_read_the_published_stored_nodes(
    old_size: int, new_size: int, nodes: list[NodeId]
) -> None:
    assert _in_their_order(consistency_plan(old_size, new_size)) == nodes

"""The Merkle tree over the global event order: RFC 9162 §2.1 hashing, and how a store keeps it.

Hashing (RFC 9162 §2.1.1, the same as RFC 6962 §2.1), SHA-256 throughout::

    MTH({})      = SHA-256()                                   (the empty tree: e3b0c442…)
    leaf hash    = SHA-256(0x00 || leaf bytes)
    node hash    = SHA-256(0x01 || left || right)
    MTH(D[n])    = node hash(MTH(D[0:k]), MTH(D[k:n]))         for n > 1,
                   k the largest power of two smaller than n

sapsam's leaves: leaf ``i`` is the ``i``-th event of the log in position order (0-based,
counting events, not positions: positions may have gaps where an append rolled back), and its
bytes are exactly the event's 32-byte chained hash (``sapsam.log.chain``; docs/store.md). The
chained hash already commits to the stream, the version and the content, so nothing else is
needed to identify the event; the leaf's place in the tree is what the inclusion proof proves.

How a store keeps the tree (docs/transparency.md, "Storing the tree"): only *perfect* subtrees
are ever stored. ``NodeId(level, index)`` names the perfect subtree over leaves
``[index * 2**level, (index + 1) * 2**level)``; its hash never changes once its last leaf is in.
Appending leaf ``n`` completes the leaf itself (level 0) and one more node per trailing 1-bit of
``n`` (so two rows per leaf on average), which ``Frontier.append`` returns for the store to
insert. Every subtree that RFC 9162's recursion reaches is either perfect or lies on the right
edge of some tree size; a right-edge subtree ``[start, end)`` is the fold, right to left, of the
perfect subtrees of the binary decomposition of ``end - start`` (``perfect_subtrees``). So a root,
an inclusion proof or a consistency proof for *any* tree size up to the stored one costs
O(log n) node look-ups (``sapsam.log.merkle_proofs`` plans them), and the frontier of size n
(its ``popcount(n)`` perfect subtrees) is what a checkpointer keeps to extend the tree by new
leaves without reading the old ones.

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

HASH_SIZE: Final = 32
LEAF_PREFIX: Final = b"\x00"
NODE_PREFIX: Final = b"\x01"
EMPTY_ROOT: Final = hashlib.sha256(b"").digest()
"""MTH of the empty tree: SHA-256 of no bytes."""

MAX_TREE_SIZE: Final = 2**63 - 1
"""The largest tree size accepted anywhere (a checkpoint's size fits a signed 64-bit column)."""

_sha256 = hashlib.sha256


class MerkleError(ValueError):
    """Arguments that describe no tree: an index past the end, a size out of range, a hash of the
    wrong length."""


def leaf_hash(leaf: bytes) -> bytes:
    """SHA-256(0x00 || leaf)."""
    return _sha256(LEAF_PREFIX + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 || left || right)."""
    return _sha256(NODE_PREFIX + left + right).digest()


def event_leaf(chain_hash: bytes) -> bytes:
    """The leaf bytes of an event: its chained hash, exactly (32 bytes)."""
    if len(chain_hash) != HASH_SIZE:
        raise MerkleError(f"an event's chained hash has {HASH_SIZE} bytes, not {len(chain_hash)}")
    return chain_hash


def event_leaf_hash(chain_hash: bytes) -> bytes:
    """The leaf hash of an event: SHA-256(0x00 || its chained hash)."""
    return leaf_hash(event_leaf(chain_hash))


def check_size(size: int, what: str = "tree size") -> None:
    """Refuse a tree size that is negative or past ``MAX_TREE_SIZE``."""
    if not 0 <= size <= MAX_TREE_SIZE:
        raise MerkleError(f"{what} {size} is outside 0..{MAX_TREE_SIZE}")


def check_hash(value: bytes, what: str = "hash") -> None:
    """Refuse a hash that is not 32 bytes."""
    if len(value) != HASH_SIZE:
        raise MerkleError(f"a {what} has {HASH_SIZE} bytes, not {len(value)}")


@dataclass(frozen=True, order=True)
class NodeId:
    """The perfect subtree over leaves ``[index * 2**level, (index + 1) * 2**level)``."""

    level: int
    index: int

    @property
    def start(self) -> int:
        """The first leaf it covers."""
        return self.index << self.level

    @property
    def end(self) -> int:
        """One past the last leaf it covers."""
        return (self.index + 1) << self.level


def perfect_subtrees(start: int, end: int) -> tuple[NodeId, ...]:
    """The perfect subtrees that make up leaves ``[start, end)``, left to right, largest first.

    For a subtree RFC 9162's recursion reaches (``start`` a multiple of a power of two at least
    ``end - start``, which every range ``merkle_proofs`` plans is), these are the binary digits
    of ``end - start``, and ``fold_subtrees`` of their hashes is the subtree's MTH.
    """
    if not 0 <= start < end:
        raise MerkleError(f"no subtree covers leaves [{start}, {end})")
    nodes: list[NodeId] = []
    position = start
    while position < end:
        remaining = end - position
        level = remaining.bit_length() - 1
        # Aligned: the largest power of two that both divides the position and fits.
        while position & ((1 << level) - 1):
            level -= 1
        nodes.append(NodeId(level, position >> level))
        position += 1 << level
    return tuple(nodes)


def fold_subtrees(hashes: Sequence[bytes]) -> bytes:
    """MTH of a right-edge subtree from its perfect subtrees' hashes (largest first): folded
    right to left, ``node(h0, node(h1, node(h2, h3)))``. No hashes: the empty tree."""
    if not hashes:
        return EMPTY_ROOT
    folded = hashes[-1]
    for left in reversed(hashes[:-1]):
        folded = node_hash(left, folded)
    return folded


def subtree_hash(start: int, end: int, node: Callable[[NodeId], bytes]) -> bytes:
    """MTH of leaves ``[start, end)`` from stored perfect-subtree hashes (``node`` looks one up)."""
    return fold_subtrees([node(part) for part in perfect_subtrees(start, end)])


def root_hash(leaf_hashes: Iterable[bytes]) -> bytes:
    """MTH of a whole list of leaf hashes (not leaves: ``leaf_hash`` each leaf first)."""
    frontier = Frontier()
    for value in leaf_hashes:
        frontier.append(value)
    return frontier.root()


class Frontier:
    """The right edge of a tree of ``size`` leaves: the hashes of its ``popcount(size)`` perfect
    subtrees, largest (leftmost) first. Enough to append leaves and compute the root in
    O(log n), without the earlier leaves (a checkpointer's state between checkpoints)."""

    __slots__ = ("_hashes", "_size")

    def __init__(self, size: int = 0, hashes: Sequence[bytes] = ()) -> None:
        check_size(size)
        if len(hashes) != size.bit_count():
            raise MerkleError(
                f"a frontier of size {size} holds {size.bit_count()} hashes, not {len(hashes)}"
            )
        for value in hashes:
            check_hash(value, "frontier hash")
        self._size = size
        self._hashes = list(hashes)

    @classmethod
    def from_nodes(cls, size: int, node: Callable[[NodeId], bytes]) -> Frontier:
        """The frontier of a stored tree of ``size`` leaves: ``popcount(size)`` look-ups."""
        parts = perfect_subtrees(0, size) if size else ()
        return cls(size, [node(part) for part in parts])

    @property
    def size(self) -> int:
        """How many leaves the tree holds."""
        return self._size

    @property
    def hashes(self) -> tuple[bytes, ...]:
        """The perfect subtrees' hashes, largest first."""
        return tuple(self._hashes)

    def nodes(self) -> tuple[NodeId, ...]:
        """The ids of the perfect subtrees ``hashes`` holds, in the same order."""
        return perfect_subtrees(0, self._size) if self._size else ()

    def append(self, value: bytes) -> list[tuple[NodeId, bytes]]:
        """Add one leaf hash; returns every perfect subtree it completes, the leaf first, each
        with its hash: what a store inserts (and nothing else ever needs inserting)."""
        check_hash(value, "leaf hash")
        if self._size >= MAX_TREE_SIZE:
            raise MerkleError(f"a tree holds at most {MAX_TREE_SIZE} leaves")
        index = self._size
        completed = [(NodeId(0, index), value)]
        level = 0
        merged = value
        hashes = self._hashes
        # Each trailing 1-bit of the old size is a perfect subtree the new leaf pairs up with.
        while index & 1:
            merged = node_hash(hashes.pop(), merged)
            index >>= 1
            level += 1
            completed.append((NodeId(level, index), merged))
        hashes.append(merged)
        self._size += 1
        return completed

    def extend(self, values: Iterable[bytes]) -> list[tuple[NodeId, bytes]]:
        """``append`` each leaf hash; every completed subtree, in order."""
        completed: list[tuple[NodeId, bytes]] = []
        for value in values:
            completed.extend(self.append(value))
        return completed

    def root(self) -> bytes:
        """MTH of the tree: the frontier folded right to left."""
        return fold_subtrees(self._hashes)

    def copy(self) -> Frontier:
        """An independent frontier of the same tree."""
        return Frontier(self._size, self._hashes)


class MerkleTree:
    """A whole tree in memory, kept as a store keeps it: every perfect subtree's hash by level.

    Serves roots and proofs for every size up to its own (through ``sapsam.log.merkle_proofs``),
    for tests, vectors and exports small enough to hold.
    """

    __slots__ = ("_frontier", "_levels")

    def __init__(self, leaf_hashes: Iterable[bytes] = ()) -> None:
        self._levels: list[list[bytes]] = []
        self._frontier = Frontier()
        self.extend(leaf_hashes)

    @classmethod
    def of_leaves(cls, leaves: Iterable[bytes]) -> MerkleTree:
        """The tree of raw leaves (each hashed with ``leaf_hash``)."""
        return cls(leaf_hash(leaf) for leaf in leaves)

    @property
    def size(self) -> int:
        """How many leaves the tree holds."""
        return self._frontier.size

    def append(self, value: bytes) -> None:
        """Add one leaf hash."""
        for node_id, hashed in self._frontier.append(value):
            if node_id.level == len(self._levels):
                self._levels.append([])
            self._levels[node_id.level].append(hashed)

    def extend(self, values: Iterable[bytes]) -> None:
        """Add leaf hashes in order."""
        for value in values:
            self.append(value)

    def node(self, node_id: NodeId) -> bytes:
        """The hash of a stored perfect subtree."""
        level = self._levels[node_id.level] if node_id.level < len(self._levels) else []
        if not 0 <= node_id.index < len(level):
            raise MerkleError(f"no complete subtree {node_id} in a tree of {self.size} leaves")
        return level[node_id.index]

    def root(self, size: int | None = None) -> bytes:
        """MTH of the first ``size`` leaves (default: all of them)."""
        size = self.size if size is None else size
        if not 0 <= size <= self.size:
            raise MerkleError(f"tree size {size} is outside 0..{self.size}")
        return subtree_hash(0, size, self.node) if size else EMPTY_ROOT

    def frontier(self) -> Frontier:
        """The right edge of the whole tree."""
        return self._frontier.copy()

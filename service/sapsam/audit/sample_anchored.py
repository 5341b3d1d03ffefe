"""Anchored exports made without a database: tables' streams interleaved into one log, the log's
Merkle tree in memory, a checkpoint signed by a given key, and exports that carry their proof.

For tests and benchmarks (``bench/verify.py``): the same ``attach_anchors`` the database export
uses, over a tree built the way the checkpointer builds it (leaf = each event's chained hash in
global order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sapsam.audit.anchoring import attach_anchors
from sapsam.audit.export_format import AuditExport, ConsistencyProof, Requester
from sapsam.audit.export_selection import select_deal
from sapsam.log.checkpoint import sapsam_checkpoint, sign_checkpoint
from sapsam.log.merkle import MerkleTree, event_leaf_hash
from sapsam.log.merkle_proofs import consistency_proof
from sapsam.log.records import RecordedEvent
from sapsam.log.signed_note import NoteSigner

SAMPLE_TIME = 1_800_000_000


@dataclass(frozen=True)
class AnchoredLog:
    """Streams as the log holds them (positions over every stream) and the log's tree."""

    streams: tuple[tuple[RecordedEvent, ...], ...]
    tree: MerkleTree
    leaf_of_position: dict[int, int]
    signer: NoteSigner

    def checkpoint_note(self, size: int | None = None) -> str:
        """The signed checkpoint of the first ``size`` leaves (default: all)."""
        size = self.tree.size if size is None else size
        checkpoint = sapsam_checkpoint(self.signer.name, size, self.tree.root(size), SAMPLE_TIME)
        return sign_checkpoint(checkpoint, self.signer)

    def anchored(
        self, export: AuditExport, size: int | None = None, known_size: int | None = None
    ) -> AuditExport:
        """``export`` with the proofs against the checkpoint of ``size`` leaves, and with
        ``known_size`` a consistency proof between that size and it."""
        size = self.tree.size if size is None else size
        consistency: list[ConsistencyProof] = []
        if known_size is not None and known_size != size:
            old, new = sorted((known_size, size))
            proof = b"".join(consistency_proof(old, new, self.tree.node))
            consistency.append(ConsistencyProof(old, new, proof))
        return attach_anchors(
            export,
            self.checkpoint_note(size),
            size,
            self.leaf_of_position,
            self.tree.node,
            consistency,
        )

    def deal_export(self, stream: int, deal_number: int, size: int | None = None) -> AuditExport:
        """Deal ``deal_number`` of the ``stream``-th table, carrying its proof."""
        events = self.streams[stream]
        return self.anchored(select_deal(events, deal_number, Requester.operator()), size)


def anchored_log(streams: Sequence[Sequence[RecordedEvent]], signer: NoteSigner) -> AnchoredLog:
    """The streams' events interleaved one by one into a log (positions 1, 2, …) and its tree."""
    placed: list[list[RecordedEvent]] = [[] for _ in streams]
    leaves: list[bytes] = []
    leaf_of_position: dict[int, int] = {}
    longest = max((len(stream) for stream in streams), default=0)
    for offset in range(longest):
        for index, stream in enumerate(streams):
            if offset < len(stream):
                position = len(leaves) + 1
                placed[index].append(replace(stream[offset], position=position))
                leaf_of_position[position] = len(leaves)
                leaves.append(event_leaf_hash(stream[offset].hash))
    return AnchoredLog(
        streams=tuple(tuple(events) for events in placed),
        tree=MerkleTree(leaves),
        leaf_of_position=leaf_of_position,
        signer=signer,
    )

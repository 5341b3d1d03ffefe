"""Giving an export its proof from the database (docs/audit.md §2.5): the latest signed
checkpoint with the witnesses' cosignatures kept for it, each event's leaf index and inclusion
proof, and on request a consistency proof from a tree size the reader holds. Waits, for a bounded
time, for a checkpoint that covers the export's last event (the tree trails the log by up to one
checkpointer interval).

``anchor_export`` reads through the command line's synchronous connection
(``sapsam.store.transparency_reads``); ``anchor_export_async`` through the server's pool
(``sapsam.store.transparency``). Both build the proof with the pure
``sapsam.audit.anchoring.attach_anchors``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import psycopg
from psycopg_pool import AsyncConnectionPool

from sapsam.app.transparency import StoredCheckpoint
from sapsam.audit.anchoring import attach_anchors, nodes_needed, unanchored_versions
from sapsam.audit.export_format import AuditExport, ConsistencyProof
from sapsam.log.cosignature import with_cosignatures
from sapsam.log.merkle import NodeId
from sapsam.log.merkle_proofs import consistency_plan
from sapsam.store import transparency as async_reads
from sapsam.store import transparency_reads as reads

ANCHOR_WAIT_SECONDS: Final = 3.0
"""How long an export waits by default for a checkpoint covering its events (the checkpointer
signs one every 2 s while events arrive)."""
POLL_SECONDS: Final = 0.2


@dataclass(frozen=True)
class ProvenExport:
    """An export with what proof could be given: ``unanchored`` are the versions of its events
    without one; ``problem`` says why there is no checkpoint at all (None when there is)."""

    export: AuditExport
    unanchored: tuple[int, ...]
    problem: str | None = None

    def notice(self) -> str | None:
        """A line for the person exporting, when not every event is anchored."""
        if self.problem is not None:
            return f"the export carries no proof: {self.problem}"
        if not self.unanchored:
            return None
        return (
            f"{len(self.unanchored)} event(s) not yet under a checkpoint (versions "
            f"{_ranges(self.unanchored)}): export again in a few seconds to anchor them"
        )


def _ranges(versions: tuple[int, ...]) -> str:
    first, last = versions[0], versions[-1]
    if last - first + 1 == len(versions):
        return str(first) if first == last else f"{first}-{last}"
    return ", ".join(map(str, versions))


def _covered(leaves: Mapping[int, int], positions: list[int], size: int) -> bool:
    return all(leaves.get(position, size) < size for position in positions)


def _proven(
    export: AuditExport,
    checkpoint: StoredCheckpoint,
    cosignatures: list[str],
    leaves: Mapping[int, int],
    nodes: Mapping[NodeId, bytes],
    consistency: tuple[ConsistencyProof, ...],
) -> ProvenExport:
    size = checkpoint.size
    note = with_cosignatures(checkpoint.note, cosignatures) if cosignatures else checkpoint.note
    below = {position: leaf for position, leaf in leaves.items() if leaf < size}
    proven = attach_anchors(export, note, size, below, nodes.__getitem__, consistency)
    return ProvenExport(proven, unanchored_versions(proven))


_NO_LOG: Final = "no checkpoint has been signed in this database (no server with a key served it)"


def anchor_export(
    connection: psycopg.Connection[Any],
    export: AuditExport,
    wait_seconds: float = ANCHOR_WAIT_SECONDS,
    known_tree_size: int | None = None,
) -> ProvenExport:
    """``export`` with its proof, read through a synchronous autocommit connection."""
    positions = [event.position for event in export.events]
    deadline = time.monotonic() + wait_seconds
    try:
        while True:
            checkpoint = reads.latest_checkpoint(connection)
            # No checkpoint yet is waited for too: a young log's first one may be seconds away.
            if checkpoint is None:
                if time.monotonic() >= deadline:
                    return ProvenExport(export, unanchored_versions(export), _NO_LOG)
            else:
                leaves = reads.leaves_of_positions(connection, positions)
                if _covered(leaves, positions, checkpoint.size) or time.monotonic() >= deadline:
                    break
            time.sleep(POLL_SECONDS)
        size = checkpoint.size
        cosignatures = reads.cosignatures(connection, size)
        nodes = reads.read_nodes(connection, nodes_needed(leaves.values(), size))
        consistency: tuple[ConsistencyProof, ...] = ()
        if known_tree_size is not None and 0 < known_tree_size < size:
            hashes = reads.proof_hashes(connection, consistency_plan(known_tree_size, size))
            consistency = (ConsistencyProof(known_tree_size, size, b"".join(hashes)),)
    except reads.TransparencyUnavailableError as error:
        return ProvenExport(export, unanchored_versions(export), f"the log is unreadable: {error}")
    return _proven(export, checkpoint, cosignatures, leaves, nodes, consistency)


async def anchor_export_async(
    pool: AsyncConnectionPool[Any],
    export: AuditExport,
    wait_seconds: float = ANCHOR_WAIT_SECONDS,
    known_tree_size: int | None = None,
) -> ProvenExport:
    """``anchor_export`` on the server's pool: one pooled connection per look, none held while
    waiting for the next checkpoint."""
    positions = [event.position for event in export.events]
    deadline = time.monotonic() + wait_seconds
    while True:
        async with pool.connection() as connection:
            checkpoint = await async_reads.latest_checkpoint(connection)
            # No checkpoint yet is waited for too: a young log's first one may be seconds away.
            if checkpoint is None:
                if time.monotonic() >= deadline:
                    return ProvenExport(export, unanchored_versions(export), _NO_LOG)
            else:
                leaves = await async_reads.leaves_of_positions(connection, positions)
                if _covered(leaves, positions, checkpoint.size) or time.monotonic() >= deadline:
                    return await _read_proof(
                        connection, export, checkpoint, leaves, known_tree_size
                    )
        await asyncio.sleep(POLL_SECONDS)


async def _read_proof(
    connection: psycopg.AsyncConnection[Any],
    export: AuditExport,
    checkpoint: StoredCheckpoint,
    leaves: Mapping[int, int],
    known_tree_size: int | None,
) -> ProvenExport:
    """The export with the proof of ``leaves`` under ``checkpoint`` (read on one connection)."""
    size = checkpoint.size
    cosignatures = await async_reads.cosignatures(connection, size)
    nodes = await async_reads.read_nodes(connection, nodes_needed(leaves.values(), size))
    consistency: tuple[ConsistencyProof, ...] = ()
    if known_tree_size is not None and 0 < known_tree_size < size:
        hashes = await async_reads.proof_hashes(connection, consistency_plan(known_tree_size, size))
        consistency = (ConsistencyProof(known_tree_size, size, b"".join(hashes)),)
    return _proven(export, checkpoint, cosignatures, leaves, nodes, consistency)

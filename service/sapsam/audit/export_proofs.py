"""Giving an export its proof from the database (docs/audit.md §2.5): the latest signed
checkpoint (or the newest a witness cosigned, when it covers every exported event) with the
witnesses' cosignatures kept for it, each event's leaf index and inclusion
proof, and on request a consistency proof from a tree size the reader holds. Waits, for a bounded
time, for a checkpoint that covers the export's last event (the tree trails the log by up to one
checkpointer interval).

``anchor_export`` reads through the command line's synchronous connection
(``sapsam.store.transparency_reads``); ``anchor_export_async`` through the server's pool
(``sapsam.store.transparency``). Both drive one plan of steps
(``anchor_plan``, as ``sapsam.store.reads.read_all_plan``) and build the proof with the pure
``sapsam.audit.anchoring.attach_anchors``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

import psycopg
from psycopg_pool import AsyncConnectionPool

from sapsam.app.transparency import StoredCheckpoint
from sapsam.audit.anchoring import (
    attach_anchors,
    nodes_needed,
    unanchored_versions,
    version_words,
)
from sapsam.audit.export_format import AuditExport, ConsistencyProof
from sapsam.log.cosignature import with_cosignatures
from sapsam.log.merkle import NodeId
from sapsam.log.merkle_proofs import consistency_plan
from sapsam.plurals import plural
from sapsam.store import transparency as async_reads
from sapsam.store import transparency_reads as reads

ANCHOR_WAIT_SECONDS: Final = 3.0
"""How long an export waits by default for a checkpoint covering its events (the checkpointer
signs one every 2 s while events arrive)."""
POLL_SECONDS: Final = 0.2


@dataclass(frozen=True)
class ProvenExport:
    """An export with what proof could be given: ``unanchored`` are the versions of its events
    without one; ``problem`` says why there is no checkpoint at all (None when there is);
    ``tree_size`` is the carried checkpoint's size (0 without one)."""

    export: AuditExport
    unanchored: tuple[int, ...]
    problem: str | None = None
    tree_size: int = 0

    def notice(self) -> str | None:
        """A line for the person exporting, when not every event is anchored."""
        if self.problem is not None:
            return f"the export carries no proof: {self.problem}"
        if not self.unanchored:
            return None
        return (
            f"{plural(len(self.unanchored), 'event')} not yet under a checkpoint"
            f" ({version_words(self.unanchored)}): export"
            " again in a few seconds to anchor them"
        )


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
    return ProvenExport(proven, unanchored_versions(proven), tree_size=size)


_NO_LOG: Final = "no checkpoint has been signed in this database (no server with a key served it)"

AnchorStep = tuple[str, Any]
"""One thing ``anchor_plan`` needs: a read by name (a function of both ``sapsam.store``
transparency modules) with its argument, or ``("sleep", seconds)``."""
AnchorPlan = Generator[AnchorStep, Any, ProvenExport]

_SLEEP: Final = "sleep"


def anchor_plan(
    export: AuditExport, wait_seconds: float, known_tree_size: int | None
) -> AnchorPlan:
    """The waiting and reading behind an export's proof, for either driver: yields the steps,
    is sent each read's result, and returns the export with its proof. The reads after the last
    look until a sleep belong on one connection."""
    positions = [event.position for event in export.events]
    deadline = time.monotonic() + wait_seconds
    while True:
        checkpoint: StoredCheckpoint | None = yield "latest_checkpoint", None
        # No checkpoint yet is waited for too: a young log's first one may be seconds away.
        if checkpoint is None:
            if time.monotonic() >= deadline:
                return ProvenExport(export, unanchored_versions(export), _NO_LOG)
        else:
            leaves: Mapping[int, int] = yield "leaves_of_positions", positions
            if _covered(leaves, positions, checkpoint.size) or time.monotonic() >= deadline:
                break
        yield _SLEEP, POLL_SECONDS
    latest = checkpoint.size
    if _covered(leaves, positions, latest) and positions:
        # A witnessed checkpoint that covers every event anchors it as well, and a reader who
        # pins the witness then needs nothing but the export (docs/audit.md §2.5).
        witnessed: StoredCheckpoint | None = yield "latest_witnessed_checkpoint", None
        if witnessed is not None and max(leaves[p] for p in positions) < witnessed.size <= latest:
            checkpoint = witnessed
    size = checkpoint.size
    cosignatures: list[str] = yield "cosignatures", size
    needed = nodes_needed(leaves.values(), size)
    nodes: Mapping[NodeId, bytes] = yield "read_nodes", needed
    missing = needed - nodes.keys()
    if missing:
        # Only a database changed outside the service gets here: say so instead of failing.
        first = min(missing)
        return ProvenExport(
            export,
            unanchored_versions(export),
            f"the log's tree lacks {plural(len(missing), 'stored subtree')} the proofs need"
            f" (first: level {first.level}, index {first.index})",
        )
    consistency: tuple[ConsistencyProof, ...] = ()
    if known_tree_size is not None and 0 < known_tree_size <= latest and known_tree_size != size:
        old, new = sorted((known_tree_size, size))
        hashes: list[bytes] = yield "proof_hashes", consistency_plan(old, new)
        consistency = (ConsistencyProof(old, new, b"".join(hashes)),)
    return _proven(export, checkpoint, cosignatures, leaves, nodes, consistency)


_SYNC_READS: Final[Mapping[str, Callable[[psycopg.Connection[Any], Any], Any]]] = {
    "latest_checkpoint": lambda connection, _: reads.latest_checkpoint(connection),
    "latest_witnessed_checkpoint": lambda connection, _: reads.latest_witnessed_checkpoint(
        connection
    ),
    "leaves_of_positions": reads.leaves_of_positions,
    "cosignatures": reads.cosignatures,
    "read_nodes": reads.read_nodes,
    "proof_hashes": reads.proof_hashes,
}
_ASYNC_READS: Final[Mapping[str, Callable[[psycopg.AsyncConnection[Any], Any], Awaitable[Any]]]] = {
    "latest_checkpoint": lambda connection, _: async_reads.latest_checkpoint(connection),
    "latest_witnessed_checkpoint": lambda connection, _: async_reads.latest_witnessed_checkpoint(
        connection
    ),
    "leaves_of_positions": async_reads.leaves_of_positions,
    "cosignatures": async_reads.cosignatures,
    "read_nodes": async_reads.read_nodes,
    "proof_hashes": async_reads.proof_hashes,
}


def anchor_export(
    connection: psycopg.Connection[Any],
    export: AuditExport,
    wait_seconds: float = ANCHOR_WAIT_SECONDS,
    known_tree_size: int | None = None,
) -> ProvenExport:
    """``export`` with its proof, read through a synchronous autocommit connection."""
    plan = anchor_plan(export, wait_seconds, known_tree_size)
    try:
        step, argument = next(plan)
        while True:
            if step == _SLEEP:
                time.sleep(argument)
                step, argument = plan.send(None)
            else:
                step, argument = plan.send(_SYNC_READS[step](connection, argument))
    except StopIteration as done:
        return cast(ProvenExport, done.value)
    except reads.TransparencyUnavailableError as error:
        return _unreadable(export, error)


def _unreadable(export: AuditExport, error: reads.TransparencyUnavailableError) -> ProvenExport:
    """``export`` without a proof, saying why: the log cannot be read here."""
    return ProvenExport(
        export, unanchored_versions(export), f"the log is unreadable: {error.message}"
    )


async def anchor_export_async(
    pool: AsyncConnectionPool[Any],
    export: AuditExport,
    wait_seconds: float = ANCHOR_WAIT_SECONDS,
    known_tree_size: int | None = None,
) -> ProvenExport:
    """``anchor_export`` on the server's pool: one pooled connection per look (the proof is read
    on the last look's), none held while waiting for the next checkpoint."""
    plan = anchor_plan(export, wait_seconds, known_tree_size)
    step, argument = next(plan)
    while True:
        async with pool.connection() as connection:
            while step != _SLEEP:
                try:
                    result = await _ASYNC_READS[step](connection, argument)
                except reads.TransparencyUnavailableError as error:
                    return _unreadable(export, error)
                try:
                    step, argument = plan.send(result)
                except StopIteration as done:
                    return cast(ProvenExport, done.value)
        await asyncio.sleep(argument)
        step, argument = plan.send(None)

"""The transparency log in PostgreSQL: extending the stored tree, and reading what proofs need.

docs/transparency.md §7. The tree grows only here, in ``extend_log``'s one transaction: it takes a
transaction-scoped advisory lock (one checkpointer at a time across processes; another process
trying at the same moment simply skips its turn), reads the events after the last leaf in global
order without ever skipping one that commits late (the proof of ``sapsam.store.reads``), inserts
the subtrees they complete, their positions and the signed checkpoint, and commits. A crash before
the commit leaves nothing; the next turn starts again from the stored tree. The append path does
nothing for the tree.

Every read here turns a missing table (migration 0008 not applied) or a role that may not read
the tree (docs/store.md) into ``TransparencyUnavailableError``, and a subtree missing from the
stored tree into ``IncompleteTreeError`` (one of them, and a ``LookupError``): the API answers
FAILED_PRECONDITION, reason ``TRANSPARENCY_UNAVAILABLE``, never INTERNAL, and an export goes
without its proof.

``checkpointer_step`` is what every server process runs each ``CHECKPOINT_SECONDS``. It keeps its
``Frontier`` between turns and rebuilds it (``popcount(size)`` look-ups in one statement) when the
stored tree is not the one it holds: at start, or after another process took a turn.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, ParamSpec, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool

from sapsam.app.store_interface import StopSignal
from sapsam.app.transparency import (
    IncompleteTreeError,
    StoredCheckpoint,
    TransparencyUnavailableError,
)
from sapsam.log.merkle import Frontier, NodeId, event_leaf_hash, perfect_subtrees
from sapsam.log.merkle_proofs import Range, plan_nodes, proof_from_plan
from sapsam.store.queries import query

AsyncConnection = psycopg.AsyncConnection[Any]
_P = ParamSpec("_P")
_R = TypeVar("_R")

MAX_LEAVES_PER_TURN: Final = 10_000
"""A turn adds at most this many leaves (bounded memory and transaction); a busier log is caught
up by the next turns, which follow at once while a turn comes back full."""

Sign = Callable[[int, bytes, int], str]
"""sign(size, root, time) -> the signed note of that checkpoint (sapsam.log.checkpoint)."""


@dataclass(frozen=True)
class TurnResult:
    """What one turn of ``extend_log`` did: ``added`` leaves (0 when there was nothing new or
    another process held the lock) and the checkpoint it issued, if any."""

    added: int
    checkpoint: StoredCheckpoint | None
    led: bool


class TreeCache:
    """The checkpointer's frontier between turns, and the position of its last leaf."""

    def __init__(self) -> None:
        self.frontier = Frontier()
        self.last_position = 0


@contextmanager
def readable() -> Iterator[None]:
    """Turn "no such table" and "permission denied" into ``TransparencyUnavailableError`` (with
    a message of our own: the database's is not sent to a client)."""
    try:
        yield
    except psycopg.errors.UndefinedTable:
        raise TransparencyUnavailableError(
            "this database holds no transparency log (migration 0008 not applied)"
        ) from None
    except psycopg.errors.InsufficientPrivilege:
        raise TransparencyUnavailableError(
            "this database role may not read the transparency log's tables (or, for a"
            " cosignature, write them: docs/store.md)"
        ) from None


def _readable(read: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
    """``read`` under ``readable()``."""

    @functools.wraps(read)
    async def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with readable():
            return await read(*args, **kwargs)

    return guarded


@_readable
async def read_nodes(connection: AsyncConnection, ids: Iterable[NodeId]) -> dict[NodeId, bytes]:
    """The stored perfect subtrees among ``ids`` (a missing one is simply absent)."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    cursor = await connection.execute(
        query("transparency.nodes"),
        {"levels": [n.level for n in wanted], "indexes": [n.index for n in wanted]},
    )
    return {NodeId(int(level), int(index)): bytes(value) async for level, index, value in cursor}


async def stored_size(connection: AsyncConnection) -> tuple[int, int]:
    """The stored tree's size and its last leaf's event position ((0, 0) for an empty tree)."""
    cursor = await connection.execute(query("transparency.last_leaf"))
    row = await cursor.fetchone()
    return (int(row[0]) + 1, int(row[1])) if row else (0, 0)


async def load_frontier(connection: AsyncConnection, size: int) -> Frontier:
    """The frontier of the stored tree of ``size`` leaves, in one statement."""
    nodes = await read_nodes(connection, perfect_subtrees(0, size) if size else ())
    return Frontier.from_nodes(size, lambda node_id: _present(nodes, node_id))


async def proof_hashes(connection: AsyncConnection, plan: Sequence[Range]) -> list[bytes]:
    """The hashes of a proof's planned subtrees (``merkle_proofs.inclusion_plan`` or
    ``consistency_plan``) from the stored perfect subtrees, in one statement: O(log n) rows.
    ``LookupError`` when the stored tree does not reach that far."""
    nodes = await read_nodes(connection, plan_nodes(plan))
    return proof_from_plan(plan, lambda node_id: _present(nodes, node_id))


def _present(nodes: Mapping[NodeId, bytes], node_id: NodeId) -> bytes:
    try:
        return nodes[node_id]
    except KeyError:
        raise IncompleteTreeError(f"the stored tree lacks subtree {node_id}") from None


async def event_hashes_after(
    connection: AsyncConnection, after_position: int, limit: int
) -> list[tuple[int, bytes]]:
    """Up to ``limit`` events' (position, chained hash) after ``after_position`` in global order,
    never skipping one that commits late: a page without a hole is returned as read, one with a
    hole is read again at or below the proven high-water mark (``sapsam.store.reads`` says why
    that is safe; only the hash is read, as the tree needs nothing else of an event)."""
    statement = query("transparency.event_hashes_after")
    cursor = await connection.execute(
        statement, {"after": after_position, "bound": 2**63 - 1, "limit": limit}
    )
    rows = await cursor.fetchall()
    if not rows or rows[-1][0] == after_position + len(rows):
        return [(int(position), bytes(value)) for position, value in rows]
    cursor = await connection.execute(query("events.safe_position"))
    bound_row = await cursor.fetchone()
    bound = int(bound_row[0]) if bound_row else 0
    if bound <= after_position:
        return []
    cursor = await connection.execute(
        statement, {"after": after_position, "bound": bound, "limit": limit}
    )
    return [(int(position), bytes(value)) for position, value in await cursor.fetchall()]


async def extend_log(
    connection: AsyncConnection,
    cache: TreeCache,
    sign: Sign,
    now: Callable[[], int],
    max_leaves: int = MAX_LEAVES_PER_TURN,
) -> TurnResult:
    """One checkpointer turn (see the module docstring). ``connection`` must be in autocommit
    mode (each statement its own snapshot, as the read's proof needs); ``cache`` is updated only
    once the turn's transaction has committed."""
    async with connection.transaction():
        cursor = await connection.execute(query("transparency.try_lock"))
        locked = await cursor.fetchone()
        if not locked or not locked[0]:
            return TurnResult(0, None, led=False)
        size, last_position = await stored_size(connection)
        if cache.frontier.size != size or cache.last_position != last_position:
            cache.frontier = await load_frontier(connection, size)
            cache.last_position = last_position
        rows = await event_hashes_after(connection, last_position, max_leaves)
        if not rows:
            return TurnResult(0, None, led=True)
        frontier = cache.frontier.copy()
        completed = frontier.extend(event_leaf_hash(value) for _, value in rows)
        root, time = frontier.root(), now()
        note = sign(frontier.size, root, time)
        await _insert(connection, completed, size, [position for position, _ in rows])
        await connection.execute(
            query("transparency.insert_checkpoint"),
            {"size": frontier.size, "root": root, "time": time, "note": note},
        )
    cache.frontier, cache.last_position = frontier, rows[-1][0]
    return TurnResult(len(rows), StoredCheckpoint(frontier.size, root, note), led=True)


async def _insert(
    connection: AsyncConnection,
    completed: Sequence[tuple[NodeId, bytes]],
    first_leaf: int,
    positions: Sequence[int],
) -> None:
    await connection.execute(
        query("transparency.insert_nodes"),
        {
            "levels": [node_id.level for node_id, _ in completed],
            "indexes": [node_id.index for node_id, _ in completed],
            "hashes": [value for _, value in completed],
        },
    )
    await connection.execute(
        query("transparency.insert_leaves"),
        {"indexes": list(range(first_leaf, first_leaf + len(positions))), "positions": positions},
    )


@_readable
async def latest_checkpoint(connection: AsyncConnection) -> StoredCheckpoint | None:
    """The last signed checkpoint, or None before the first."""
    cursor = await connection.execute(query("transparency.latest_checkpoint"))
    return _checkpoint(await cursor.fetchone())


@_readable
async def latest_witnessed_checkpoint(connection: AsyncConnection) -> StoredCheckpoint | None:
    """The newest checkpoint a witness cosigned, or None before the first cosignature."""
    cursor = await connection.execute(query("transparency.latest_witnessed_checkpoint"))
    return _checkpoint(await cursor.fetchone())


@_readable
async def checkpoint_of_size(connection: AsyncConnection, size: int) -> StoredCheckpoint | None:
    """The signed checkpoint of a tree of ``size`` leaves, if one was issued."""
    cursor = await connection.execute(query("transparency.checkpoint_of_size"), {"size": size})
    return _checkpoint(await cursor.fetchone())


def _checkpoint(row: Sequence[Any] | None) -> StoredCheckpoint | None:
    return StoredCheckpoint(int(row[0]), bytes(row[1]), str(row[2])) if row else None


@_readable
async def leaf_of_position(connection: AsyncConnection, position: int) -> int | None:
    """The leaf index of the event at ``position``, or None while it is not in the tree."""
    cursor = await connection.execute(
        query("transparency.leaf_of_position"), {"position": position}
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else None


@_readable
async def position_of_leaf(connection: AsyncConnection, leaf_index: int) -> int | None:
    """The event position of leaf ``leaf_index``, or None past the stored tree."""
    cursor = await connection.execute(query("transparency.position_of_leaf"), {"leaf": leaf_index})
    row = await cursor.fetchone()
    return int(row[0]) if row else None


@_readable
async def leaves(connection: AsyncConnection, start: int, end: int) -> list[tuple[int, bytes]]:
    """(position, chained hash) of leaves ``start .. end - 1`` that the tree and the log hold."""
    cursor = await connection.execute(query("transparency.leaves"), {"start": start, "end": end})
    return [(int(position), bytes(value)) async for _, position, value in cursor]


@_readable
async def cosignatures(connection: AsyncConnection, size: int) -> list[str]:
    """The witnesses' cosignature lines kept for the checkpoint of ``size`` leaves."""
    cursor = await connection.execute(query("transparency.cosignatures"), {"size": size})
    return [str(line) async for (line,) in cursor]


@_readable
async def add_cosignature(
    connection: AsyncConnection, size: int, witness_key: str, line: str, time: int, most: int
) -> bool | None:
    """Keep one witness's cosignature of the checkpoint of ``size`` leaves, in one transaction
    holding that checkpoint's lock: False when this witness already has one (the first stays),
    None when the checkpoint already has ``most``, True once kept."""
    async with connection.transaction():
        await connection.execute(query("transparency.cosignature_lock"), {"size": size})
        cursor = await connection.execute(
            query("transparency.cosignature_count"), {"size": size, "witness_key": witness_key}
        )
        row = await cursor.fetchone()
        total, mine = (int(row[0]), int(row[1])) if row else (0, 0)
        if mine:
            return False
        if total >= most:
            return None
        await connection.execute(
            query("transparency.insert_cosignature"),
            {"size": size, "witness_key": witness_key, "line": line, "cosigned_at": time},
        )
    return True


@_readable
async def leaves_of_positions(
    connection: AsyncConnection, positions: Sequence[int]
) -> dict[int, int]:
    """The leaf index of each event position already in the tree."""
    cursor = await connection.execute(
        query("transparency.leaves_of_positions"), {"positions": list(positions)}
    )
    return {int(position): int(leaf) async for position, leaf in cursor}


class PooledTransparencyReads:
    """``sapsam.app.transparency.TransparencyReads`` on a pool: one statement per question, and
    the one write a question may make, a witness's cosignature (one short transaction)."""

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self._pool = pool

    async def latest_checkpoint(self) -> StoredCheckpoint | None:
        async with self._pool.connection() as connection:
            return await latest_checkpoint(connection)

    async def checkpoint_of_size(self, size: int) -> StoredCheckpoint | None:
        async with self._pool.connection() as connection:
            return await checkpoint_of_size(connection, size)

    async def leaf_of_position(self, position: int) -> int | None:
        async with self._pool.connection() as connection:
            return await leaf_of_position(connection, position)

    async def position_of_leaf(self, leaf_index: int) -> int | None:
        async with self._pool.connection() as connection:
            return await position_of_leaf(connection, leaf_index)

    async def proof_hashes(self, plan: Sequence[Range]) -> list[bytes]:
        async with self._pool.connection() as connection:
            return await proof_hashes(connection, plan)

    async def leaves(self, start: int, end: int) -> list[tuple[int, bytes]]:
        async with self._pool.connection() as connection:
            return await leaves(connection, start, end)

    async def cosignatures(self, size: int) -> list[str]:
        async with self._pool.connection() as connection:
            return await cosignatures(connection, size)

    async def add_cosignature(
        self, size: int, witness_key: str, line: str, time: int, most: int
    ) -> bool | None:
        async with self._pool.connection() as connection:
            return await add_cosignature(connection, size, witness_key, line, time, most)


CHECKPOINT_SECONDS: Final = 2.0
"""A checkpointer turn this often (``sapsam.cli.bootstrap`` runs it in a ``BackgroundLoop``);
a turn that comes back full is followed at once by the next."""


def checkpointer_step(
    pool: AsyncConnectionPool[Any],
    sign: Sign,
    now: Callable[[], int] = lambda: int(time.time()),
    max_leaves: int = MAX_LEAVES_PER_TURN,
) -> Callable[[StopSignal], Awaitable[None]]:
    """A ``BackgroundLoop`` step: turns on one pooled connection until the log is caught up (or
    ``stop``). Every server process runs one; the lock makes them take turns, so the tree grows
    in one order whichever process survives."""
    cache = TreeCache()

    async def step(stop: StopSignal) -> None:
        async with pool.connection() as connection:
            while (await extend_log(connection, cache, sign, now, max_leaves)).added == max_leaves:
                if stop.is_set():
                    return

    return step

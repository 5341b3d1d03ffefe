"""The transparency log's store (docs/transparency.md §7) on a real PostgreSQL: the checkpointer
extends the stored tree exactly as the pure ``MerkleTree`` would, across restarts and late
commits; the stored subtrees give valid proofs; the tables refuse rewrites; a deleted last deal is
caught by a monitor holding an earlier checkpoint.

Events are inserted by plain SQL: the tree needs only their positions and chained hashes."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from sapsam.app.transparency import checkpoint_signer
from sapsam.keys import ServerKeys
from sapsam.log.checkpoint import Checkpoint, CheckpointError, check_extends, open_checkpoint
from sapsam.log.merkle import MerkleTree, event_leaf_hash
from sapsam.log.merkle_proofs import (
    ProofError,
    consistency_plan,
    inclusion_plan,
    verify_consistency,
    verify_inclusion,
)
from sapsam.log.signed_note import NoteSigner
from sapsam.store import transparency
from sapsam.store.background import BackgroundLoop
from sapsam.store.transparency import TreeCache, extend_log

pytestmark = pytest.mark.asyncio

KEYS = ServerKeys(NoteSigner.from_seed("sapsam/test", bytes(32)), (), "test")
SIGN = checkpoint_signer(KEYS)
INSERT_EVENT = (
    "INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)"
    " VALUES (%s, %s, 'Test', 1, '{}', '{}', %s)"
)

Connection = psycopg.AsyncConnection[Any]


@asynccontextmanager
async def connect(url: str) -> AsyncIterator[Connection]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        yield connection


def chained(stream: str, version: int) -> bytes:
    return hashlib.sha256(f"{stream}/{version}".encode()).digest()


async def insert_events(connection: Connection, stream: str, first: int, count: int) -> None:
    for version in range(first, first + count):
        await connection.execute(INSERT_EVENT, (stream, version, chained(stream, version)))


async def all_hashes(connection: Connection) -> list[bytes]:
    cursor = await connection.execute("SELECT hash FROM events ORDER BY position")
    return [bytes(row[0]) for row in await cursor.fetchall()]


def clock() -> int:
    return 1_800_000_000


async def test_turns_grow_the_tree_as_the_pure_tree_across_restarts(database_url: str) -> None:
    async with connect(database_url) as connection:
        cache = TreeCache()
        assert (await extend_log(connection, cache, SIGN, clock)).added == 0
        assert await transparency.latest_checkpoint(connection) is None
        issued: list[Checkpoint] = []
        for batch, count in enumerate((1, 2, 5, 8, 13, 3)):
            await insert_events(connection, f"s{batch % 2}", batch * 100 + 1, count)
            if batch == 3:
                cache = TreeCache()  # a restart: the frontier is read back from stored nodes
            turn = await extend_log(connection, cache, SIGN, clock, max_leaves=10)
            while turn.added == 10:
                turn = await extend_log(connection, cache, SIGN, clock, max_leaves=10)
            stored = await transparency.latest_checkpoint(connection)
            assert stored is not None
            opened = open_checkpoint(stored.note, KEYS.verifier_keys(), KEYS.origin)
            expected = MerkleTree(map(event_leaf_hash, await all_hashes(connection)))
            assert (opened.checkpoint.size, opened.checkpoint.root) == (
                expected.size,
                expected.root(),
            )
            assert (stored.size, stored.root) == (expected.size, expected.root())
            assert opened.checkpoint.time == clock()
            issued.append(opened.checkpoint)
        # Every earlier checkpoint is consistent with every later one, proven from stored nodes.
        for older in issued:
            for newer in issued:
                if older.size <= newer.size:
                    plan = consistency_plan(older.size, newer.size)
                    proof = await transparency.proof_hashes(connection, plan)
                    check_extends(older, newer, proof)
        # ... and every leaf is in the last tree, found by its event's position.
        last = issued[-1]
        cursor = await connection.execute("SELECT position, hash FROM events ORDER BY position")
        for position, value in await cursor.fetchall():
            index = await transparency.leaf_of_position(connection, position)
            assert index is not None
            assert await transparency.position_of_leaf(connection, index) == position
            proof = await transparency.proof_hashes(connection, inclusion_plan(index, last.size))
            verify_inclusion(index, last.size, event_leaf_hash(bytes(value)), proof, last.root)
        assert await transparency.leaf_of_position(connection, 10**9) is None
        assert await transparency.checkpoint_of_size(connection, issued[0].size) is not None
        assert await transparency.checkpoint_of_size(connection, issued[0].size + 1) is None
        with pytest.raises(LookupError):  # past the stored tree: refused, not made up
            await transparency.proof_hashes(connection, inclusion_plan(0, last.size + 5))


async def test_an_append_in_flight_below_a_committed_one_is_waited_for_not_skipped(
    database_url: str,
) -> None:
    async with (
        connect(database_url) as checkpointer,
        connect(database_url) as slow,
        connect(database_url) as fast,
    ):
        await insert_events(fast, "early", 1, 2)
        cache = TreeCache()
        await extend_log(checkpointer, cache, SIGN, clock)
        async with slow.transaction():
            await insert_events(slow, "slow", 1, 1)  # draws the lower position, commits late
            await insert_events(fast, "fast", 1, 1)
            turn = asyncio.create_task(extend_log(checkpointer, cache, SIGN, clock))
            await asyncio.sleep(0.3)
            assert not turn.done(), "the turn must wait for the append in flight"
        result = await turn
        assert result.added == 2
        expected = MerkleTree(map(event_leaf_hash, await all_hashes(checkpointer)))
        assert result.checkpoint is not None
        assert (result.checkpoint.size, result.checkpoint.root) == (4, expected.root())


async def test_a_rolled_back_append_leaves_a_gap_the_tree_steps_over(database_url: str) -> None:
    async with connect(database_url) as connection:
        await insert_events(connection, "a", 1, 1)
        async with connection.transaction(force_rollback=True):
            await insert_events(connection, "lost", 1, 3)
        await insert_events(connection, "a", 2, 1)
        turn = await extend_log(connection, TreeCache(), SIGN, clock)
        assert turn.added == 2
        assert turn.checkpoint is not None
        assert (
            turn.checkpoint.root
            == MerkleTree(map(event_leaf_hash, await all_hashes(connection))).root()
        )


async def test_one_checkpointer_at_a_time(database_url: str) -> None:
    async with connect(database_url) as holder, connect(database_url) as other:
        await insert_events(holder, "a", 1, 3)
        async with holder.transaction():
            await holder.execute("SELECT pg_advisory_xact_lock(7526466447829417326)")
            turn = await extend_log(other, TreeCache(), SIGN, clock)
            assert (turn.added, turn.led) == (0, False)
        turn = await extend_log(other, TreeCache(), SIGN, clock)
        assert (turn.added, turn.led) == (3, True)


@pytest.mark.parametrize("table", ["merkle_nodes", "merkle_leaves", "log_checkpoints"])
@pytest.mark.parametrize("statement", ["UPDATE {} SET {} = {}", "DELETE FROM {}", "TRUNCATE {}"])
async def test_the_tree_tables_refuse_every_rewrite(
    database_url: str, table: str, statement: str
) -> None:
    column = {"merkle_nodes": "level", "merkle_leaves": "position", "log_checkpoints": "size"}
    async with connect(database_url) as connection:
        await insert_events(connection, "a", 1, 3)
        await extend_log(connection, TreeCache(), SIGN, clock)
        with pytest.raises(psycopg.errors.RestrictViolation, match="append-only"):
            await connection.execute(statement.format(table, column[table], column[table]))
        cursor = await connection.execute(f"SELECT count(*) FROM {table}")
        assert (await cursor.fetchone()) != (0,)


async def test_a_deleted_last_deal_is_caught_against_an_earlier_checkpoint(
    database_url: str,
) -> None:
    """The owner deletes a table's last deal (triggers disabled), rebuilds the tree from what is
    left, lets play go on and signs new checkpoints with the server's own key: every chain still
    verifies, but a monitor holding a checkpoint from before the deletion refuses the new ones."""
    async with connect(database_url) as connection:
        await insert_events(connection, "table-1", 1, 12)  # deals 1..3, four events each
        await extend_log(connection, TreeCache(), SIGN, clock)
        before = await transparency.latest_checkpoint(connection)
        assert before is not None
        monitor_holds = Checkpoint.parse(
            open_checkpoint(before.note, KEYS.verifier_keys(), KEYS.origin).note.text
        )
        tables = ("events", "merkle_nodes", "merkle_leaves", "log_checkpoints")
        for table in tables:
            await connection.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        await connection.execute("DELETE FROM events WHERE stream_id = 'table-1' AND version > 8")
        for table in tables[1:]:
            await connection.execute(f"DELETE FROM {table}")
        for table in tables:
            await connection.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
        await extend_log(connection, TreeCache(), SIGN, clock)
        truncated = await transparency.latest_checkpoint(connection)
        assert truncated is not None and truncated.size == 8
        with pytest.raises(CheckpointError, match="truncated"):
            check_extends(monitor_holds, _parsed(truncated.note), [])
        # Play goes on past the old size: now the sizes grow, but no proof links the trees.
        await insert_events(connection, "table-2", 1, 10)
        await extend_log(connection, TreeCache(), SIGN, clock)
        later = await transparency.latest_checkpoint(connection)
        assert later is not None and later.size > monitor_holds.size
        proof = await transparency.proof_hashes(
            connection, consistency_plan(monitor_holds.size, later.size)
        )
        with pytest.raises(ProofError):
            check_extends(monitor_holds, _parsed(later.note), proof)
        with pytest.raises(ProofError):
            verify_consistency(
                monitor_holds.size, later.size, monitor_holds.root, later.root, proof
            )


def _parsed(note: str) -> Checkpoint:
    return open_checkpoint(note, KEYS.verifier_keys(), KEYS.origin).checkpoint


async def test_the_checkpointer_loop_follows_the_log_until_stopped(database_url: str) -> None:
    pool = AsyncConnectionPool(database_url, min_size=1, max_size=2, open=False,
                               kwargs={"autocommit": True})  # fmt: skip
    await pool.open()
    loop = BackgroundLoop(
        "test-checkpointer",
        transparency.checkpointer_step(pool, SIGN, clock, max_leaves=7),
        0.05,
        logging.getLogger("test"),
    )
    loop.start()
    try:
        async with connect(database_url) as connection:
            await insert_events(connection, "a", 1, 30)
            for _ in range(200):
                stored = await transparency.latest_checkpoint(connection)
                if stored is not None and stored.size == 30:
                    break
                await asyncio.sleep(0.05)
            expected = MerkleTree(map(event_leaf_hash, await all_hashes(connection)))
            assert stored is not None and (stored.size, stored.root) == (30, expected.root())
        assert loop.failures == 0
    finally:
        await loop.stop()
        await pool.close()

"""A transparency log the server cannot read is answered FAILED_PRECONDITION, reason
``TRANSPARENCY_UNAVAILABLE``, with ErrorInfo, never INTERNAL (docs/api.md):

* a server whose role may not read the tree's tables (every TransparencyService question);
* a stored tree that lost a subtree or a leaf (changed by its owner outside the service): the
  proofs that need it; ExportDeal then exports without its proof, saying why;
* the store's reads themselves on a database with no transparency log (migration 0008 not
  applied), and the command line's export, which then goes without its proof.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc
import psycopg
import pytest
from api_client import bearer, error_reason
from database_roles import new_role
from psycopg import sql
from scenarios import World
from serving import serving
from test_transparency_api import checkpoint_covering

from sapsam.app.transparency import IncompleteTreeError, TransparencyUnavailableError
from sapsam.log.merkle_proofs import inclusion_plan
from sapsam.store import schema, transparency, transparency_reads
from sapsam.store.schema import grant_service_role
from sapsam_proto.v1 import audit_service_pb2 as audit_messages
from sapsam_proto.v1 import transparency_service_pb2 as messages
from sapsam_proto.v1 import transparency_service_pb2_grpc

Stub = transparency_service_pb2_grpc.TransparencyServiceStub
TREE_TABLES = ("merkle_leaves", "merkle_nodes", "log_checkpoints", "checkpoint_cosignatures")
TREE_LOCK = "SELECT pg_advisory_xact_lock(7526466447829417326)"  # the checkpointer's


def _unavailable(call: Callable[[], object]) -> str:
    with pytest.raises(grpc.RpcError) as refused:
        call()
    code, reason, _, _ = error_reason(refused.value)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TRANSPARENCY_UNAVAILABLE")
    return str(refused.value.details())


def _service_role_without_the_tree(connection: psycopg.Connection[object], role: str) -> None:
    grant_service_role(connection, role)
    connection.execute(
        sql.SQL("REVOKE ALL ON {} FROM {}").format(
            sql.SQL(", ").join(sql.Identifier(table) for table in TREE_TABLES),
            sql.Identifier(role),
        )
    )


@pytest.fixture
def world(database_url: str) -> Iterator[World]:
    """A server of this test alone (its tree gets damaged)."""
    with (
        serving(database_url) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        yield World(channel, database_url)


def test_a_server_whose_role_may_not_read_the_tree_says_so(database_url: str) -> None:
    with (
        new_role(database_url, _service_role_without_the_tree) as (_, service_url),
        serving(service_url) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        stub = Stub(channel)
        questions: list[Callable[[], object]] = [
            lambda: stub.GetCheckpoint(messages.GetCheckpointRequest()),
            lambda: stub.GetInclusionProof(messages.GetInclusionProofRequest(leaf_index=0)),
            lambda: stub.GetConsistencyProof(messages.GetConsistencyProofRequest(old_size=1)),
            lambda: stub.GetLeaves(messages.GetLeavesRequest(start_index=0)),
        ]
        for question in questions:
            assert "may not read the transparency log" in _unavailable(question)
        # The key needs no table: still served.
        assert stub.GetServerKey(messages.GetServerKeyRequest()).verifier_key


def _damage(world: World, statements: list[tuple[str, list[object]]]) -> None:
    """As the database's owner, with the guards off and the checkpointer held off."""
    with psycopg.connect(world.database_url) as connection, connection.transaction():
        connection.execute(TREE_LOCK)
        for table in ("merkle_nodes", "merkle_leaves"):
            connection.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER".encode())
        for statement, parameters in statements:
            connection.execute(statement.encode(), parameters)
        for table in ("merkle_nodes", "merkle_leaves"):
            connection.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER".encode())


def test_a_tree_missing_a_subtree_or_a_leaf_is_a_clear_refusal(world: World) -> None:
    world.played(world.seated())
    stub = Stub(world.api.channel)
    size = checkpoint_covering(stub, world, world.event_count()).tree_size
    assert size >= 8
    # Leaf 0's sibling (a level-0 node, not on the frontier the checkpointer holds) and leaf 2.
    _damage(
        world,
        [
            ("DELETE FROM merkle_nodes WHERE level = 0 AND index = 1", []),
            ("DELETE FROM merkle_leaves WHERE leaf_index = 2", []),
        ],
    )
    inclusion = messages.GetInclusionProofRequest(leaf_index=0, tree_size=size)
    details = _unavailable(lambda: stub.GetInclusionProof(inclusion))
    assert "lacks subtree" in details
    consistency = messages.GetConsistencyProofRequest(old_size=1, new_size=size)
    assert "lacks subtree" in _unavailable(lambda: stub.GetConsistencyProof(consistency))
    by_index = messages.GetInclusionProofRequest(leaf_index=2, tree_size=size)
    assert "lacks leaf 2" in _unavailable(lambda: stub.GetInclusionProof(by_index))
    # What is whole still answers.
    assert stub.GetInclusionProof(
        messages.GetInclusionProofRequest(leaf_index=5, tree_size=size)
    ).hashes


async def test_the_stores_reads_on_a_database_without_a_transparency_log(
    empty_database_url: str,
) -> None:
    schema.upgrade(empty_database_url, "0007")  # before the tree's tables
    async with await psycopg.AsyncConnection.connect(
        empty_database_url, autocommit=True
    ) as connection:
        with pytest.raises(TransparencyUnavailableError, match="no transparency log"):
            await transparency.latest_checkpoint(connection)
        with pytest.raises(TransparencyUnavailableError):
            await transparency.proof_hashes(connection, inclusion_plan(0, 4))
        with pytest.raises(TransparencyUnavailableError):
            await transparency.leaves_of_positions(connection, [1])
    with (
        psycopg.connect(empty_database_url, autocommit=True) as sync_connection,
        pytest.raises(TransparencyUnavailableError),
    ):
        transparency_reads.latest_checkpoint(sync_connection)


async def test_a_proof_past_the_stored_tree_is_an_incomplete_tree(database_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as connection:
        with pytest.raises(IncompleteTreeError, match="lacks subtree"):
            await transparency.proof_hashes(connection, inclusion_plan(0, 4))
    with (
        psycopg.connect(database_url, autocommit=True) as sync_connection,
        pytest.raises(IncompleteTreeError, match="lacks subtree"),
    ):
        transparency_reads.proof_hashes(sync_connection, inclusion_plan(0, 4))


def test_an_export_over_a_tree_missing_subtrees_goes_without_its_proof(world: World) -> None:
    seated = world.seated()
    deal = world.played(seated)
    stub = Stub(world.api.channel)
    size = checkpoint_covering(stub, world, world.event_count()).tree_size
    # Every level-1 subtree: each leaf's proof in a tree of 8 or more needs one.
    _damage(world, [("DELETE FROM merkle_nodes WHERE level = 1", [])])
    exported = world.audit.ExportDeal(
        audit_messages.ExportDealRequest(name=deal), metadata=bearer(seated.players[0].token)
    )
    assert exported.event_count > 0
    assert exported.checkpoint_tree_size == 0
    assert len(exported.unanchored_versions) == exported.event_count
    assert size >= 8

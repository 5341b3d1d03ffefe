"""TransparencyService on a real server (one per module): the key, signed checkpoints that
verify against it, inclusion proofs of a played deal's events, consistency between checkpoints,
and every bad question refused with its documented reason, writing nothing."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import grpc
import psycopg
import pytest
from api_client import error_reason
from scenarios import World

from sapsam.log.checkpoint import Checkpoint, check_extends, open_checkpoint
from sapsam.log.merkle import event_leaf_hash
from sapsam.log.merkle_proofs import verify_inclusion
from sapsam.log.signed_note import VerifierKey
from sapsam_proto.v1 import transparency_service_pb2 as messages
from sapsam_proto.v1 import transparency_service_pb2_grpc

Stub = transparency_service_pb2_grpc.TransparencyServiceStub


@pytest.fixture(scope="module")
def stub(world: World) -> Stub:
    return Stub(world.api.channel)


def pinned(stub: Stub) -> tuple[str, list[VerifierKey]]:
    key = stub.GetServerKey(messages.GetServerKeyRequest())
    keys = [VerifierKey.parse(key.verifier_key)]
    keys += [VerifierKey.parse(text) for text in key.retired_verifier_keys]
    return key.origin, keys


def checkpoint_covering(stub: Stub, world: World, size: int) -> messages.GetCheckpointResponse:
    """The latest checkpoint once it covers ``size`` events (the checkpointer runs apart)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            found = stub.GetCheckpoint(messages.GetCheckpointRequest())
            if found.tree_size >= size:
                return found
        except grpc.RpcError as error:
            assert error_reason(error)[1] == "CHECKPOINT_NOT_FOUND"
        assert time.monotonic() < deadline, f"no checkpoint of {size} events in 20 s"
        time.sleep(0.1)


def table_events(world: World, table_id: Any) -> list[tuple[int, bytes]]:
    with psycopg.connect(world.database_url) as connection:
        rows = connection.execute(
            "SELECT position, hash FROM events WHERE stream_id = %s ORDER BY position",
            [f"table-{table_id}"],
        ).fetchall()
    return [(int(position), bytes(value)) for position, value in rows]


def test_a_played_deal_is_in_a_signed_checkpoint_and_the_log_only_grows(
    world: World, stub: Stub
) -> None:
    origin, keys = pinned(stub)
    assert origin.startswith("sapsam/")
    seated = world.seated()
    world.played(seated)
    events = table_events(world, seated.table_id)
    first = checkpoint_covering(stub, world, world.event_count())
    opened = open_checkpoint(first.signed_note, keys, origin).checkpoint
    assert (opened.size, opened.root) == (first.tree_size, first.root_hash)
    for position, chained in events:
        proof = stub.GetInclusionProof(messages.GetInclusionProofRequest(position=position))
        assert (proof.position, proof.tree_size) == (position, opened.size)
        assert len(proof.hashes) <= 64
        verify_inclusion(
            proof.leaf_index, opened.size, event_leaf_hash(chained), list(proof.hashes), opened.root
        )
        by_index = stub.GetInclusionProof(
            messages.GetInclusionProofRequest(leaf_index=proof.leaf_index, tree_size=opened.size)
        )
        assert (by_index.position, list(by_index.hashes)) == (position, list(proof.hashes))
    # More play, a later checkpoint: consistent with the first.
    world.played(world.seated())
    second = checkpoint_covering(stub, world, world.event_count())
    later = open_checkpoint(second.signed_note, keys, origin).checkpoint
    consistency = stub.GetConsistencyProof(
        messages.GetConsistencyProofRequest(old_size=opened.size, new_size=later.size)
    )
    check_extends(opened, later, list(consistency.hashes))
    assert stub.GetCheckpoint(messages.GetCheckpointRequest(tree_size=opened.size)) == first
    latest = stub.GetConsistencyProof(messages.GetConsistencyProofRequest(old_size=opened.size))
    assert latest.new_size >= later.size


def _bad(stub: Stub, world: World) -> list[tuple[str, Callable[[], object], grpc.StatusCode, str]]:
    # Every event checkpointed, and nothing appended meanwhile: the latest size stays put.
    latest = checkpoint_covering(stub, world, world.event_count()).tree_size
    above = latest + 1_000_000
    inclusion, consistency = stub.GetInclusionProof, stub.GetConsistencyProof
    include, consist = messages.GetInclusionProofRequest, messages.GetConsistencyProofRequest
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    return [
        ("tree_size", lambda: inclusion(include(leaf_index=0, tree_size=-1)), invalid,
         "BAD_TREE_SIZE"),
        ("old_size", lambda: consistency(consist(old_size=0, new_size=latest)), invalid,
         "BAD_TREE_SIZE"),
        ("old_size", lambda: consistency(consist(old_size=latest, new_size=1)), invalid,
         "BAD_TREE_SIZE") if latest > 1 else
        ("old_size", lambda: consistency(consist(old_size=-5)), invalid, "BAD_TREE_SIZE"),
        ("new_size", lambda: consistency(consist(old_size=1, new_size=-1)), invalid,
         "BAD_TREE_SIZE"),
        ("leaf_index", lambda: inclusion(include(leaf_index=-1)), invalid, "BAD_LEAF_INDEX"),
        ("leaf_index", lambda: inclusion(include(leaf_index=latest)), invalid, "BAD_LEAF_INDEX"),
        ("leaf_index", lambda: inclusion(include(leaf_index=1, tree_size=1)), invalid,
         "BAD_LEAF_INDEX"),
        ("leaf", lambda: inclusion(include()), invalid, "MISSING_FIELD"),
        ("position", lambda: inclusion(include(position=0)), invalid, "INVALID_ARGUMENT"),
        ("position", lambda: inclusion(include(position=2**62)), grpc.StatusCode.NOT_FOUND,
         "LEAF_NOT_FOUND"),
        ("tree_size", lambda: inclusion(include(leaf_index=0, tree_size=above)),
         grpc.StatusCode.FAILED_PRECONDITION, "TREE_SIZE_NOT_CHECKPOINTED"),
        ("new_size", lambda: consistency(consist(old_size=1, new_size=above)),
         grpc.StatusCode.FAILED_PRECONDITION, "TREE_SIZE_NOT_CHECKPOINTED"),
        ("tree_size", lambda: stub.GetCheckpoint(messages.GetCheckpointRequest(tree_size=above)),
         grpc.StatusCode.FAILED_PRECONDITION, "TREE_SIZE_NOT_CHECKPOINTED"),
        ("tree_size", lambda: stub.GetCheckpoint(messages.GetCheckpointRequest(tree_size=-1)),
         invalid, "BAD_TREE_SIZE"),
    ]  # fmt: skip


def test_every_bad_question_is_refused_with_its_reason_and_writes_nothing(
    world: World, stub: Stub
) -> None:
    world.played(world.seated())
    cases = _bad(stub, world)
    events = world.event_count()
    for field, call, code, reason in cases:
        with pytest.raises(grpc.RpcError) as refused:
            call()
        got_code, got_reason, _, bad_request = error_reason(refused.value)
        assert (got_code, got_reason) == (code, reason), field
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            assert [v.field for v in bad_request.field_violations] == [field]
    assert world.event_count() == events


def test_a_size_with_no_checkpoint_of_its_own_is_not_found(world: World, stub: Stub) -> None:
    world.played(world.seated())
    latest = checkpoint_covering(stub, world, world.event_count())
    with psycopg.connect(world.database_url) as connection:
        issued = {int(row[0]) for row in connection.execute("SELECT size FROM log_checkpoints")}
    missing = next(size for size in range(1, latest.tree_size) if size not in issued)
    with pytest.raises(grpc.RpcError) as refused:
        stub.GetCheckpoint(messages.GetCheckpointRequest(tree_size=missing))
    assert error_reason(refused.value)[:2] == (grpc.StatusCode.NOT_FOUND, "CHECKPOINT_NOT_FOUND")


def test_checkpoints_are_the_c2sp_form(world: World, stub: Stub) -> None:
    world.played(world.seated())
    found = checkpoint_covering(stub, world, 1)
    text = found.signed_note.split("\n\n", 1)[0] + "\n"
    parsed = Checkpoint.parse(text)
    assert parsed.time is not None and abs(parsed.time - time.time()) < 600

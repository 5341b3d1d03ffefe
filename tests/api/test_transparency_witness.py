"""Witness cosignatures and leaf listings on a real server whose operator lists witnesses: a
cosignature is kept, returned by GetCheckpoint after the server's signature and verifies with the
witness's key; a later one by the same witness is not kept; every bad one is refused with its
documented reason and nothing is written; at most 16 per checkpoint; the table is append-only;
GetLeaves lists each event's position and chained hash in tree order, within its bounds."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import grpc
import psycopg
import pytest
from api_client import error_reason
from scenarios import World
from serving import TEST_SERVER_KEYS, serving
from test_transparency_api import checkpoint_covering

from sapsam.cli.bootstrap import build_services
from sapsam.log.checkpoint import open_checkpoint
from sapsam.log.cosignature import cosign
from sapsam.log.merkle import event_leaf_hash
from sapsam.log.merkle_proofs import verify_inclusion
from sapsam.log.signed_note import COSIGNATURE_V1, NoteSigner
from sapsam_proto.v1 import transparency_service_pb2 as messages
from sapsam_proto.v1 import transparency_service_pb2_grpc

Stub = transparency_service_pb2_grpc.TransparencyServiceStub
WITNESSES = [
    NoteSigner.from_seed(f"witness.test/w{i}", bytes([i + 1]) * 32, COSIGNATURE_V1)
    for i in range(17)
]
UNLISTED = NoteSigner.from_seed("witness.test/unlisted", bytes([99]) * 32, COSIGNATURE_V1)
KEYS = TEST_SERVER_KEYS.verifier_keys()
ORIGIN = TEST_SERVER_KEYS.origin


@pytest.fixture(scope="module")
def world(module_database_url: str) -> Iterator[World]:
    """A server whose operator accepts the 17 test witnesses."""
    keys = dataclasses.replace(
        TEST_SERVER_KEYS, witnesses=tuple(witness.verifier for witness in WITNESSES)
    )
    services = build_services(
        module_database_url, pool_size=4, server_keys=keys, checkpoint_seconds=0.2
    )
    with (
        serving(module_database_url, services=services) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        yield World(channel, module_database_url)


@pytest.fixture(scope="module")
def stub(world: World) -> Stub:
    return Stub(world.api.channel)


def _kept(world: World) -> int:
    with psycopg.connect(world.database_url) as connection:
        row = connection.execute("SELECT count(*) FROM checkpoint_cosignatures").fetchone()
    assert row is not None
    return int(row[0])


def _add(stub: Stub, size: int, witness: NoteSigner, line: str) -> Callable[[], object]:
    request = messages.AddCheckpointCosignatureRequest(
        tree_size=size, witness_key=witness.verifier.vkey(), cosignature=line
    )
    return lambda: stub.AddCheckpointCosignature(request)


def test_a_cosignature_is_kept_returned_and_verifies_and_the_first_stays(
    world: World, stub: Stub
) -> None:
    world.played(world.seated())
    found = checkpoint_covering(stub, world, world.event_count())
    witness = WITNESSES[0]
    line = cosign(found.signed_note, witness, 1_767_225_660).line()[:-1]
    answer = _add(stub, found.tree_size, witness, line)()
    assert answer.added
    assert answer.signed_note == found.signed_note + line + "\n"
    again = stub.GetCheckpoint(messages.GetCheckpointRequest(tree_size=found.tree_size))
    assert again.signed_note == answer.signed_note
    opened = open_checkpoint(again.signed_note, [*KEYS, witness.verifier], ORIGIN)
    assert [entry.timestamp for entry in opened.note.verified] == [None, 1_767_225_660]
    # A reader who pins only the server's key still reads it.
    assert open_checkpoint(again.signed_note, KEYS, ORIGIN).checkpoint == opened.checkpoint
    # A second cosignature by the same witness (a retry, a later time): the first stays.
    later = cosign(found.signed_note, witness, 1_767_225_999).line()[:-1]
    repeated = _add(stub, found.tree_size, witness, later)()
    assert not repeated.added and repeated.signed_note == answer.signed_note
    # A second witness's comes after the first.
    second = cosign(found.signed_note, WITNESSES[1], 1_767_225_700).line()[:-1]
    both = _add(stub, found.tree_size, WITNESSES[1], second)()
    assert both.signed_note == answer.signed_note + second + "\n"


def test_bad_cosignatures_are_refused_with_their_reason_and_nothing_is_kept(
    world: World, stub: Stub
) -> None:
    world.played(world.seated())
    found = checkpoint_covering(stub, world, world.event_count())
    size, note = found.tree_size, found.signed_note
    witness = WITNESSES[2]
    good = cosign(note, witness, 5).line()[:-1]
    with psycopg.connect(world.database_url) as connection:
        rows = connection.execute("SELECT size FROM log_checkpoints").fetchall()
    sizes = sorted(int(row[0]) for row in rows)
    other_size = next(s for s in sizes if s != size)
    other_note = stub.GetCheckpoint(messages.GetCheckpointRequest(tree_size=other_size))
    unissued = next(s for s in range(1, size) if s not in sizes)
    invalid = grpc.StatusCode.INVALID_ARGUMENT

    def raw(key: str, line: str, tree_size: int = size) -> Callable[[], object]:
        request = messages.AddCheckpointCosignatureRequest(
            tree_size=tree_size, witness_key=key, cosignature=line
        )
        return lambda: stub.AddCheckpointCosignature(request)

    cases = [
        ("witness_key", raw("not a key", good), invalid, "BAD_COSIGNATURE"),
        ("witness_key", raw("", good), invalid, "MISSING_FIELD"),
        ("cosignature", raw(witness.verifier.vkey(), ""), invalid, "MISSING_FIELD"),
        ("witness_key", _add(stub, size, UNLISTED, cosign(note, UNLISTED, 5).line()[:-1]),
         grpc.StatusCode.PERMISSION_DENIED, "WITNESS_NOT_ACCEPTED"),
        # A cosignature of another checkpoint, one by another witness, one cut short.
        ("cosignature", _add(stub, size, witness,
                             cosign(other_note.signed_note, witness, 5).line()[:-1]),
         invalid, "BAD_COSIGNATURE"),
        ("cosignature", _add(stub, size, witness, cosign(note, WITNESSES[3], 5).line()[:-1]),
         invalid, "BAD_COSIGNATURE"),
        ("cosignature", _add(stub, size, witness, good[:-6]), invalid, "BAD_COSIGNATURE"),
        ("cosignature", _add(stub, size, witness, good + "A" * 600), invalid, "BAD_COSIGNATURE"),
        ("tree_size", _add(stub, 0, witness, good), invalid, "BAD_TREE_SIZE"),
        ("tree_size", _add(stub, unissued, witness, good), grpc.StatusCode.NOT_FOUND,
         "CHECKPOINT_NOT_FOUND"),
        ("tree_size", _add(stub, size + 1_000_000, witness, good),
         grpc.StatusCode.FAILED_PRECONDITION, "TREE_SIZE_NOT_CHECKPOINTED"),
    ]  # fmt: skip
    kept, events = _kept(world), world.event_count()
    for field, call, code, reason in cases:
        with pytest.raises(grpc.RpcError) as refused:
            call()
        got_code, got_reason, _, bad_request = error_reason(refused.value)
        assert (got_code, got_reason) == (code, reason), field
        if code == invalid:
            assert [v.field for v in bad_request.field_violations] == [field]
    assert (_kept(world), world.event_count()) == (kept, events)
    assert stub.GetCheckpoint(messages.GetCheckpointRequest(tree_size=size)).signed_note == note


def test_cheap_bounds_are_checked_before_the_key_is_parsed_or_the_list_consulted(
    world: World, stub: Stub
) -> None:
    """Sizes come first: an oversized key or line is refused for its size, not parsed or looked
    up (hostile input costs little), and a bad tree size before a garbage key."""
    world.played(world.seated())
    found = checkpoint_covering(stub, world, world.event_count())
    size, note = found.tree_size, found.signed_note
    long_named = NoteSigner.from_seed("w" * 500, bytes([7]) * 32, COSIGNATURE_V1)
    unlisted_line = cosign(note, UNLISTED, 5).line()[:-1]
    invalid = grpc.StatusCode.INVALID_ARGUMENT

    def raw(key: str, line: str, tree_size: int = size) -> Callable[[], object]:
        request = messages.AddCheckpointCosignatureRequest(
            tree_size=tree_size, witness_key=key, cosignature=line
        )
        return lambda: stub.AddCheckpointCosignature(request)

    cases = [
        # A well-formed key of 500-byte name: refused for its size, before the operator's list.
        ("witness_key", raw(long_named.verifier.vkey(), cosign(note, long_named, 5).line()[:-1]),
         "BAD_COSIGNATURE", "at most 400 bytes"),
        # An unlisted key with an oversized line: the line's size first.
        ("cosignature", raw(UNLISTED.verifier.vkey(), unlisted_line + "A" * 600),
         "BAD_COSIGNATURE", "at most 512 bytes"),
        ("cosignature", raw(UNLISTED.verifier.vkey(), "é" * 300),
         "BAD_COSIGNATURE", "at most 512 bytes"),
        # A bad tree size before a garbage key.
        ("tree_size", raw("not a key", unlisted_line, 0), "BAD_TREE_SIZE", "at least 1"),
        ("tree_size", raw("x" * 100_000, unlisted_line, -5), "BAD_TREE_SIZE", "at least 1"),
    ]  # fmt: skip
    kept = _kept(world)
    for field, call, reason, words in cases:
        with pytest.raises(grpc.RpcError) as refused:
            call()
        got_code, got_reason, _, bad_request = error_reason(refused.value)
        assert (got_code, got_reason) == (invalid, reason), field
        assert [v.field for v in bad_request.field_violations] == [field]
        assert words in refused.value.details(), field
    assert _kept(world) == kept


def test_a_checkpoint_keeps_at_most_16_cosignatures(world: World, stub: Stub) -> None:
    world.played(world.seated())
    found = checkpoint_covering(stub, world, world.event_count())
    for witness in WITNESSES[:16]:
        _add(stub, found.tree_size, witness, cosign(found.signed_note, witness, 7).line()[:-1])()
    last = WITNESSES[16]
    with pytest.raises(grpc.RpcError) as refused:
        _add(stub, found.tree_size, last, cosign(found.signed_note, last, 7).line()[:-1])()
    assert error_reason(refused.value)[:2] == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "TOO_MANY_COSIGNATURES",
    )
    note = stub.GetCheckpoint(messages.GetCheckpointRequest(tree_size=found.tree_size)).signed_note
    opened = open_checkpoint(note, [*KEYS, *(w.verifier for w in WITNESSES)], ORIGIN)
    assert len(opened.note.verified) == 17  # the server's and 16 witnesses'


def test_cosignatures_are_append_only_even_for_the_owner(world: World) -> None:
    for statement in (
        "UPDATE checkpoint_cosignatures SET line = line",
        "DELETE FROM checkpoint_cosignatures",
        "TRUNCATE checkpoint_cosignatures",
    ):
        with pytest.raises(psycopg.errors.RestrictViolation):
            world.execute(statement)


def test_get_leaves_lists_the_events_in_tree_order_within_its_bounds(
    world: World, stub: Stub
) -> None:
    world.played(world.seated())
    found = checkpoint_covering(stub, world, world.event_count())
    size = found.tree_size
    listed = stub.GetLeaves(messages.GetLeavesRequest(start_index=0))
    assert listed.start_index == 0 and len(listed.leaves) == size  # under 1,000 here
    with psycopg.connect(world.database_url) as connection:
        events = connection.execute(
            "SELECT position, hash FROM events ORDER BY position LIMIT %s", [size]
        ).fetchall()
    assert [(leaf.position, leaf.hash) for leaf in listed.leaves] == [
        (int(position), bytes(value)) for position, value in events
    ]
    root = open_checkpoint(found.signed_note, KEYS, ORIGIN).checkpoint.root
    middle = size // 2
    proof = stub.GetInclusionProof(
        messages.GetInclusionProofRequest(leaf_index=middle, tree_size=size)
    )
    verify_inclusion(
        middle, size, event_leaf_hash(listed.leaves[middle].hash), list(proof.hashes), root
    )
    part = stub.GetLeaves(messages.GetLeavesRequest(start_index=middle, end_index=middle + 2))
    assert list(part.leaves) == list(listed.leaves[middle : middle + 2])
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    for request, code, reason, field in [
        (messages.GetLeavesRequest(start_index=-1), invalid, "BAD_LEAF_INDEX", "start_index"),
        (messages.GetLeavesRequest(end_index=-1), invalid, "BAD_LEAF_INDEX", "end_index"),
        (messages.GetLeavesRequest(start_index=3, end_index=3), invalid, "BAD_LEAF_INDEX",
         "start_index"),
        (messages.GetLeavesRequest(start_index=size + 1_000_000), invalid, "BAD_LEAF_INDEX",
         "start_index"),
        (messages.GetLeavesRequest(end_index=size + 1_000_000),
         grpc.StatusCode.FAILED_PRECONDITION, "TREE_SIZE_NOT_CHECKPOINTED", "end_index"),
    ]:  # fmt: skip
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetLeaves(request)
        got_code, got_reason, _, bad_request = error_reason(refused.value)
        assert (got_code, got_reason) == (code, reason), request
        if code == invalid:
            assert [v.field for v in bad_request.field_violations] == [field]

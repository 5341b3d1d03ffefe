"""The monitor's pure decisions (sapsam.log.monitor) and witness cosignatures
(sapsam.log.cosignature): growth passes; a truncation, a fork, a rewrite, leaves that do not make
the root, a missing or foreign signature each raise their own finding; the state round-trips."""

from __future__ import annotations

import hashlib

import pytest

from sapsam.log.checkpoint import Checkpoint, sapsam_checkpoint, sign_checkpoint
from sapsam.log.cosignature import (
    CosignatureError,
    check_cosignature,
    cosign,
    cosigned_message,
    with_cosignatures,
    witness_signer,
)
from sapsam.log.merkle import MerkleTree, event_leaf_hash
from sapsam.log.merkle_proofs import consistency_proof
from sapsam.log.monitor import (
    Finding,
    Held,
    MonitorError,
    MonitorState,
    check_growth,
    check_leaves,
    check_recorded,
    empty_held,
    extend_frontier,
    open_served,
)
from sapsam.log.signed_note import COSIGNATURE_V1, NoteSigner, open_note

ORIGIN = "sapsam/monitor.test"
SERVER = NoteSigner.from_seed(ORIGIN, bytes(range(32)))
OTHER = NoteSigner.from_seed(ORIGIN, bytes(range(1, 33)))
KEYS = [SERVER.verifier]
CHAINED = [hashlib.sha256(f"event {i}".encode()).digest() for i in range(20)]


def _tree(chained: list[bytes]) -> MerkleTree:
    return MerkleTree(event_leaf_hash(value) for value in chained)


def _note(chained: list[bytes], size: int, signer: NoteSigner = SERVER) -> tuple[Checkpoint, str]:
    checkpoint = sapsam_checkpoint(ORIGIN, size, _tree(chained).root(size), 1_767_225_600 + size)
    return checkpoint, sign_checkpoint(checkpoint, signer)


def _held_after(chained: list[bytes], size: int) -> Held:
    held = empty_held(ORIGIN)
    checkpoint, note = _note(chained, size)
    frontier = extend_frontier(held.frontier, 0, chained[:size])
    return check_leaves(held, frontier, checkpoint, note)


def _alarm(call: object) -> MonitorError:
    assert callable(call)
    with pytest.raises(MonitorError) as raised:
        call()
    return raised.value


def test_growth_over_several_checkpoints_passes_and_the_state_round_trips() -> None:
    tree = _tree(CHAINED)
    held = empty_held(ORIGIN)
    for size in (3, 4, 4, 11, 20):
        checkpoint, note = _note(CHAINED, size)
        assert open_served(note, KEYS, ORIGIN, size, tree.root(size)) == checkpoint
        proof = (
            consistency_proof(held.checkpoint.size, size, tree.node) if held.checkpoint.size else []
        )
        if 0 < held.checkpoint.size < size:
            check_growth(held, checkpoint, note, proof)
        frontier = extend_frontier(
            held.frontier, held.checkpoint.size, CHAINED[held.checkpoint.size : size]
        )
        held = check_leaves(held, frontier, checkpoint, note)
    state = MonitorState(ORIGIN, tuple(KEYS), 0, bytes(32), ()).holding(held)
    again = MonitorState.from_json(state.to_json())
    assert again == state
    back = again.held(held.note)
    assert (back.checkpoint, back.note, back.frontier.hashes) == (
        held.checkpoint,
        held.note,
        held.frontier.hashes,
    )


def test_a_smaller_checkpoint_is_truncated_and_another_root_is_a_fork() -> None:
    held = _held_after(CHAINED, 11)
    smaller, smaller_note = _note(CHAINED, 8)
    alarm = _alarm(lambda: check_growth(held, smaller, smaller_note, []))
    assert alarm.finding is Finding.TRUNCATED and alarm.evidence == (held.note, smaller_note)
    forged = [*CHAINED[:10], hashlib.sha256(b"forged").digest()]
    fork, fork_note = _note(forged, 11)
    assert _alarm(lambda: check_growth(held, fork, fork_note, [])).finding is Finding.FORK
    assert (
        _alarm(lambda: check_recorded(held.checkpoint, held.note, fork, fork_note)).finding
        is Finding.FORK
    )
    check_recorded(held.checkpoint, held.note, held.checkpoint, held.note)
    check_recorded(None, "", fork, fork_note)


def test_a_deleted_and_regrown_history_is_rewritten() -> None:
    """The owner deletes events 8..10, the log grows again past 11: no proof links the trees."""
    held = _held_after(CHAINED, 11)
    rewritten = [*CHAINED[:8], *CHAINED[11:20]]
    later, later_note = _note(rewritten, 17)
    proof = consistency_proof(11, 17, _tree(rewritten).node)
    alarm = _alarm(lambda: check_growth(held, later, later_note, proof))
    assert alarm.finding is Finding.REWRITTEN


def test_leaves_that_do_not_make_the_root_are_a_rewrite() -> None:
    held = _held_after(CHAINED, 11)
    checkpoint, note = _note(CHAINED, 15)
    listed = [*CHAINED[11:14], hashlib.sha256(b"other").digest()]
    frontier = extend_frontier(held.frontier, 11, listed)
    assert (
        _alarm(lambda: check_leaves(held, frontier, checkpoint, note)).finding is Finding.REWRITTEN
    )
    short = extend_frontier(held.frontier, 11, CHAINED[11:14])
    assert _alarm(lambda: check_leaves(held, short, checkpoint, note)).finding is Finding.MALFORMED
    assert _alarm(lambda: extend_frontier(held.frontier, 12, [])).finding is Finding.MALFORMED


def test_missing_foreign_and_bad_signatures_are_signature_findings() -> None:
    checkpoint, note = _note(CHAINED, 5)
    unsigned = checkpoint.text()
    foreign = _note(CHAINED, 5, OTHER)[1]
    flipped = note[:-8] + ("A" if note[-8] != "A" else "B") + note[-7:]
    for bad in (unsigned, unsigned + "\n", foreign, flipped):
        alarm = _alarm(lambda bad=bad: open_served(bad, KEYS, ORIGIN, 5, checkpoint.root))
        assert alarm.finding is Finding.SIGNATURE, (bad, alarm)
    # Signed by a witness only, not by the log: not the log's statement.
    witness = witness_signer("witness.test/w")
    cosigned_only = with_cosignatures(note, [cosign(note, witness, 99).line()[:-1]])
    only_witness = cosigned_only.replace(note.split("\n\n")[1], "")
    alarm = _alarm(lambda: open_served(only_witness, [*KEYS, witness.verifier], ORIGIN, 5,
                                       checkpoint.root))  # fmt: skip
    assert alarm.finding is Finding.SIGNATURE
    # The answer's fields must be the note's.
    alarm = _alarm(lambda: open_served(note, KEYS, ORIGIN, 6, checkpoint.root))
    assert alarm.finding is Finding.MALFORMED


def test_a_retired_key_still_verifies_and_an_unpinned_new_key_does_not() -> None:
    checkpoint, old_note = _note(CHAINED, 5, SERVER)
    _, new_note = _note(CHAINED, 5, OTHER)
    assert open_served(old_note, [OTHER.verifier, SERVER.verifier], ORIGIN, 5, checkpoint.root)
    alarm = _alarm(lambda: open_served(new_note, KEYS, ORIGIN, 5, checkpoint.root))
    assert alarm.finding is Finding.SIGNATURE and "--server-key" in alarm.message


def test_a_cosignature_verifies_is_appended_and_bad_ones_are_refused() -> None:
    checkpoint, note = _note(CHAINED, 7)
    witness = NoteSigner.from_seed("witness.test/w1", bytes(32), COSIGNATURE_V1)
    line = cosign(note, witness, 1_767_225_660).line()[:-1]
    checked = check_cosignature(checkpoint.text(), ORIGIN, witness.verifier.vkey(), line)
    assert (checked.time, checked.witness, checked.line) == (1_767_225_660, witness.verifier, line)
    cosigned = with_cosignatures(note, [line, line])
    assert cosigned == note + line + "\n"
    opened = open_note(cosigned, [SERVER.verifier, witness.verifier])
    assert [entry.timestamp for entry in opened.verified] == [None, 1_767_225_660]
    raw = witness._private.sign(cosigned_message(checkpoint.text(), 1_767_225_660))
    assert line.endswith(__import__("base64").b64encode(
        witness.verifier.key_id.to_bytes(4, "big") + (1_767_225_660).to_bytes(8, "big") + raw
    ).decode())  # fmt: skip
    other_checkpoint, _ = _note(CHAINED, 8)
    impostor = NoteSigner.from_seed(ORIGIN, bytes(32), COSIGNATURE_V1)
    impostor_line = cosign(note, impostor, 5).line()[:-1]
    refused = [
        (other_checkpoint.text(), witness.verifier.vkey(), line, "invalid"),
        (checkpoint.text(), SERVER.verifier.vkey(), line, "type 0x04"),
        (checkpoint.text(), impostor.verifier.vkey(), impostor_line, "log's own name"),
        (checkpoint.text(), witness_signer("w2").verifier.vkey(), line, "not by the key"),
        (checkpoint.text(), witness.verifier.vkey(), line[:-1], "base64"),
        (checkpoint.text(), "x" * 500, line, "at most"),
        (checkpoint.text(), witness.verifier.vkey(), line + "A" * 600, "at most"),
    ]
    for text, key, bad_line, words in refused:
        with pytest.raises(CosignatureError, match=words):
            check_cosignature(text, ORIGIN, key, bad_line)
    with pytest.raises(CosignatureError):
        cosign(note, SERVER, 5)

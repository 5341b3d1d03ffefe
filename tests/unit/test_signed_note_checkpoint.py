"""sapsam.log.checkpoint: the C2SP tlog-checkpoint body, signed by the log and its witnesses."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest

from sapsam.log.checkpoint import (
    Checkpoint,
    CheckpointError,
    OpenedCheckpoint,
    check_extends,
    open_checkpoint,
    open_parsed_checkpoint,
    sapsam_checkpoint,
    sign_checkpoint,
)
from sapsam.log.merkle import EMPTY_ROOT, MerkleTree, leaf_hash
from sapsam.log.merkle_proofs import ProofError, consistency_proof
from sapsam.log.signed_note import (
    COSIGNATURE_V1,
    NoteError,
    NoteSigner,
    NoteVerificationError,
    add_signature,
    parse_note,
    sign_note,
)

ORIGIN = "sapsam/test.example"
SERVER = NoteSigner.from_seed(ORIGIN, bytes(range(32)))
WITNESS = NoteSigner.from_seed("witness.example/w1", bytes(32), COSIGNATURE_V1)
ROOT = MerkleTree(leaf_hash(b"%d" % n) for n in range(5)).root()


def test_the_body_is_origin_size_root_and_the_time_line() -> None:
    checkpoint = sapsam_checkpoint(ORIGIN, 5, ROOT, 1_700_000_000)
    root = base64.b64encode(ROOT).decode()
    assert checkpoint.text() == f"{ORIGIN}\n5\n{root}\ntime 1700000000\n"
    assert Checkpoint.parse(checkpoint.text()) == checkpoint
    assert checkpoint.time == 1_700_000_000
    empty = Checkpoint(ORIGIN, 0, EMPTY_ROOT)
    assert empty.text() == f"{ORIGIN}\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"
    assert empty.time is None


@pytest.mark.parametrize(
    "text",
    [
        f"{ORIGIN}\n5\n",
        f"{ORIGIN}\n05\n{base64.b64encode(ROOT).decode()}\n",
        f"{ORIGIN}\n-5\n{base64.b64encode(ROOT).decode()}\n",
        f"{ORIGIN}\n5\n{base64.b64encode(ROOT[:31]).decode()}\n",
        f"{ORIGIN}\n5\n{base64.b64encode(ROOT).decode().rstrip('=')}\n",
        f"{ORIGIN}\n5\n{base64.b64encode(ROOT).decode()}\n\n",
        f"{ORIGIN}\n5\n{base64.b64encode(ROOT).decode()}",
        f"\n5\n{base64.b64encode(ROOT).decode()}\n",
        f"{ORIGIN}\n{2**63}\n{base64.b64encode(ROOT).decode()}\n",
    ],
)
def test_malformed_bodies_are_refused(text: str) -> None:
    with pytest.raises(CheckpointError):
        Checkpoint.parse(text)


def test_the_log_signs_witnesses_cosign_and_a_reader_checks_both() -> None:
    checkpoint = sapsam_checkpoint(ORIGIN, 5, ROOT, 1_700_000_000)
    note = sign_checkpoint(checkpoint, SERVER)
    opened = open_checkpoint(note, [SERVER.verifier], ORIGIN)
    assert opened.checkpoint == checkpoint
    witnessed = add_signature(note, WITNESS, timestamp=1_700_000_005)
    opened = open_checkpoint(witnessed, [SERVER.verifier, WITNESS.verifier], ORIGIN)
    assert [entry.timestamp for entry in opened.note.verified] == [None, 1_700_000_005]
    # A reader that pins only the server ignores the witness it does not know.
    assert open_checkpoint(witnessed, [SERVER.verifier], ORIGIN).note.unverified
    # A witness's cosignature alone is not the log's statement, unless the reader asks only that.
    with pytest.raises(CheckpointError):
        open_checkpoint(witnessed, [WITNESS.verifier], ORIGIN)
    open_checkpoint(witnessed, [WITNESS.verifier], ORIGIN, require_log_key=False)


def test_another_log_a_tampered_body_or_an_unknown_key_are_refused() -> None:
    note = sign_checkpoint(sapsam_checkpoint(ORIGIN, 5, ROOT, 1), SERVER)
    with pytest.raises(CheckpointError):
        open_checkpoint(note, [SERVER.verifier], "sapsam/other")
    with pytest.raises(NoteVerificationError):
        open_checkpoint(note.replace("\n5\n", "\n6\n"), [SERVER.verifier], ORIGIN)
    stranger = NoteSigner.from_seed(ORIGIN, b"\x09" * 32)
    with pytest.raises(NoteVerificationError):
        open_checkpoint(note, [stranger.verifier], ORIGIN)
    with pytest.raises(CheckpointError):
        sign_checkpoint(sapsam_checkpoint("sapsam/other", 5, ROOT, 1), SERVER)
    with pytest.raises(NoteError):
        open_checkpoint(note.split("\n\n")[0] + "\n", [SERVER.verifier], ORIGIN)


def test_a_checkpoint_signed_before_a_rotation_verifies_with_the_retired_key() -> None:
    old, new = SERVER, NoteSigner.from_seed(ORIGIN, b"\x05" * 32)
    before = sign_checkpoint(sapsam_checkpoint(ORIGIN, 5, ROOT, 1), old)
    after = sign_checkpoint(sapsam_checkpoint(ORIGIN, 6, ROOT, 2), new)
    pinned = [new.verifier, old.verifier]
    assert open_checkpoint(before, pinned, ORIGIN).checkpoint.size == 5
    assert open_checkpoint(after, pinned, ORIGIN).checkpoint.size == 6
    with pytest.raises(NoteVerificationError):
        open_checkpoint(before, [new.verifier], ORIGIN)


def test_a_monitor_catches_truncation_forks_and_rewrites() -> None:
    leaves = [leaf_hash(b"%d" % n) for n in range(11)]
    tree = MerkleTree(leaves)
    seen = sapsam_checkpoint(ORIGIN, 8, tree.root(8), 1)
    later = sapsam_checkpoint(ORIGIN, 11, tree.root(11), 2)
    check_extends(seen, later, consistency_proof(8, 11, tree.node))
    check_extends(seen, seen, [])
    # The deleted-last-deal case: leaves 6 and 7 gone, new events appended after leaf 5.
    rewritten = MerkleTree([*leaves[:6], *(leaf_hash(b"new %d" % n) for n in range(5))])
    forged = sapsam_checkpoint(ORIGIN, 11, rewritten.root(), 3)
    with pytest.raises(ProofError):
        check_extends(seen, forged, consistency_proof(8, 11, rewritten.node))
    with pytest.raises(ProofError):
        check_extends(seen, forged, consistency_proof(8, 11, tree.node))
    with pytest.raises(CheckpointError, match="truncated"):
        check_extends(seen, sapsam_checkpoint(ORIGIN, 6, tree.root(6), 3), [])
    with pytest.raises(CheckpointError, match="fork"):
        check_extends(seen, sapsam_checkpoint(ORIGIN, 8, rewritten.root(8), 3), [])
    with pytest.raises(CheckpointError, match="cannot extend"):
        check_extends(seen, sapsam_checkpoint("sapsam/other", 11, tree.root(), 3), [])


def _opened_or_error(open_it: Callable[[], OpenedCheckpoint]) -> object:
    try:
        return open_it()
    except NoteError as error:
        return (type(error), str(error))


def test_a_checkpoint_opened_from_its_parsed_note_opens_as_from_its_text() -> None:
    # open_parsed_checkpoint (the audit's reading, which parsed the note already) against
    # open_checkpoint on honest, cosigned, forged and foreign notes and key sets.
    note = sign_checkpoint(sapsam_checkpoint(ORIGIN, 5, ROOT, 1), SERVER)
    witnessed = add_signature(note, WITNESS, timestamp=1_700_000_005)
    stranger = NoteSigner.from_seed(ORIGIN, b"\x09" * 32)
    other_log = NoteSigner.from_seed("sapsam/other", b"\x06" * 32)
    foreign = sign_checkpoint(sapsam_checkpoint("sapsam/other", 5, ROOT, 1), other_log)
    bad_origin = sign_note(note.split("\n\n")[0].replace(ORIGIN, "bad origin") + "\n", [SERVER])
    notes = [note, witnessed, note.replace("\n5\n", "\n6\n"), foreign, bad_origin]
    key_sets = [
        [SERVER.verifier],
        [SERVER.verifier, WITNESS.verifier],
        [WITNESS.verifier],
        [stranger.verifier],
        [other_log.verifier, SERVER.verifier],
    ]
    for text in notes:
        parsed = parse_note(text)
        checkpoint = Checkpoint.parse(parsed.text)
        for keys in key_sets:
            assert _opened_or_error(
                lambda: open_parsed_checkpoint(parsed, checkpoint, keys)  # noqa: B023
            ) == _opened_or_error(
                lambda: open_checkpoint(text, keys, checkpoint.origin)  # noqa: B023
            )

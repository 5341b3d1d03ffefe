"""The anchoring checks one by one (docs/audit.md §4.5): the reader's own checkpoint linked by a
carried consistency proof (or not), a fork, witnesses, malformed or oversized proofs, the
verifier's shortcut over shared paths against RFC 9162's walk, and the command line's verdicts
and exit statuses."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from sapsam.audit import verify_export, write_lines
from sapsam.audit.anchoring import Trust
from sapsam.audit.export_reading import read_export
from sapsam.audit.inclusion_walk import forget_walks, inclusion_root
from sapsam.audit.report import Verdict
from sapsam.audit.sample_anchored import AnchoredLog, anchored_log
from sapsam.audit.sample_series import recorded_stream
from sapsam.cli import main
from sapsam.log.checkpoint import sapsam_checkpoint, sign_checkpoint
from sapsam.log.merkle import MerkleTree, NodeId
from sapsam.log.merkle_proofs import ProofError, inclusion_proof, root_from_inclusion_proof
from sapsam.log.signed_note import COSIGNATURE_V1, NoteSigner, add_signature

SIGNER = NoteSigner.from_seed("sapsam/test", bytes(32))
WITNESS = NoteSigner.from_seed("witness/one", bytes([7]) * 32, COSIGNATURE_V1)
PINNED = Trust(server_keys=(SIGNER.verifier,))


@pytest.fixture(scope="module")
def log() -> AnchoredLog:
    # The second table plays on after the first one's last deal: the tree grows past it.
    return anchored_log([recorded_stream(3, 2), recorded_stream(2, 6)], SIGNER)


def _deal(log: AnchoredLog, size: int | None = None, known: int | None = None) -> list[str]:
    from sapsam.audit import Requester, select_deal

    export = select_deal(log.streams[0], 2, Requester.operator())
    return list(write_lines(log.anchored(export, size, known)))


def _reader(log: AnchoredLog, size: int, signer: NoteSigner = SIGNER) -> str:
    checkpoint = sapsam_checkpoint(signer.name, size, log.tree.root(size), 1_800_000_000)
    return sign_checkpoint(checkpoint, signer)


def test_a_newer_checkpoint_of_the_reader_anchors_through_a_carried_proof(
    log: AnchoredLog,
) -> None:
    # The export's checkpoint covers the deal; the reader holds a later one.
    size = log.leaf_of_position[log.streams[0][-1].position] + 1
    assert size < log.tree.size
    reader = _reader(log, log.tree.size)
    without = verify_export(_deal(log, size), trust=Trust(PINNED.server_keys, (), reader))
    assert without.verdict is Verdict.ANCHORED and without.anchor is not None
    assert without.anchor.checkpoint == "export"
    assert without.named("consistency").status.value == "not_covered"
    lines = _deal(log, size, known=log.tree.size)
    report = verify_export(lines, trust=Trust(PINNED.server_keys, (), reader))
    assert report.verdict is Verdict.ANCHORED and report.anchor is not None
    assert (report.anchor.checkpoint, report.anchor.tree_size) == ("reader", log.tree.size)


def test_an_older_checkpoint_of_the_reader_is_shown_extended(log: AnchoredLog) -> None:
    lines = _deal(log, known=30)
    report = verify_export(lines, trust=Trust(PINNED.server_keys, (), _reader(log, 30)))
    assert report.verdict is Verdict.ANCHORED and report.anchor is not None
    assert report.anchor.tree_size == log.tree.size and report.anchor.checkpoint == "export"
    assert "extends the one of 30" in report.named("consistency").detail


def test_a_witness_of_the_readers_older_tree_vouches_only_for_events_inside_it(
    log: AnchoredLog,
) -> None:
    # The reader's checkpoint, cosigned by the witness, is older than the export's: the witness
    # saw the events only if the reader's tree already holds them (docs/audit.md §4.5).
    leaves = sorted(
        event.inclusion.leaf_index
        for event in read_export(_deal(log)).events
        if event.inclusion is not None
    )
    trust = Trust(PINNED.server_keys, (WITNESS.verifier,))
    for size, witnessed in ((leaves[-1], False), (leaves[-1] + 1, True)):
        assert size < log.tree.size
        reader = add_signature(_reader(log, size), WITNESS, 1_800_000_100)
        report = verify_export(_deal(log, known=size), trust=replace(trust, checkpoint=reader))
        assert report.verdict is Verdict.ANCHORED and report.anchor is not None
        assert report.anchor.checkpoint == "export"
        expected = (WITNESS.verifier.label,) if witnessed else ()
        assert report.anchor.witnessed_by == expected, size
        assert ("witnessed by" in report.anchor.describe()) is witnessed


def test_a_fork_or_a_rewritten_history_fails(log: AnchoredLog) -> None:
    other = MerkleTree([bytes([9]) * 32] * log.tree.size)
    forked = sign_checkpoint(
        sapsam_checkpoint("sapsam/test", log.tree.size, other.root(), 1_800_000_000), SIGNER
    )
    report = verify_export(_deal(log), trust=Trust(PINNED.server_keys, (), forked))
    assert report.verdict is Verdict.FAILED and "a fork" in report.named("consistency").detail
    # A carried proof that does not link the reader's tree to the export's.
    lines = _deal(log, known=30)
    header = json.loads(lines[0])
    header["transparency"]["consistency"][0]["proof"] = "00" * 32 * 3
    lines[0] = json.dumps(header)
    bad = verify_export(lines, trust=Trust(PINNED.server_keys, (), _reader(log, 30)))
    assert bad.verdict is Verdict.FAILED and bad.failed_names() == ("consistency",)


def test_the_reader_checkpoint_must_be_signed_by_the_pinned_key(log: AnchoredLog) -> None:
    stranger = NoteSigner.from_seed("sapsam/test", bytes([3]) * 32)
    reader = _reader(log, 30, stranger)
    report = verify_export(_deal(log), trust=Trust(PINNED.server_keys, (), reader))
    assert report.verdict is Verdict.FAILED and report.failed_names() == ("consistency",)


def test_a_witnessed_checkpoint_says_who_witnessed_it(log: AnchoredLog) -> None:
    lines = _deal(log)
    header = json.loads(lines[0])
    note = header["transparency"]["checkpoint"]
    header["transparency"]["checkpoint"] = add_signature(note, WITNESS, 1_800_000_100)
    lines[0] = json.dumps(header)
    unpinned_witness = verify_export(lines, trust=PINNED)
    assert unpinned_witness.anchor is not None and unpinned_witness.anchor.witnessed_by == ()
    assert "1 signature by keys not pinned" in unpinned_witness.named("checkpoint").detail
    witnessed = verify_export(lines, trust=Trust(PINNED.server_keys, (WITNESS.verifier,)))
    assert witnessed.verdict is Verdict.ANCHORED and witnessed.anchor is not None
    assert witnessed.anchor.witnessed_by == (WITNESS.verifier.label,)
    # A pinned witness's cosignature that does not verify refuses the note.
    cosigned = add_signature(note, WITNESS, 1_800_000_100)
    damaged = cosigned[:-20] + ("A" if cosigned[-20] != "A" else "B") + cosigned[-19:]
    header["transparency"]["checkpoint"] = damaged
    lines[0] = json.dumps(header)
    broken = verify_export(lines, trust=Trust(PINNED.server_keys, (WITNESS.verifier,)))
    assert broken.verdict is Verdict.FAILED


@pytest.mark.parametrize(
    ("inclusion", "message"),
    [
        ({"leaf_index": -1, "proof": ""}, "leaf_index"),
        ({"leaf_index": 2**63, "proof": ""}, "leaf_index"),
        ({"leaf_index": 1, "proof": "ab"}, "whole 32-byte hashes"),
        ({"leaf_index": 1, "proof": "zz" * 32}, "not hex"),
        ({"leaf_index": 1, "proof": "00" * 32 * 65}, "at most 64"),
        ({"leaf_index": "1", "proof": ""}, "leaf_index"),
        ([], "JSON object"),
    ],
)
def test_a_malformed_inclusion_is_a_format_failure(
    log: AnchoredLog, inclusion: object, message: str
) -> None:
    lines = _deal(log)
    event = json.loads(lines[3])
    event["inclusion"] = inclusion
    lines[3] = json.dumps(event)
    report = verify_export(lines, trust=PINNED)
    assert report.verdict is Verdict.FAILED and report.failed_names() == ("format",)
    assert message in report.named("format").detail


@pytest.mark.parametrize("in_leaf_order", [False, True])
def test_the_shared_path_shortcut_gives_rfc_9162s_result(in_leaf_order: bool) -> None:
    """Valid and damaged proofs, in random order and in leaf order (as an export's, where the
    shortcut is taken most), each give what RFC 9162's walk gives, or are refused alike. The
    walks are remembered across trees of several sizes over the same leaves (so the same node
    hashes at other positions, and other roots) and across rounds, as across the exports of a
    verifying process."""
    forget_walks()
    chooser = random.Random(15)
    sizes = (1, 2, 3, 7, 8, 13, 64, 100, 1000)
    trees = {
        size: MerkleTree(bytes([i % 256, i // 256]) * 16 for i in range(size)) for size in sizes
    }
    for _ in range(2):
        for size in sizes:
            tree = trees[size]
            leaves = [chooser.randrange(size) for _ in range(60)]
            if in_leaf_order:
                leaves.sort()
            for leaf in leaves:
                proof = inclusion_proof(leaf, size, tree.node)
                if chooser.random() < 0.4 and proof:  # a damaged proof, or one too long or short
                    damage = chooser.choice(["flip", "drop", "add"])
                    position = chooser.randrange(len(proof))
                    if damage == "flip":
                        proof[position] = bytes([proof[position][0] ^ 1]) + proof[position][1:]
                    elif damage == "drop":
                        del proof[position]
                    else:
                        proof.insert(position, bytes(32))
                leaf_hash = tree.node(NodeId(0, leaf))
                if chooser.random() < 0.1:  # a wrong leaf hash under a valid proof
                    leaf_hash = bytes(32)
                try:
                    expected: bytes | str = root_from_inclusion_proof(leaf, size, leaf_hash, proof)
                except ProofError:
                    expected = "refused"
                try:
                    found: bytes | str = inclusion_root(leaf, size, leaf_hash, b"".join(proof))
                except ProofError:
                    found = "refused"
                assert found == expected, (size, leaf)


def test_a_remembered_walk_never_vouches_for_other_remaining_hashes(log: AnchoredLog) -> None:
    """Once an honest export's proofs are remembered, a second copy whose proof differs only
    above the node the two share (a forged upper hash) still fails the inclusion check, as it
    does when nothing is remembered."""
    lines = _deal(log)
    forget_walks()
    assert verify_export(lines, trust=PINNED).verdict is Verdict.ANCHORED
    event = json.loads(lines[-1])
    proof = event["inclusion"]["proof"]
    last = proof[-64:]
    event["inclusion"]["proof"] = proof[:-64] + ("0" if last[0] != "0" else "1") + last[1:]
    forged = [*lines[:-1], json.dumps(event)]
    remembered = verify_export(forged, trust=PINNED)
    forget_walks()
    fresh = verify_export(forged, trust=PINNED)
    assert remembered.failed_names() == fresh.failed_names() == ("inclusion",)
    assert remembered.named("inclusion") == fresh.named("inclusion")


def test_the_command_line_prints_each_verdict_and_exits_with_it(
    log: AnchoredLog, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "deal.jsonl"
    export.write_text("".join(line + "\n" for line in _deal(log)), encoding="utf-8")
    keys = tmp_path / "server.vkeys"
    keys.write_text(f"# pinned\ncurrent {SIGNER.verifier.vkey()}\n", encoding="utf-8")
    assert main(["audit", "verify", str(export), "--server-key", str(keys)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("ANCHORED: every event is in")
    assert main(["audit", "verify", str(export)]) == 4
    assert capsys.readouterr().out.splitlines()[-1].startswith("INTERNALLY CONSISTENT ONLY: ")
    stranger = NoteSigner.from_seed("sapsam/test", bytes([3]) * 32).verifier.vkey()
    assert main(["audit", "verify", str(export), "--server-key", stranger, "--json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["verdict"] == "failed" and printed["anchor"] is None
    reader = tmp_path / "checkpoint"
    reader.write_text(_reader(log, log.tree.size), encoding="utf-8")
    code = main(
        [
            "audit",
            "verify",
            str(export),
            "--server-key",
            SIGNER.verifier.vkey(),
            "--checkpoint",
            str(reader),
        ]
    )
    assert code == 0 and "your checkpoint is the export's" in capsys.readouterr().out
    assert main(["audit", "verify", str(export), "--checkpoint", str(reader)]) == 2
    assert "--checkpoint needs --server-key" in capsys.readouterr().err
    assert main(["audit", "verify", str(export), "--server-key", "nonsense"]) == 2

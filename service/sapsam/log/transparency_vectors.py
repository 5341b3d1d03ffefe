"""The test vectors of docs/transparency-vectors.json, built from fixed inputs.

``build_vectors()`` is pure; run ``python -m sapsam.log.transparency_vectors >
docs/transparency-vectors.json`` to regenerate the file after a deliberate change to the spec
(tests/unit/test_transparency_vectors.py holds the file to the code and to a second verifier
written from docs/transparency.md).

Every byte string is lowercase hex except where the formats themselves use base64 (checkpoint
root lines, signature lines, keys).
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from typing import Any, Final

from sapsam.log.checkpoint import sapsam_checkpoint, sign_checkpoint
from sapsam.log.cosignature import cosign, cosigned_message
from sapsam.log.merkle import EMPTY_ROOT, MerkleTree, event_leaf_hash, leaf_hash, node_hash
from sapsam.log.merkle_proofs import (
    consistency_plan,
    consistency_proof,
    inclusion_plan,
    inclusion_proof,
)
from sapsam.log.receipt_vectors import receipt_vectors
from sapsam.log.signed_note import COSIGNATURE_V1, NoteSigner, add_signature

LEAF_COUNT: Final = 11
INCLUSION_SIZES: Final = (1, 2, 3, 4, 5, 7, 8, 11)
ORIGIN: Final = "sapsam/vectors.example"
WITNESS: Final = "witness.example/w1"
CHECKPOINT_TIME: Final = 1767225600  # 2026-01-01T00:00:00Z
COSIGNATURE_TIME: Final = 1767225660


def _label_bytes(label: str) -> bytes:
    """Fixed, reproducible test bytes: SHA-256 of the label."""
    return hashlib.sha256(label.encode()).digest()


def chained_hashes() -> list[bytes]:
    """The leaves: 32-byte stand-ins for events' chained hashes, SHA-256("event <i>")."""
    return [_label_bytes(f"event {index}") for index in range(LEAF_COUNT)]


def vector_signers() -> tuple[NoteSigner, NoteSigner]:
    """The fixed test keys (seeds SHA-256 of a label; never use them for anything real)."""
    server = NoteSigner.from_seed(ORIGIN, _label_bytes("sapsam transparency vectors: server"))
    witness = NoteSigner.from_seed(
        WITNESS, _label_bytes("sapsam transparency vectors: witness"), COSIGNATURE_V1
    )
    return server, witness


def _hex(values: list[bytes]) -> list[str]:
    return [value.hex() for value in values]


def _flip(value: bytes) -> bytes:
    return bytes([value[0] ^ 1, *value[1:]])


def build_vectors() -> dict[str, Any]:
    """Every vector docs/transparency.md cites."""
    leaves = chained_hashes()
    leaf_hashes = [event_leaf_hash(leaf) for leaf in leaves]
    tree = MerkleTree(leaf_hashes)
    inclusion = [
        {
            "index": index,
            "size": size,
            "leaf_hash": leaf_hashes[index].hex(),
            "proof": _hex(inclusion_proof(index, size, tree.node)),
            "subtrees": [list(subtree) for subtree in inclusion_plan(index, size)],
            "root": tree.root(size).hex(),
        }
        for size in INCLUSION_SIZES
        for index in range(size)
    ]
    consistency = [
        {
            "old_size": old_size,
            "new_size": new_size,
            "proof": _hex(consistency_proof(old_size, new_size, tree.node)),
            "subtrees": [list(subtree) for subtree in consistency_plan(old_size, new_size)],
            "old_root": tree.root(old_size).hex(),
            "new_root": tree.root(new_size).hex(),
        }
        for new_size in range(1, LEAF_COUNT + 1)
        for old_size in range(1, new_size)
    ]
    refused_proof = inclusion_proof(2, 7, tree.node)
    refused = [
        {
            "kind": "inclusion",
            "why": "one bit of proof[0] flipped",
            "index": 2,
            "size": 7,
            "leaf_hash": leaf_hashes[2].hex(),
            "proof": _hex([_flip(refused_proof[0]), *refused_proof[1:]]),
            "root": tree.root(7).hex(),
        },
        {
            "kind": "inclusion",
            "why": "right proof, wrong index (3 for 2)",
            "index": 3,
            "size": 7,
            "leaf_hash": leaf_hashes[2].hex(),
            "proof": _hex(refused_proof),
            "root": tree.root(7).hex(),
        },
        {
            "kind": "inclusion",
            "why": "proof one hash short",
            "index": 2,
            "size": 7,
            "leaf_hash": leaf_hashes[2].hex(),
            "proof": _hex(refused_proof[:-1]),
            "root": tree.root(7).hex(),
        },
        {
            "kind": "consistency",
            "why": "the old tree rewritten: leaf 2 replaced, roots recomputed",
            "old_size": 5,
            "new_size": 11,
            "proof": _hex(consistency_proof(5, 11, tree.node)),
            "old_root": MerkleTree([*leaf_hashes[:2], leaf_hash(b"forged"), *leaf_hashes[3:5]])
            .root()
            .hex(),
            "new_root": tree.root(11).hex(),
        },
        {
            "kind": "consistency",
            "why": "truncated: a tree of 11 offered as extending one of 7 with a root of 11's",
            "old_size": 7,
            "new_size": 11,
            "proof": _hex(consistency_proof(7, 11, tree.node)),
            "old_root": tree.root(11).hex(),
            "new_root": tree.root(11).hex(),
        },
    ]
    server, witness = vector_signers()
    checkpoint = sapsam_checkpoint(ORIGIN, LEAF_COUNT, tree.root(), CHECKPOINT_TIME)
    signed = sign_checkpoint(checkpoint, server)
    cosigned = add_signature(signed, witness, timestamp=COSIGNATURE_TIME)
    return {
        "description": (
            "sapsam transparency log vectors: RFC 9162 Merkle hashing over events' chained"
            " hashes, inclusion and consistency proofs, and a C2SP checkpoint signed as a"
            " signed note (Ed25519) and cosigned by a witness (tlog-cosignature/v1)."
            " See docs/transparency.md."
        ),
        "hashing": {
            "empty_root": EMPTY_ROOT.hex(),
            "leaf": {"leaf": leaves[0].hex(), "leaf_hash": leaf_hashes[0].hex()},
            "node": {
                "left": leaf_hashes[0].hex(),
                "right": leaf_hashes[1].hex(),
                "node_hash": node_hash(leaf_hashes[0], leaf_hashes[1]).hex(),
            },
        },
        "leaves": _hex(leaves),
        "leaf_hashes": _hex(leaf_hashes),
        "roots": [{"size": size, "root": tree.root(size).hex()} for size in range(LEAF_COUNT + 1)],
        "inclusion": inclusion,
        "consistency": consistency,
        "refused": refused,
        "checkpoint": {
            "origin": ORIGIN,
            "size": LEAF_COUNT,
            "root": tree.root().hex(),
            "time": CHECKPOINT_TIME,
            "text": checkpoint.text(),
            "server_skey": server.skey(),
            "server_vkey": server.verifier.vkey(),
            "server_key_id": f"{server.verifier.key_id:08x}",
            "signed_note": signed,
            "witness_skey": witness.skey(),
            "witness_vkey": witness.verifier.vkey(),
            "witness_key_id": f"{witness.verifier.key_id:08x}",
            "cosignature_time": COSIGNATURE_TIME,
            "cosigned_note": cosigned,
        },
        "cosignature": _cosignature(signed, witness, tree.root(7)),
        "receipts": receipt_vectors(server, witness),
    }


def _cosignature(signed: str, witness: NoteSigner, other_root: bytes) -> dict[str, Any]:
    """A witness's cosignature line alone (what AddCheckpointCosignature takes), the exact
    message it signs, and lines a server must refuse."""
    text = signed.split("\n\n", 1)[0] + "\n"
    line = cosign(signed, witness, COSIGNATURE_TIME).line()[:-1]
    other = sapsam_checkpoint(ORIGIN, 7, other_root, CHECKPOINT_TIME).text()
    name, encoded = line[2:].split(" ")
    raw = bytearray(base64.b64decode(encoded))
    raw[11] ^= 1  # the time's last byte: the signed message changes with it
    retimed = f"— {name} {base64.b64encode(bytes(raw)).decode()}"
    impostor = NoteSigner.from_seed("witness.example/w2", _label_bytes("w2")[:32], COSIGNATURE_V1)
    return {
        "witness_vkey": witness.verifier.vkey(),
        "time": COSIGNATURE_TIME,
        "text": text,
        "message": cosigned_message(text, COSIGNATURE_TIME).decode(),
        "line": line,
        "refused": [
            {"why": "a cosignature of another checkpoint", "text": other, "line": line},
            {"why": "the time bytes changed", "text": text, "line": retimed},
            {
                "why": "a line by another witness than the key given",
                "text": text,
                "line": cosign(signed, impostor, COSIGNATURE_TIME).line()[:-1],
            },
        ],
    }


if __name__ == "__main__":
    json.dump(build_vectors(), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")

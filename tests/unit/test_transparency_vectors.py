"""docs/transparency-vectors.json against the code, and against a second verifier written from
docs/transparency.md.

The second verifier (``_spec_*`` below) follows the page step by step with hashlib, base64 and
the raw Ed25519 primitive of ``cryptography``, as a third party would; it shares no code with
sapsam.log.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from sapsam.log.checkpoint import Checkpoint, open_checkpoint
from sapsam.log.cosignature import CosignatureError, check_cosignature
from sapsam.log.merkle_proofs import ProofError, verify_consistency, verify_inclusion
from sapsam.log.signed_note import VerifierKey
from sapsam.log.transparency_vectors import build_vectors

VECTORS_PATH = Path(__file__).resolve().parents[2] / "docs" / "transparency-vectors.json"
VECTORS: dict[str, Any] = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))


def _h(text: str) -> bytes:
    return bytes.fromhex(text)


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _spec_leaf(leaf: bytes) -> bytes:
    return _sha(b"\x00" + leaf)


def _spec_node(left: bytes, right: bytes) -> bytes:
    return _sha(b"\x01" + left + right)


def _spec_mth(leaf_hashes: list[bytes]) -> bytes:
    if not leaf_hashes:
        return _sha(b"")
    if len(leaf_hashes) == 1:
        return leaf_hashes[0]
    k = 1
    while k * 2 < len(leaf_hashes):
        k *= 2
    return _spec_node(_spec_mth(leaf_hashes[:k]), _spec_mth(leaf_hashes[k:]))


def _spec_inclusion(index: int, size: int, leaf: bytes, proof: list[bytes], root: bytes) -> bool:
    if not 0 <= index < size or any(len(p) != 32 for p in proof):
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = _spec_node(p, r)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = _spec_node(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def _spec_consistency(m: int, n: int, old: bytes, new: bytes, proof: list[bytes]) -> bool:
    if not 0 < m < n or not proof:
        return False
    path = list(proof)
    if m & (m - 1) == 0:
        path.insert(0, old)
    fn, sn = m - 1, n - 1
    while fn % 2 == 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr, sr = _spec_node(c, fr), _spec_node(c, sr)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = _spec_node(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == old and sr == new


def _spec_key_id(name: str, kind: int, public: bytes) -> int:
    return int.from_bytes(_sha(name.encode() + b"\n" + bytes([kind]) + public)[:4], "big")


def _spec_vkey(vkey: str) -> tuple[str, int, int, bytes]:
    name, id_text, material = vkey.split("+", 2)
    raw = base64.b64decode(material, validate=True)
    assert _spec_key_id(name, raw[0], raw[1:]) == int(id_text, 16)
    return name, int(id_text, 16), raw[0], raw[1:]


def _spec_skey_public(skey: str) -> tuple[str, bytes]:
    assert skey.startswith("PRIVATE+KEY+")
    name, _, material = skey[len("PRIVATE+KEY+") :].split("+", 2)
    seed = base64.b64decode(material, validate=True)[1:]
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key()
    return name, public.public_bytes(Encoding.Raw, PublicFormat.Raw)


def _spec_open(note: str, keys: list[str]) -> dict[str, int | None]:
    """The names of the trusted keys whose signatures verified, with a cosignature's time."""
    text, _, block = note.rpartition("\n\n")
    text += "\n"
    trusted = {
        (name, key_id): (kind, public) for name, key_id, kind, public in map(_spec_vkey, keys)
    }
    verified: dict[str, int | None] = {}
    for line in block.rstrip("\n").split("\n"):
        assert line.startswith("— ")
        name, encoded = line[2:].split(" ")
        raw = base64.b64decode(encoded, validate=True)
        key_id, signature = int.from_bytes(raw[:4], "big"), raw[4:]
        if (name, key_id) not in trusted:
            continue
        kind, public = trusted[name, key_id]
        message, stamp = text.encode(), None
        if kind == 0x04:
            stamp = int.from_bytes(signature[:8], "big")
            message = f"cosignature/v1\ntime {stamp}\n".encode() + message
            signature = signature[8:]
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
        verified[name] = stamp
    return verified


def test_the_file_is_what_the_code_builds() -> None:
    assert build_vectors() == VECTORS


def test_hashing_and_roots_from_the_page() -> None:
    hashing = VECTORS["hashing"]
    assert _h(hashing["empty_root"]) == _sha(b"")
    assert _spec_leaf(_h(hashing["leaf"]["leaf"])) == _h(hashing["leaf"]["leaf_hash"])
    node = hashing["node"]
    assert _spec_node(_h(node["left"]), _h(node["right"])) == _h(node["node_hash"])
    leaf_hashes = [_spec_leaf(_h(leaf)) for leaf in VECTORS["leaves"]]
    assert [value.hex() for value in leaf_hashes] == VECTORS["leaf_hashes"]
    for entry in VECTORS["roots"]:
        assert _spec_mth(leaf_hashes[: entry["size"]]).hex() == entry["root"]


@pytest.mark.parametrize("vector", VECTORS["inclusion"], ids=lambda v: f"{v['index']}@{v['size']}")
def test_inclusion_vectors(vector: dict[str, Any]) -> None:
    proof = [_h(value) for value in vector["proof"]]
    arguments = (
        vector["index"],
        vector["size"],
        _h(vector["leaf_hash"]),
        proof,
        _h(vector["root"]),
    )
    assert _spec_inclusion(*arguments)
    verify_inclusion(*arguments)
    # Each proof hash is the MTH of the leaf range the vector names (§7).
    leaf_hashes = [_h(value) for value in VECTORS["leaf_hashes"]]
    assert [_spec_mth(leaf_hashes[s:e]) for s, e in vector["subtrees"]] == proof


@pytest.mark.parametrize(
    "vector", VECTORS["consistency"], ids=lambda v: f"{v['old_size']}-{v['new_size']}"
)
def test_consistency_vectors(vector: dict[str, Any]) -> None:
    proof = [_h(value) for value in vector["proof"]]
    sizes = (vector["old_size"], vector["new_size"])
    roots = (_h(vector["old_root"]), _h(vector["new_root"]))
    assert _spec_consistency(*sizes, *roots, proof)
    verify_consistency(*sizes, *roots, proof)
    leaf_hashes = [_h(value) for value in VECTORS["leaf_hashes"]]
    assert [_spec_mth(leaf_hashes[s:e]) for s, e in vector["subtrees"]] == proof


@pytest.mark.parametrize("vector", VECTORS["refused"], ids=lambda v: v["why"])
def test_refused_vectors(vector: dict[str, Any]) -> None:
    proof = [_h(value) for value in vector["proof"]]
    if vector["kind"] == "inclusion":
        index, size = vector["index"], vector["size"]
        leaf, root = _h(vector["leaf_hash"]), _h(vector["root"])
        assert not _spec_inclusion(index, size, leaf, proof, root)
        with pytest.raises(ProofError):
            verify_inclusion(index, size, leaf, proof, root)
    else:
        sizes = (vector["old_size"], vector["new_size"])
        roots = (_h(vector["old_root"]), _h(vector["new_root"]))
        assert not _spec_consistency(*sizes, *roots, proof)
        with pytest.raises(ProofError):
            verify_consistency(*sizes, *roots, proof)


def test_the_checkpoint_vector_from_the_page() -> None:
    vector = VECTORS["checkpoint"]
    root = base64.b64encode(_h(vector["root"])).decode()
    expected_text = f"{vector['origin']}\n{vector['size']}\n{root}\ntime {vector['time']}\n"
    assert vector["text"] == expected_text
    assert vector["root"] == VECTORS["roots"][vector["size"]]["root"]
    for role in ("server", "witness"):
        name, public = _spec_skey_public(vector[f"{role}_skey"])
        vkey_name, key_id, kind, vkey_public = _spec_vkey(vector[f"{role}_vkey"])
        assert (vkey_name, vkey_public) == (name, public)
        assert f"{key_id:08x}" == vector[f"{role}_key_id"]
        assert kind == (0x01 if role == "server" else 0x04)
    origin = vector["origin"]
    assert vector["signed_note"].startswith(expected_text + "\n— " + origin + " ")
    assert _spec_open(vector["signed_note"], [vector["server_vkey"]]) == {origin: None}
    both = [vector["server_vkey"], vector["witness_vkey"]]
    witness = _spec_vkey(vector["witness_vkey"])[0]
    assert _spec_open(vector["cosigned_note"], both) == {
        origin: None,
        witness: vector["cosignature_time"],
    }
    # A changed text fails every signature of a trusted key.
    with pytest.raises(InvalidSignature):
        _spec_open(vector["signed_note"].replace("\n11\n", "\n12\n"), [vector["server_vkey"]])
    # And the code agrees.
    keys = [VerifierKey.parse(vkey) for vkey in both]
    opened = open_checkpoint(vector["cosigned_note"], keys, origin)
    assert opened.checkpoint == Checkpoint.parse(vector["text"])
    assert [entry.timestamp for entry in opened.note.verified] == [None, vector["cosignature_time"]]


def test_the_cosignature_vector_from_the_page() -> None:
    """§5.2: the message a witness signs, the line it sends, and lines a server refuses."""
    vector = VECTORS["cosignature"]
    stamp, text = vector["time"], vector["text"]
    assert text == VECTORS["checkpoint"]["text"]
    assert vector["message"] == f"cosignature/v1\ntime {stamp}\n{text}"
    name, key_id, kind, public = _spec_vkey(vector["witness_vkey"])
    assert kind == 0x04
    assert vector["line"].startswith(f"— {name} ")
    raw = base64.b64decode(vector["line"].split(" ")[2], validate=True)
    assert int.from_bytes(raw[:4], "big") == key_id
    assert int.from_bytes(raw[4:12], "big") == stamp
    Ed25519PublicKey.from_public_bytes(public).verify(raw[12:], vector["message"].encode())
    origin = VECTORS["checkpoint"]["origin"]
    checked = check_cosignature(text, origin, vector["witness_vkey"], vector["line"])
    assert checked.time == stamp
    for refused in vector["refused"]:
        with pytest.raises(CosignatureError):
            check_cosignature(refused["text"], origin, vector["witness_vkey"], refused["line"])

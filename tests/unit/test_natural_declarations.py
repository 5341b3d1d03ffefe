"""Natural declaration commitments and the declare signature message (docs/fairness.md §21),
rebuilt from the page alone with hashlib, against the server's and the SDK's implementations."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from sapsam.fairness.encoding import FairnessError
from sapsam.fairness.natural_commitments import (
    declaration_commitment,
    declaration_opens,
    declare_message,
)
from sapsam_client import commitment as client_commitment
from sapsam_client import player_key as client_keys

TABLE = uuid.UUID("5a9c7e3e-1f2b-4c8d-9e0f-112233445566")
PLAYER = "0d5a7b1e-4c3f-4a2b-9e8d-7c6b5a493827"
NONCE = bytes(16)
THREE_FLUSHES = "e5e41bdf5c225a2ec079e25ab06b6ddaa60a96339f92bcc8cf011ad33823cea3"
NONE = "9b51b2a683efbf46ffaddfdd00cec9393ee62534b96e32e472284a2ba94aa109"


def lp(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def from_the_page(declaration: str) -> bytes:
    return hashlib.sha256(
        lp(b"sapsam/fairness/v1/natural-declaration")
        + TABLE.bytes
        + (2).to_bytes(8, "big")
        + bytes([0])
        + lp(PLAYER.encode())
        + lp(declaration.encode())
        + lp(NONCE)
    ).digest()


@pytest.mark.parametrize(
    ("declaration", "vector"), [("three_flushes", THREE_FLUSHES), ("none", NONE)]
)
def test_the_vectors(declaration: str, vector: str) -> None:
    assert from_the_page(declaration).hex() == vector
    assert declaration_commitment(TABLE, 2, 0, PLAYER, declaration, NONCE).hex() == vector
    assert (
        client_commitment.declaration_commitment(TABLE, 2, 0, PLAYER, declaration, NONCE).hex()
        == vector
    )
    assert declaration_opens(bytes.fromhex(vector), TABLE, 2, 0, PLAYER, declaration, NONCE)


def test_anything_else_does_not_open_it() -> None:
    commitment = bytes.fromhex(THREE_FLUSHES)
    for changed in (
        (TABLE, 2, 0, PLAYER, "dragon", NONCE),
        (TABLE, 3, 0, PLAYER, "three_flushes", NONCE),
        (TABLE, 2, 1, PLAYER, "three_flushes", NONCE),
        (TABLE, 2, 0, "f1e2d3c4-b5a6-4978-8695-a4b3c2d1e0f9", "three_flushes", NONCE),
        (TABLE, 2, 0, PLAYER, "three_flushes", b"\x01" + NONCE[1:]),
    ):
        assert not declaration_opens(commitment, *changed)
    with pytest.raises(FairnessError):
        declaration_commitment(TABLE, 2, 0, PLAYER, "none", b"short")
    with pytest.raises(FairnessError):
        declaration_commitment(TABLE, 2, 0, PLAYER, "x" * 33, NONCE)


def test_the_declare_message() -> None:
    commitment = bytes.fromhex(THREE_FLUSHES)
    expected = (
        lp(b"sapsam/player-signature/v1/declare")
        + TABLE.bytes
        + (2).to_bytes(8, "big")
        + bytes([0])
        + lp(PLAYER.encode())
        + lp(commitment)
    )
    assert len(expected) == 139
    assert declare_message(TABLE, 2, 0, PLAYER, commitment) == expected
    assert client_keys.declare_message(TABLE, 2, 0, PLAYER, commitment) == expected

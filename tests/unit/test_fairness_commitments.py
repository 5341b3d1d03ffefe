"""Arrangement commitments: the client's commit and the server's check of a reveal."""

from __future__ import annotations

import uuid

import pytest

from sapsam.fairness import (
    MAX_NONCE_BYTES,
    MIN_NONCE_BYTES,
    FairnessError,
    arrangement_commitment,
    check_reveal,
    commit,
)
from sapsam.rules.arrangement import Arrangement

TABLE = uuid.UUID("5a9c7e3e-1f2b-4c8d-9e0f-112233445566")
NONCE = bytes(range(16))
ARRANGEMENT = Arrangement.parse("2s 2h Ad", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ac")


def _base() -> bytes:
    return commit(TABLE, 5, 1, ARRANGEMENT, NONCE)


def test_commit_is_the_arrangement_commitment() -> None:
    assert commit is arrangement_commitment
    assert len(_base()) == 32


def test_the_same_rows_in_any_card_order_commit_alike() -> None:
    reordered = Arrangement.parse("Ad 2s 2h", "3d 9s 7c 5h 7d", "Ac Kc Qc Jc Tc")
    assert commit(TABLE, 5, 1, reordered, NONCE) == _base()
    assert commit(TABLE, 5, 1, ARRANGEMENT.canonical(), NONCE) == _base()


@pytest.mark.parametrize(
    "changed",
    [
        Arrangement.parse("2s 2h Ac", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ad"),  # swap across rows
        Arrangement.parse("2s 2h 7c", "Ad 7d 9s 5h 3d", "Tc Jc Qc Kc Ac"),  # front <-> middle
        Arrangement.parse("2s 2h Ad", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc As"),  # another card
        Arrangement.parse("2s 2h Ad 3d", "7c 7d 9s 5h", "Tc Jc Qc Kc Ac"),  # row boundary moved
        Arrangement.parse("2s 2h", "Ad 7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ac"),
    ],
)
def test_any_change_to_any_row_changes_the_commitment(changed: Arrangement) -> None:
    assert commit(TABLE, 5, 1, changed, NONCE) != _base()


def test_the_nonce_seat_deal_and_table_are_bound() -> None:
    base = _base()
    for bit in range(len(NONCE) * 8):
        nonce = bytearray(NONCE)
        nonce[bit // 8] ^= 1 << (bit % 8)
        assert commit(TABLE, 5, 1, ARRANGEMENT, bytes(nonce)) != base
    assert commit(TABLE, 5, 1, ARRANGEMENT, NONCE + b"\x00") != base
    assert commit(TABLE, 5, 2, ARRANGEMENT, NONCE) != base
    assert commit(TABLE, 6, 1, ARRANGEMENT, NONCE) != base
    assert commit(uuid.UUID(int=0), 5, 1, ARRANGEMENT, NONCE) != base


@pytest.mark.parametrize("length", [0, 1, MIN_NONCE_BYTES - 1, MAX_NONCE_BYTES + 1])
def test_a_nonce_of_the_wrong_length_is_refused(length: int) -> None:
    with pytest.raises(FairnessError, match=f"nonce must be 16 to 64 bytes, got {length}"):
        commit(TABLE, 5, 1, ARRANGEMENT, bytes(length))
    with pytest.raises(FairnessError, match="nonce must be 16 to 64 bytes"):
        check_reveal(_base(), TABLE, 5, 1, ARRANGEMENT, bytes(length))


@pytest.mark.parametrize("length", [MIN_NONCE_BYTES, 32, MAX_NONCE_BYTES])
def test_nonces_of_16_to_64_bytes_are_accepted(length: int) -> None:
    nonce = bytes(range(length))
    commitment = commit(TABLE, 5, 1, ARRANGEMENT, nonce)
    assert check_reveal(commitment, TABLE, 5, 1, ARRANGEMENT, nonce)


def test_check_reveal_accepts_the_committed_arrangement_in_any_order() -> None:
    reordered = Arrangement.parse("2h Ad 2s", "7d 7c 3d 5h 9s", "Kc Ac Qc Tc Jc")
    assert check_reveal(_base(), TABLE, 5, 1, reordered, NONCE)


def test_check_reveal_refuses_another_arrangement_nonce_or_seat() -> None:
    other = Arrangement.parse("2s 2h Ac", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ad")
    assert not check_reveal(_base(), TABLE, 5, 1, other, NONCE)
    assert not check_reveal(_base(), TABLE, 5, 1, ARRANGEMENT, bytes(16))
    assert not check_reveal(_base(), TABLE, 5, 0, ARRANGEMENT, NONCE)


def test_check_reveal_refuses_a_malformed_commitment() -> None:
    with pytest.raises(FairnessError, match="a commitment is 32 bytes"):
        check_reveal(_base()[:31], TABLE, 5, 1, ARRANGEMENT, NONCE)


@pytest.mark.parametrize("seat", [-1, 4])
def test_a_seat_outside_0_to_3_is_refused(seat: int) -> None:
    with pytest.raises(FairnessError, match=f"seat {seat} is outside 0..3"):
        commit(TABLE, 5, seat, ARRANGEMENT, NONCE)


class _TableId(uuid.UUID):
    """A UUID subclass: the commitment reads it through the named checks, not the one step."""


class _Nonce(bytes):
    """A bytes subclass: the same, for the nonce."""


@pytest.mark.parametrize("scheme", [1, 2])
@pytest.mark.parametrize("seat", [0, 3])
def test_the_one_step_encoding_is_the_named_checks_encoding(scheme: int, seat: int) -> None:
    # Plain values take the one-step encoding; a UUID and a bytes subclass the
    # named checks: the same bytes (docs/fairness.md's vectors pin the named path's).
    for deal_number, nonce in ((1, NONCE), (2**64 - 1, bytes(range(64)))):
        plain = commit(TABLE, deal_number, seat, ARRANGEMENT, nonce, scheme=scheme, player_id="p")
        named = commit(
            _TableId(str(TABLE)),
            deal_number,
            seat,
            ARRANGEMENT,
            _Nonce(nonce),
            scheme=scheme,
            player_id="p",
        )
        assert plain == named


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ((0, 1, 52), "the front row holds 52"),
        ((0, 1, -1), "the front row holds something"),
        ((0, 1, "a"), "the front row holds something"),
    ],
)
def test_rows_beyond_the_deck_are_refused_by_name(rows: tuple[object, ...], message: str) -> None:
    class Rows:
        front = rows
        middle = (3, 4, 5, 6, 7)
        back = (8, 9, 10, 11, 12)

    with pytest.raises(FairnessError, match=message):
        commit(TABLE, 5, 1, Rows(), NONCE)  # type: ignore[arg-type]

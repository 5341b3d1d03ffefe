"""Players' Ed25519 keys: what a player signs, byte for byte (docs/fairness.md §19).

A player may register an Ed25519 public key (RFC 8032, 32 bytes) and sign its commitments,
reveals and announcements with it; the server verifies each signature and records it, with the
key, in the event, so that anyone can check from the log alone that the player bound to a seat
made the seat's moves.
Every signed message starts with its own domain tag, so a signature made for one purpose can
never stand for another:

::

    registration = lp("sapsam/player-key/v1/registration") || lp(utf8(player_id)) || lp(public_key)
    commit = lp("sapsam/player-signature/v1/commit") || uuid(table_id) || u64(deal) || u8(seat)
             || lp(utf8(player_id)) || u8(scheme) || lp(commitment)
    reveal = lp("sapsam/player-signature/v1/reveal") || uuid(table_id) || u64(deal) || u8(seat)
             || lp(utf8(player_id)) || lp(sorted front) || lp(sorted middle) || lp(sorted back)
             || lp(nonce)
    announce = lp("sapsam/player-signature/v1/announce") || uuid(table_id) || u64(deal) || u8(seat)
               || lp(utf8(player_id)) || u8(surrender)
    place = lp("sapsam/player-signature/v1/place") || uuid(table_id) || u64(deal) || u8(seat)
            || lp(utf8(player_id)) || u8(street) || lp(sorted front) || lp(sorted middle)
            || lp(sorted back) || lp(discard_commitment, empty when none)
    fantasyland-commit, fantasyland-reveal: commit and reveal with their own tags

Pure: no I/O. ``cryptography`` is imported when a signature is verified, not before, so that a
verifier that meets no signature does not pay for loading it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Final

from sapsam.fairness.commitments import COMMITMENT_BYTES, Rows, encode_rows, require_scheme
from sapsam.fairness.encoding import (
    MAX_SEATS,
    FairnessError,
    length_prefixed,
    require_cards,
    require_deal_number,
    require_nonce,
    require_player_id,
    require_seat,
    require_table_id,
    u8,
)

PUBLIC_KEY_BYTES: Final = 32
SIGNATURE_BYTES: Final = 64
MAX_KEYS_PER_PLAYER: Final = 8
"""Keys a player may register (rotation adds one; none is ever removed, so old signatures stay
verifiable)."""

TAG_KEY_REGISTRATION: Final = b"sapsam/player-key/v1/registration"
TAG_COMMIT_SIGNATURE: Final = b"sapsam/player-signature/v1/commit"
TAG_REVEAL_SIGNATURE: Final = b"sapsam/player-signature/v1/reveal"
TAG_ANNOUNCE_SIGNATURE: Final = b"sapsam/player-signature/v1/announce"
TAG_PLACE_SIGNATURE: Final = b"sapsam/player-signature/v1/place"
TAG_FANTASYLAND_COMMIT_SIGNATURE: Final = b"sapsam/player-signature/v1/fantasyland-commit"
TAG_FANTASYLAND_REVEAL_SIGNATURE: Final = b"sapsam/player-signature/v1/fantasyland-reveal"
TAG_DISCARDS_REVEAL_SIGNATURE: Final = b"sapsam/player-signature/v1/discards-reveal"


def require_public_key(public_key: bytes) -> bytes:
    """An Ed25519 public key: exactly 32 bytes."""
    if not isinstance(public_key, bytes | bytearray) or len(public_key) != PUBLIC_KEY_BYTES:
        raise FairnessError(f"a player key is {PUBLIC_KEY_BYTES} bytes (an Ed25519 public key)")
    return bytes(public_key)


def registration_message(player_id: str, public_key: bytes) -> bytes:
    """What a player signs with a new key to register it (proof that it holds the key)."""
    return (
        length_prefixed(TAG_KEY_REGISTRATION)
        + length_prefixed(require_player_id(player_id))
        + length_prefixed(require_public_key(public_key))
    )


def commit_message(
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    player_id: str,
    scheme: int,
    commitment: bytes,
    *,
    tag: bytes = TAG_COMMIT_SIGNATURE,
) -> bytes:
    """What a player signs to commit: the commitment, where, by whom and under which scheme
    (``tag``: :data:`TAG_FANTASYLAND_COMMIT_SIGNATURE` for an open-face Fantasyland hand)."""
    if not isinstance(commitment, bytes | bytearray) or len(commitment) != COMMITMENT_BYTES:
        raise FairnessError(f"a commitment is {COMMITMENT_BYTES} bytes")
    return (
        length_prefixed(tag)
        + require_table_id(table_id)
        + require_deal_number(deal_number)
        + u8(require_seat(seat, MAX_SEATS))
        + length_prefixed(require_player_id(player_id))
        + u8(require_scheme(scheme))
        + length_prefixed(bytes(commitment))
    )


def reveal_message(
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    player_id: str,
    arrangement: Rows,
    nonce: bytes,
    *,
    tag: bytes = TAG_REVEAL_SIGNATURE,
) -> bytes:
    """What a player signs to reveal: the rows (each in ascending card order) and the nonce
    (``tag``: :data:`TAG_FANTASYLAND_REVEAL_SIGNATURE` to open a Fantasyland hand)."""
    return (
        length_prefixed(tag)
        + require_table_id(table_id)
        + require_deal_number(deal_number)
        + u8(require_seat(seat, MAX_SEATS))
        + length_prefixed(require_player_id(player_id))
        + encode_rows(arrangement)
        + length_prefixed(require_nonce(nonce))
    )


def announce_message(
    table_id: uuid.UUID, deal_number: int, seat: int, player_id: str, surrender: bool
) -> bytes:
    """What a player signs to announce play (``surrender`` false: the byte 00) or surrender (01)
    on its turn (docs/fairness.md §19, §20)."""
    if not isinstance(surrender, bool):
        raise FairnessError(f"an announcement is play or surrender, got {surrender!r}")
    return (
        length_prefixed(TAG_ANNOUNCE_SIGNATURE)
        + require_table_id(table_id)
        + require_deal_number(deal_number)
        + u8(require_seat(seat, MAX_SEATS))
        + length_prefixed(require_player_id(player_id))
        + u8(int(surrender))
    )


def place_message(
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    player_id: str,
    street: int,
    placement: Rows,
    discard_commitment: bytes | None = None,
) -> bytes:
    """What a player signs to place its cards of ``street`` face up (open face): what each row
    gains (ascending card order) and, on a street that discards, the commitment to the discard
    (docs/fairness.md §19, §23; empty when none)."""
    if isinstance(street, bool) or not isinstance(street, int) or not 0 <= street <= 255:
        raise FairnessError(f"a street is 0 to 255, got {street!r}")
    commitment = b"" if discard_commitment is None else bytes(discard_commitment)
    if discard_commitment is not None and len(commitment) != COMMITMENT_BYTES:
        raise FairnessError(f"a discard commitment is {COMMITMENT_BYTES} bytes")
    return (
        length_prefixed(TAG_PLACE_SIGNATURE)
        + require_table_id(table_id)
        + require_deal_number(deal_number)
        + u8(require_seat(seat, MAX_SEATS))
        + length_prefixed(require_player_id(player_id))
        + u8(street)
        + encode_rows(placement)
        + length_prefixed(commitment)
    )


def discards_reveal_message(
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    player_id: str,
    openings: Sequence[tuple[int, Sequence[int], bytes]],
) -> bytes:
    """What a player signs to open its Pineapple discards (docs/fairness.md §19, §23): the
    number of openings, then for each, in street order, its street, its cards (ascending) and
    its nonce: ``(street, card indexes, nonce)``."""
    if not 1 <= len(openings) <= 255:
        raise FairnessError(f"1 to 255 openings, got {len(openings)}")
    body = b""
    for street, cards, nonce in openings:
        if isinstance(street, bool) or not isinstance(street, int) or not 0 <= street <= 255:
            raise FairnessError(f"a street is 0 to 255, got {street!r}")
        encoded = require_cards(cards, "the discarded cards")
        body += (
            u8(street)
            + length_prefixed(bytes(sorted(encoded)))
            + length_prefixed(require_nonce(nonce))
        )
    return (
        length_prefixed(TAG_DISCARDS_REVEAL_SIGNATURE)
        + require_table_id(table_id)
        + require_deal_number(deal_number)
        + u8(require_seat(seat, MAX_SEATS))
        + length_prefixed(require_player_id(player_id))
        + u8(len(openings))
        + body
    )


def signature_holds(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is ``public_key``'s Ed25519 signature of ``message`` (RFC 8032).

    A key or signature of the wrong size, or a key that is no curve point, is simply False."""
    if len(public_key) != PUBLIC_KEY_BYTES or len(signature) != SIGNATURE_BYTES:
        return False
    # libsodium first, OpenSSL for what it refuses: the same answers, twice as fast for a
    # signature that holds (sapsam.fairness.ed25519).
    from sapsam.fairness import ed25519

    return ed25519.holds(bytes(public_key), bytes(signature), bytes(message))

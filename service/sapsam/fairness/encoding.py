"""Byte encodings shared by every fairness construction (docs/fairness.md §2).

Every hash input is a concatenation of fields, each written in exactly one way:

* fixed-width unsigned integers, big-endian (``u8``, ``u32``, ``u64``);
* the table id as its 16 RFC 4122 bytes (``uuid.UUID.bytes``);
* every byte string of variable or caller-chosen length (domain tags, seeds, contributions,
  nonces, rows of cards) as ``u32`` length followed by the bytes, so no two different field
  lists can encode to the same bytes.

Domain tags name the construction and carry the version (``sapsam/fairness/v1/...``), so a hash
made for one purpose can never be replayed as another, and a future v2 cannot collide with v1.
"""

from __future__ import annotations

import hashlib
import importlib
import uuid
from collections.abc import Callable, Iterable
from typing import Final, Protocol

VERSION: Final = 1
TAG_PREFIX: Final = b"sapsam/fairness/v1/"

SEED_BYTES: Final = 32
MIN_NONCE_BYTES: Final = 16
MAX_NONCE_BYTES: Final = 64
MIN_CONTRIBUTION_BYTES: Final = 1
MAX_CONTRIBUTION_BYTES: Final = 64
MIN_SEATS: Final = 2
MAX_SEATS: Final = 4
DECK_SIZE: Final = 52
HAND_SIZE: Final = 13
MAX_DEAL_NUMBER: Final = 2**64 - 1

TAG_SEED_COMMITMENT: Final = TAG_PREFIX + b"seed-commitment"
TAG_SHUFFLE_KEY: Final = TAG_PREFIX + b"shuffle-key"
TAG_LOT_COMMITMENT: Final = TAG_PREFIX + b"lot-commitment"
TAG_LOT_KEY: Final = TAG_PREFIX + b"lot-key"
TAG_RECORD_KEY: Final = TAG_PREFIX + b"record-key"
TAG_DECK_RECORD: Final = TAG_PREFIX + b"deck"
TAG_CUT_DECK_RECORD: Final = TAG_PREFIX + b"cut-deck"
TAG_HAND_RECORD: Final = TAG_PREFIX + b"hand"
TAG_ARRANGEMENT_COMMITMENT: Final = TAG_PREFIX + b"arrangement-commitment"
# Commitment scheme 2 (docs/fairness.md §12.1): the same construction, the player id added.
TAG_ARRANGEMENT_COMMITMENT_V2: Final = b"sapsam/fairness/v2/arrangement-commitment"
COMMITMENT_SCHEMES: Final = (1, 2)
MAX_PLAYER_ID_BYTES: Final = 128


class FairnessError(ValueError):
    """An input to a fairness construction is out of range or malformed.

    The message names the input, its value and what is allowed, so it can be shown as it is.
    """


def u8(value: int) -> bytes:
    """One byte."""
    return value.to_bytes(1, "big")


def u32(value: int) -> bytes:
    """Four bytes, big-endian."""
    return value.to_bytes(4, "big")


def u64(value: int) -> bytes:
    """Eight bytes, big-endian."""
    return value.to_bytes(8, "big")


# HMAC-SHA256 (RFC 2104): the key, padded to SHA-256's 64-byte block, XORed with these bytes.
_SHA256_BLOCK: Final = 64
_INNER_PAD: Final = bytes(byte ^ 0x36 for byte in range(256))
_OUTER_PAD: Final = bytes(byte ^ 0x5C for byte in range(256))


class _HashState(Protocol):
    def copy(self) -> _HashState: ...

    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...


def _copyable_sha256() -> Callable[[bytes], _HashState]:
    """CPython's own SHA-256 (``_sha2`` from 3.12, ``_sha256`` before), else hashlib's.

    The same digests (SHA-256 is SHA-256); what differs is the cost of ``copy``: an OpenSSL 3
    hash object's copy allocates and duplicates an EVP context (about as long as hashing a few
    blocks), CPython's copies a small struct. An HMAC of a short message is two copies and two
    blocks, so keyed once, :func:`keyed_hmac_sha256` copies the built-in states.
    """
    for name in ("_sha2", "_sha256"):
        try:
            module = importlib.import_module(name)
        except ImportError:  # pragma: no cover - a Python built without its own hashes
            continue
        built_in: Callable[[bytes], _HashState] = module.sha256
        return built_in
    return hashlib.sha256  # pragma: no cover


_COPYABLE_SHA256: Final = _copyable_sha256()


def keyed_hmac_sha256(key: bytes) -> Callable[[bytes], bytes]:
    """``message -> hmac.digest(key, message, "sha256")``, the same values, for one key used on
    several messages (a stream's blocks, a deal record's digests).

    The key's inner and outer SHA-256 states are computed once and copied per message, instead of
    keying a new HMAC for each one as ``hmac.digest`` does.
    """
    if len(key) > _SHA256_BLOCK:
        key = hashlib.sha256(key).digest()
    padded = bytes(key).ljust(_SHA256_BLOCK, b"\0")
    inner = _COPYABLE_SHA256(padded.translate(_INNER_PAD))
    outer = _COPYABLE_SHA256(padded.translate(_OUTER_PAD))

    def mac(message: bytes) -> bytes:
        inner_copy = inner.copy()
        inner_copy.update(message)
        outer_copy = outer.copy()
        outer_copy.update(inner_copy.digest())
        return outer_copy.digest()

    return mac


def length_prefixed(data: bytes) -> bytes:
    """``u32(len(data)) || data``."""
    return len(data).to_bytes(4, "big") + data


def card_bytes(cards: Iterable[int]) -> bytes:
    """One byte per card: its index ``0 .. 51`` (rank * 4 + suit), in the order given."""
    return bytes(cards)


def require_table_id(table_id: uuid.UUID) -> bytes:
    """The table id's 16 bytes; refuses anything that is not a ``uuid.UUID``."""
    if not isinstance(table_id, uuid.UUID):
        raise FairnessError(f"table id must be a UUID, not {type(table_id).__name__}")
    return table_id.bytes


def require_deal_number(deal_number: int) -> bytes:
    """The deal number as ``u64``; it must be an integer ``0 .. 2**64 - 1``."""
    if isinstance(deal_number, bool) or not isinstance(deal_number, int):
        raise FairnessError(f"deal number must be an integer, not {deal_number!r}")
    if not 0 <= deal_number <= MAX_DEAL_NUMBER:
        raise FairnessError(f"deal number {deal_number} is outside 0..2**64-1")
    return u64(deal_number)


_SEED_LENGTH: Final = SEED_BYTES.to_bytes(4, "big")


def deal_seed_fields(table_id: uuid.UUID, deal_number: int, seed: bytes) -> bytes:
    """``table_id || u64(deal_number) || lp(seed)``, each checked (``require_table_id``,
    ``require_deal_number``, ``require_seed``): what the seed commitment, the record key and the
    shuffle key hash after their tags."""
    # Plain values (a UUID, an int in range, 32 bytes) are encoded without the checks' calls;
    # anything else goes through them, which refuse it as before.
    if (
        type(table_id) is uuid.UUID
        and type(deal_number) is int
        and 0 <= deal_number <= MAX_DEAL_NUMBER
        and type(seed) is bytes
        and len(seed) == SEED_BYTES
    ):
        return table_id.bytes + deal_number.to_bytes(8, "big") + _SEED_LENGTH + seed
    return (
        require_table_id(table_id)
        + require_deal_number(deal_number)
        + length_prefixed(require_seed(seed))
    )


def require_seed(seed: bytes, what: str = "seed") -> bytes:
    """A seed must be exactly 32 bytes."""
    if not isinstance(seed, bytes | bytearray):
        raise FairnessError(f"{what} must be bytes, not {type(seed).__name__}")
    if len(seed) != SEED_BYTES:
        raise FairnessError(f"{what} must be {SEED_BYTES} bytes, got {len(seed)}")
    return bytes(seed)


def require_seat_count(seat_count: int) -> int:
    """A table has 2 to 4 seats."""
    if isinstance(seat_count, bool) or not isinstance(seat_count, int):
        raise FairnessError(f"seat count must be an integer, not {seat_count!r}")
    if not MIN_SEATS <= seat_count <= MAX_SEATS:
        raise FairnessError(
            f"seat count {seat_count} is not supported: a deal has {MIN_SEATS} to {MAX_SEATS} seats"
        )
    return seat_count


def require_seat(seat: int, seat_count: int, what: str = "seat") -> int:
    """A seat number is ``0 .. seat_count - 1``."""
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise FairnessError(f"{what} must be an integer, not {seat!r}")
    if not 0 <= seat < seat_count:
        raise FairnessError(f"{what} {seat} is outside 0..{seat_count - 1}")
    return seat


def require_nonce(nonce: bytes) -> bytes:
    """An arrangement nonce is 16 to 64 bytes, chosen by the client."""
    if not isinstance(nonce, bytes | bytearray):
        raise FairnessError(f"nonce must be bytes, not {type(nonce).__name__}")
    if not MIN_NONCE_BYTES <= len(nonce) <= MAX_NONCE_BYTES:
        raise FairnessError(
            f"nonce must be {MIN_NONCE_BYTES} to {MAX_NONCE_BYTES} bytes, got {len(nonce)}"
        )
    return bytes(nonce)


def require_player_id(player_id: str) -> bytes:
    """A player id as its UTF-8 bytes: 1 to 128 of them."""
    if not isinstance(player_id, str):
        raise FairnessError(f"a player id must be a string, not {type(player_id).__name__}")
    try:
        encoded = player_id.encode("utf-8", "strict")
    except UnicodeEncodeError:
        raise FairnessError("a player id must be valid Unicode text") from None
    if not 1 <= len(encoded) <= MAX_PLAYER_ID_BYTES:
        raise FairnessError(
            f"a player id must be 1 to {MAX_PLAYER_ID_BYTES} UTF-8 bytes, got {len(encoded)}"
        )
    return encoded


def require_contribution(contribution: bytes | None, seat: int) -> bytes | None:
    """A seat's entropy is ``None`` (nothing contributed) or 1 to 64 bytes."""
    if contribution is None:
        return None
    if not isinstance(contribution, bytes | bytearray):
        raise FairnessError(
            f"contribution of seat {seat} must be bytes or None, not {type(contribution).__name__}"
        )
    if not MIN_CONTRIBUTION_BYTES <= len(contribution) <= MAX_CONTRIBUTION_BYTES:
        raise FairnessError(
            f"contribution of seat {seat} must be {MIN_CONTRIBUTION_BYTES} to "
            f"{MAX_CONTRIBUTION_BYTES} bytes (None means no contribution), "
            f"got {len(contribution)}"
        )
    return bytes(contribution)


def require_cards(cards: Iterable[int], what: str) -> bytes:
    """Card indices, each ``0 .. 51``, as one byte per card in the order given."""
    try:
        encoded = bytes(cards)
    except (TypeError, ValueError):
        raise FairnessError(f"{what} holds something that is not a card index 0..51") from None
    if encoded and max(encoded) >= DECK_SIZE:
        raise FairnessError(f"{what} holds {max(encoded)}, which is not a card index 0..51")
    return encoded

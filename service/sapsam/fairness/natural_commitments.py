"""Natural declarations: the commitment every seat makes before it commits its arrangement, and
the message a player signs to make it (docs/fairness.md §21).

    declaration_commitment = SHA-256( lp("sapsam/fairness/v1/natural-declaration")
                                      || uuid(table_id) || u64(deal_number) || u8(seat)
                                      || lp(utf8(player_id)) || lp(utf8(declaration))
                                      || lp(nonce) )

``declaration`` is ``none`` or a natural's name (``sapsam.rules.naturals.Natural``); the nonce is
16 to 64 bytes from the client's CSPRNG, without which the dozen possible declarations could be
tried one by one. Like commitment scheme 2 (§12.1) it binds the player seated, and like every
construction here it has its own tag, so no message of another is one of these.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from typing import Final

from sapsam.fairness.commitments import COMMITMENT_BYTES
from sapsam.fairness.encoding import (
    MAX_SEATS,
    TAG_PREFIX,
    FairnessError,
    length_prefixed,
    require_deal_number,
    require_nonce,
    require_player_id,
    require_seat,
    require_table_id,
    u8,
)

TAG_NATURAL_DECLARATION: Final = TAG_PREFIX + b"natural-declaration"
TAG_DECLARE_SIGNATURE: Final = b"sapsam/player-signature/v1/declare"
MAX_DECLARATION_BYTES: Final = 32
"""The longest declaration name (the names are ASCII, ``supreme_dragon`` the longest)."""

_TAG_PREFIX: Final = length_prefixed(TAG_NATURAL_DECLARATION)


def _declaration_bytes(declaration: str) -> bytes:
    if not isinstance(declaration, str):
        raise FairnessError(f"a declaration is a name, got {type(declaration).__name__}")
    encoded = declaration.encode("utf-8")
    if not 1 <= len(encoded) <= MAX_DECLARATION_BYTES:
        raise FairnessError(f"a declaration is 1 to {MAX_DECLARATION_BYTES} bytes")
    return encoded


def declaration_commitment(
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    player_id: str,
    declaration: str,
    nonce: bytes,
) -> bytes:
    """The 32-byte commitment to ``declaration`` a seat sends before its arrangement's."""
    return hashlib.sha256(
        _TAG_PREFIX
        + require_table_id(table_id)
        + require_deal_number(deal_number)
        + u8(require_seat(seat, MAX_SEATS))
        + length_prefixed(require_player_id(player_id))
        + length_prefixed(_declaration_bytes(declaration))
        + length_prefixed(require_nonce(nonce))
    ).digest()


def declaration_opens(
    commitment: bytes,
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    player_id: str,
    declaration: str,
    nonce: bytes,
) -> bool:
    """Whether ``declaration`` and ``nonce`` open the seat's declaration commitment (compared in
    constant time). Raises :class:`FairnessError` for a malformed input."""
    if not isinstance(commitment, bytes | bytearray) or len(commitment) != COMMITMENT_BYTES:
        raise FairnessError(f"a commitment is {COMMITMENT_BYTES} bytes")
    expected = declaration_commitment(table_id, deal_number, seat, player_id, declaration, nonce)
    return hmac.compare_digest(expected, bytes(commitment))


def declare_message(
    table_id: uuid.UUID, deal_number: int, seat: int, player_id: str, commitment: bytes
) -> bytes:
    """What a player signs to declare (docs/fairness.md §19, §21): the declaration commitment,
    where and by whom."""
    if not isinstance(commitment, bytes | bytearray) or len(commitment) != COMMITMENT_BYTES:
        raise FairnessError(f"a commitment is {COMMITMENT_BYTES} bytes")
    return (
        length_prefixed(TAG_DECLARE_SIGNATURE)
        + require_table_id(table_id)
        + require_deal_number(deal_number)
        + u8(require_seat(seat, MAX_SEATS))
        + length_prefixed(require_player_id(player_id))
        + length_prefixed(bytes(commitment))
    )

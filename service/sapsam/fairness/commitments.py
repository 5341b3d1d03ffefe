"""Arrangement commitments: a seat's hidden arrangement, bound by a hash until it is revealed.

::

    commitment = SHA-256(lp(tag) || table_id || u64(deal) || u8(seat)
                         || lp(front) || lp(middle) || lp(back) || lp(nonce))

where each row is its cards' index bytes in canonical (ascending) order, so the same rows written
in any card order commit to the same value, and the nonce (16 to 64 bytes, chosen by the client)
keeps the commitment from being guessed by trying the few arrangements of known cards.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Sequence
from typing import Final, Protocol

from sapsam.fairness.encoding import (
    MAX_SEATS,
    TAG_ARRANGEMENT_COMMITMENT,
    FairnessError,
    length_prefixed,
    require_cards,
    require_deal_number,
    require_nonce,
    require_seat,
    require_table_id,
    u8,
)

COMMITMENT_BYTES = 32


# Each tag's length-prefixed bytes, encoded once (they are the same on every call).
_TAG_ARRANGEMENT_COMMITMENT_PREFIX: Final = length_prefixed(TAG_ARRANGEMENT_COMMITMENT)


class Rows(Protocol):
    """Anything with three rows of card indices (``sapsam.rules.arrangement.Arrangement``)."""

    @property
    def front(self) -> Sequence[int]: ...

    @property
    def middle(self) -> Sequence[int]: ...

    @property
    def back(self) -> Sequence[int]: ...


def encode_rows(arrangement: Rows) -> bytes:
    """``lp(front) || lp(middle) || lp(back)``, each row's card bytes in ascending order."""
    front = require_cards(arrangement.front, "the front row")
    middle = require_cards(arrangement.middle, "the middle row")
    back = require_cards(arrangement.back, "the back row")
    return (
        length_prefixed(bytes(sorted(front)))
        + length_prefixed(bytes(sorted(middle)))
        + length_prefixed(bytes(sorted(back)))
    )


def arrangement_commitment(
    table_id: uuid.UUID, deal_number: int, seat: int, arrangement: Rows, nonce: bytes
) -> bytes:
    """The client's half: the 32-byte commitment it sends before confirming (``commit``)."""
    return hashlib.sha256(
        _TAG_ARRANGEMENT_COMMITMENT_PREFIX
        + require_table_id(table_id)
        + require_deal_number(deal_number)
        + u8(require_seat(seat, MAX_SEATS))
        + encode_rows(arrangement)
        + length_prefixed(require_nonce(nonce))
    ).digest()


commit = arrangement_commitment


def check_reveal(
    commitment: bytes,
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    arrangement: Rows,
    nonce: bytes,
) -> bool:
    """The server's half: whether a revealed arrangement and nonce match the seat's commitment.

    Raises :class:`FairnessError` for a malformed reveal (a short nonce, a bad seat or card) or a
    commitment that is not 32 bytes, so a caller can tell "malformed" from "does not match".
    """
    if not isinstance(commitment, bytes | bytearray) or len(commitment) != COMMITMENT_BYTES:
        raise FairnessError(f"a commitment is {COMMITMENT_BYTES} bytes")
    expected = arrangement_commitment(table_id, deal_number, seat, arrangement, nonce)
    return hmac.compare_digest(expected, bytes(commitment))

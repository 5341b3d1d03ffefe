"""Pineapple's discards: each hidden discard bound by a hash when it is made (docs/fairness.md §23).

::

    commitment = SHA-256(lp(tag) || table_id || u64(deal) || u8(seat) || lp(utf8(player_id))
                         || u8(street) || lp(discarded cards) || lp(nonce))

with ``tag = sapsam/fairness/v3/discard-commitment``, the discarded cards' index bytes in
ascending order, and a nonce of 16 to 64 bytes the client chooses (a discard is one of three
known cards: without the nonce it could be found by trying them). It is **commitment scheme 3**:
built as scheme 2's arrangement commitment (§12.1: bound to the table, the deal, the seat and the
player seated) with the street added, so a commitment made for one street cannot stand for
another's. The seat sends it with its placement (``CardsPlaced`` then ``DiscardCommitted``) and
opens it at the end of the deal (``DiscardsRevealed``): the card and the nonce.

Pure: no I/O, no randomness.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Sequence
from typing import Final

from sapsam.fairness.commitments import COMMITMENT_BYTES
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

__all__ = [
    "DISCARD_SCHEME",
    "TAG_DISCARD_COMMITMENT",
    "check_discard",
    "discard_commitment",
]

DISCARD_SCHEME: Final = 3
"""The commitment scheme of a discard (docs/fairness.md §23), recorded in the rules' docs only:
a discard has no other scheme."""
TAG_DISCARD_COMMITMENT: Final = b"sapsam/fairness/v3/discard-commitment"
_TAG_PREFIX: Final = length_prefixed(TAG_DISCARD_COMMITMENT)
MAX_STREET: Final = 12


def discard_commitment(
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    player_id: str,
    street: int,
    cards: Sequence[int],
    nonce: bytes,
) -> bytes:
    """The client's half: the 32-byte commitment to the cards it discards on ``street``."""
    if isinstance(street, bool) or not isinstance(street, int) or not 1 <= street <= MAX_STREET:
        raise FairnessError(f"a discarding street is 1 to {MAX_STREET}, got {street!r}")
    encoded = require_cards(cards, "the discarded cards")
    if not encoded or len(set(encoded)) != len(encoded):
        raise FairnessError("the discarded cards are one or more distinct cards")
    return hashlib.sha256(
        _TAG_PREFIX
        + require_table_id(table_id)
        + require_deal_number(deal_number)
        + u8(require_seat(seat, MAX_SEATS))
        + length_prefixed(require_player_id(player_id))
        + u8(street)
        + length_prefixed(bytes(sorted(encoded)))
        + length_prefixed(require_nonce(nonce))
    ).digest()


def check_discard(
    commitment: bytes,
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    player_id: str,
    street: int,
    cards: Sequence[int],
    nonce: bytes,
) -> bool:
    """The server's (and the verifier's) half: whether the opened discard matches.

    Raises :class:`FairnessError` for a malformed opening (a short nonce, a bad card or street)
    or a commitment that is not 32 bytes, so "malformed" is told from "does not match"."""
    if not isinstance(commitment, bytes | bytearray) or len(commitment) != COMMITMENT_BYTES:
        raise FairnessError(f"a commitment is {COMMITMENT_BYTES} bytes")
    expected = discard_commitment(table_id, deal_number, seat, player_id, street, cards, nonce)
    return hmac.compare_digest(expected, bytes(commitment))

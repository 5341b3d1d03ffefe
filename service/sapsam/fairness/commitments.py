"""Arrangement commitments: a seat's hidden arrangement, bound by a hash until it is revealed.

::

    commitment = SHA-256(lp(tag) || table_id || u64(deal) || u8(seat)
                         || lp(front) || lp(middle) || lp(back) || lp(nonce))

where each row is its cards' index bytes in canonical (ascending) order, so the same rows written
in any card order commit to the same value, and the nonce (16 to 64 bytes, chosen by the client)
keeps the commitment from being guessed by trying the few arrangements of known cards.

That is commitment **scheme 1**. **Scheme 2** (docs/fairness.md §12.1) binds the player too: its
own tag (``sapsam/fairness/v2/arrangement-commitment``) and ``lp(utf8(player_id))`` right after
the seat, so a commitment made by one player cannot stand for another player's at the same seat.
The scheme is recorded in the events (``ArrangementCommitted.scheme``), so a deal committed
under scheme 1 verifies under scheme 1 for good.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Sequence
from typing import Final, Protocol

from sapsam.fairness.encoding import (
    COMMITMENT_SCHEMES,
    DECK_SIZE,
    MAX_DEAL_NUMBER,
    MAX_NONCE_BYTES,
    MAX_SEATS,
    MIN_NONCE_BYTES,
    TAG_ARRANGEMENT_COMMITMENT,
    TAG_ARRANGEMENT_COMMITMENT_V2,
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

COMMITMENT_BYTES = 32


# Each tag's length-prefixed bytes, encoded once (they are the same on every call).
_TAG_ARRANGEMENT_COMMITMENT_PREFIX: Final = length_prefixed(TAG_ARRANGEMENT_COMMITMENT)
_TAG_ARRANGEMENT_COMMITMENT_V2_PREFIX: Final = length_prefixed(TAG_ARRANGEMENT_COMMITMENT_V2)


class Rows(Protocol):
    """Anything with three rows of card indices (``sapsam.rules.arrangement.Arrangement``)."""

    @property
    def front(self) -> Sequence[int]: ...

    @property
    def middle(self) -> Sequence[int]: ...

    @property
    def back(self) -> Sequence[int]: ...


# The u32 length of every row size up to a deck's, encoded once.
_ROW_LENGTHS: Final = tuple(size.to_bytes(4, "big") for size in range(DECK_SIZE + 1))


def encode_rows(arrangement: Rows) -> bytes:
    """``lp(front) || lp(middle) || lp(back)``, each row's card bytes in ascending order."""
    front, middle, back = arrangement.front, arrangement.middle, arrangement.back
    # Rows held as tuples (an Arrangement's) are read as one: a single bytes() and max() instead
    # of three require_cards (every commitment made or checked encodes its rows). Anything else,
    # or a value require_cards would refuse, takes the row-by-row checks and their errors.
    if type(front) is tuple and type(middle) is tuple and type(back) is tuple:
        split, end = len(front), len(front) + len(middle)
        try:
            cards: bytes | None = bytes(front + middle + back)
        except (TypeError, ValueError):
            cards = None
        if cards is not None and len(cards) <= DECK_SIZE and (not cards or max(cards) < DECK_SIZE):
            return b"".join(
                (
                    _ROW_LENGTHS[split],
                    bytes(sorted(cards[:split])),
                    _ROW_LENGTHS[end - split],
                    bytes(sorted(cards[split:end])),
                    _ROW_LENGTHS[len(cards) - end],
                    bytes(sorted(cards[end:])),
                )
            )
    return _encode_checked_rows(front, middle, back)


def _encode_checked_rows(front: Sequence[int], middle: Sequence[int], back: Sequence[int]) -> bytes:
    """:func:`encode_rows` for any rows: each row checked by ``require_cards`` in turn."""
    front_bytes = require_cards(front, "the front row")
    middle_bytes = require_cards(middle, "the middle row")
    back_bytes = require_cards(back, "the back row")
    return b"".join(
        (
            len(front_bytes).to_bytes(4, "big"),
            bytes(sorted(front_bytes)),
            len(middle_bytes).to_bytes(4, "big"),
            bytes(sorted(middle_bytes)),
            len(back_bytes).to_bytes(4, "big"),
            bytes(sorted(back_bytes)),
        )
    )


def require_scheme(scheme: int) -> int:
    """A commitment scheme this code knows (1 or 2)."""
    if isinstance(scheme, bool) or scheme not in COMMITMENT_SCHEMES:
        raise FairnessError(f"commitment scheme must be 1 or 2, got {scheme!r}")
    return scheme


def arrangement_commitment(
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    arrangement: Rows,
    nonce: bytes,
    *,
    scheme: int = 1,
    player_id: str | None = None,
) -> bytes:
    """The client's half: the 32-byte commitment it sends before confirming (``commit``).

    Scheme 2 needs the seat's ``player_id``; scheme 1 ignores it."""
    scheme = require_scheme(scheme)
    if scheme == 2 and player_id is None:
        raise FairnessError("commitment scheme 2 binds the player id: it is needed")
    # Values as the checks take them (a UUID, not a subclass; plain ints and bytes in range)
    # are encoded without them; anything else through them, which refuse what is out of range.
    plain = (
        type(table_id) is uuid.UUID
        and type(deal_number) is int
        and 0 <= deal_number <= MAX_DEAL_NUMBER
        and type(seat) is int
        and 0 <= seat < MAX_SEATS
        and type(nonce) is bytes
        and MIN_NONCE_BYTES <= len(nonce) <= MAX_NONCE_BYTES
    )
    if plain:
        table = table_id.bytes
        deal = deal_number.to_bytes(8, "big")
        seat_byte = seat.to_bytes(1, "big")
    else:
        table = require_table_id(table_id)
        deal = require_deal_number(deal_number)
        seat_byte = u8(require_seat(seat, MAX_SEATS))
    if scheme == 1:
        prefix, player = _TAG_ARRANGEMENT_COMMITMENT_PREFIX, b""
    else:
        assert player_id is not None  # refused above
        prefix = _TAG_ARRANGEMENT_COMMITMENT_V2_PREFIX
        player = length_prefixed(require_player_id(player_id))
    rows = encode_rows(arrangement)
    nonce_part = (
        len(nonce).to_bytes(4, "big") + nonce if plain else length_prefixed(require_nonce(nonce))
    )
    encoded = b"".join((prefix, table, deal, seat_byte, player, rows, nonce_part))
    return hashlib.sha256(encoded).digest()


commit = arrangement_commitment


def check_reveal(
    commitment: bytes,
    table_id: uuid.UUID,
    deal_number: int,
    seat: int,
    arrangement: Rows,
    nonce: bytes,
    *,
    scheme: int = 1,
    player_id: str | None = None,
) -> bool:
    """The server's half: whether a revealed arrangement and nonce match the seat's commitment.

    Raises :class:`FairnessError` for a malformed reveal (a short nonce, a bad seat or card) or a
    commitment that is not 32 bytes, so a caller can tell "malformed" from "does not match".
    """
    if not isinstance(commitment, bytes | bytearray) or len(commitment) != COMMITMENT_BYTES:
        raise FairnessError(f"a commitment is {COMMITMENT_BYTES} bytes")
    expected = arrangement_commitment(
        table_id, deal_number, seat, arrangement, nonce, scheme=scheme, player_id=player_id
    )
    return hmac.compare_digest(expected, bytes(commitment))

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


def encode_rows(arrangement: Rows) -> bytes:
    """``lp(front) || lp(middle) || lp(back)``, each row's card bytes in ascending order."""
    # Rows of card indices 0..51 (every commitment made or checked) are encoded in one step;
    # anything else takes the named checks below, which refuse it.
    try:
        front_bytes = bytes(arrangement.front)
        middle_bytes = bytes(arrangement.middle)
        back_bytes = bytes(arrangement.back)
    except (TypeError, ValueError):
        pass
    else:
        if max(front_bytes + middle_bytes + back_bytes, default=0) < DECK_SIZE:
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
    front = require_cards(arrangement.front, "the front row")
    middle = require_cards(arrangement.middle, "the middle row")
    back = require_cards(arrangement.back, "the back row")
    return (
        length_prefixed(bytes(sorted(front)))
        + length_prefixed(bytes(sorted(middle)))
        + length_prefixed(bytes(sorted(back)))
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
    if (
        type(scheme) is int
        and type(table_id) is uuid.UUID
        and type(deal_number) is int
        and 0 <= deal_number <= MAX_DEAL_NUMBER
        and type(seat) is int
        and 0 <= seat < MAX_SEATS
        and type(nonce) is bytes
        and MIN_NONCE_BYTES <= len(nonce) <= MAX_NONCE_BYTES
    ):
        # Every value as the checks below take it (a UUID, not a subclass; plain ints and
        # bytes in range): the same bytes in one step, only the rows and the player id checked.
        if scheme == 1:
            return hashlib.sha256(
                b"".join(
                    (
                        _TAG_ARRANGEMENT_COMMITMENT_PREFIX,
                        table_id.bytes,
                        deal_number.to_bytes(8, "big"),
                        seat.to_bytes(1, "big"),
                        encode_rows(arrangement),
                        len(nonce).to_bytes(4, "big"),
                        nonce,
                    )
                )
            ).digest()
        if scheme == 2 and player_id is not None:
            player = require_player_id(player_id)
            return hashlib.sha256(
                b"".join(
                    (
                        _TAG_ARRANGEMENT_COMMITMENT_V2_PREFIX,
                        table_id.bytes,
                        deal_number.to_bytes(8, "big"),
                        seat.to_bytes(1, "big"),
                        len(player).to_bytes(4, "big"),
                        player,
                        encode_rows(arrangement),
                        len(nonce).to_bytes(4, "big"),
                        nonce,
                    )
                )
            ).digest()
    if require_scheme(scheme) == 1:
        return hashlib.sha256(
            _TAG_ARRANGEMENT_COMMITMENT_PREFIX
            + require_table_id(table_id)
            + require_deal_number(deal_number)
            + u8(require_seat(seat, MAX_SEATS))
            + encode_rows(arrangement)
            + length_prefixed(require_nonce(nonce))
        ).digest()
    if player_id is None:
        raise FairnessError("commitment scheme 2 binds the player id: it is needed")
    return hashlib.sha256(
        _TAG_ARRANGEMENT_COMMITMENT_V2_PREFIX
        + require_table_id(table_id)
        + require_deal_number(deal_number)
        + u8(require_seat(seat, MAX_SEATS))
        + length_prefixed(require_player_id(player_id))
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

"""The decisions every family's table makes alike: seating, the dealer's lot, entropy, the cut.

A table's frame is the same whatever game it plays (docs/architecture.md, "Game families"): its
seats, the dealer drawn by lot from the seed committed at creation, each deal's entropy and the
cut by the seat on the dealer's right. Each family checks its own phase and finds its own deal;
these functions decide the rest from plain values, so the refusals and the events are one and
the same at every table.
"""

from __future__ import annotations

import uuid

from sapsam import fairness
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import (
    DealerChosen,
    DeckCut,
    EntropyContributed,
    Event,
    PlayerSeated,
)

LAST_CUT_POSITION = 51
"""A cut lifts 1 to 51 cards off a 52-card deck."""


def require_seat_count(minimum: int, maximum: int, rule_set_name: str, seat_count: int) -> None:
    """A new table's seat count within its rule set's range."""
    if not minimum <= seat_count <= maximum:
        raise DomainError(
            Reason.BAD_SEAT_COUNT,
            f"seat count must be {minimum} to {maximum} under rule set {rule_set_name!r}, "
            f"not {seat_count}",
            field="seat_count",
        )


def require_seat_index(seat: int, seat_count: int) -> None:
    """A seat number the table has (0 to ``seat_count`` - 1)."""
    if not 0 <= seat < seat_count:
        raise DomainError(
            Reason.UNKNOWN_SEAT,
            f"seat must be 0 to {seat_count - 1}, not {seat}",
            field="seat",
        )


def require_hash_size(value: bytes, what: str) -> None:
    """A commitment made as a hash (the lot's, a deal's seed's) is 32 bytes."""
    if len(value) != fairness.COMMITMENT_BYTES:
        raise DomainError(Reason.BAD_COMMITMENT, f"the {what} must be 32 bytes")


def require_arrangement_commitment(commitment: bytes) -> None:
    """A seat's commitment to its rows: a SHA-256 hash."""
    if len(commitment) != fairness.COMMITMENT_BYTES:
        raise DomainError(
            Reason.BAD_COMMITMENT,
            f"a commitment is a 32-byte SHA-256 hash, not {len(commitment)} bytes",
            field="commitment",
        )


def require_nonce_size(nonce: bytes, field: str = "nonce") -> None:
    """A commitment's nonce, opened with what it hid."""
    if not fairness.MIN_NONCE_BYTES <= len(nonce) <= fairness.MAX_NONCE_BYTES:
        raise DomainError(
            Reason.BAD_NONCE,
            f"the {field} must be {fairness.MIN_NONCE_BYTES} to {fairness.MAX_NONCE_BYTES} bytes,"
            f" not {len(nonce)}",
            field=field,
        )


def decide_seating(
    seats: tuple[str | None, ...], player_id: str, requested: int | None
) -> list[Event]:
    """``player_id`` takes the seat asked for, or the first free one."""
    if player_id in seats:
        raise DomainError(Reason.ALREADY_SEATED, "you already hold a seat at this table")
    free = [seat for seat, holder in enumerate(seats) if holder is None]
    if not free:
        raise DomainError(Reason.TABLE_FULL, "every seat at this table is taken")
    seat = free[0] if requested is None else requested
    if not 0 <= seat < len(seats):
        raise DomainError(
            Reason.UNKNOWN_SEAT,
            f"seat {seat} does not exist; this table has seats 0 to {len(seats) - 1}",
            field="seat",
        )
    if seat not in free:
        raise DomainError(Reason.SEAT_TAKEN, f"seat {seat} is taken")
    return [PlayerSeated(seat=seat, player_id=player_id)]


def decide_dealer_lot(
    table_id: uuid.UUID, lot_commitment: bytes, seat_count: int, lot_seed: bytes
) -> list[Event]:
    """The dealer drawn from the lot seed, once it opens the commitment made at creation."""
    if len(lot_seed) != fairness.SEED_BYTES:
        raise DomainError(
            Reason.BAD_SEED,
            f"a seed is {fairness.SEED_BYTES} bytes, not {len(lot_seed)}",
            field="lot_seed",
        )
    if fairness.lot_commitment(table_id, lot_seed) != lot_commitment:
        raise DomainError(
            Reason.SEED_MISMATCH, "the lot seed does not match the commitment made at creation"
        )
    lot = fairness.draw_dealer(lot_seed, table_id, seat_count)
    return [
        DealerChosen(
            dealer=lot.dealer,
            lot_seed=lot_seed.hex(),
            lot_cards=tuple(str(card) for card in lot.cards),
        )
    ]


def decide_entropy(
    deal_number: int, seat: int, already_contributed: bool, entropy: bytes
) -> list[Event]:
    """A seat's contribution to the deal's shuffle: once a deal, 1 to 64 bytes."""
    if already_contributed:
        raise DomainError(Reason.ALREADY_CONTRIBUTED, "this seat already contributed entropy")
    if not 1 <= len(entropy) <= fairness.MAX_CONTRIBUTION_BYTES:
        raise DomainError(
            Reason.BAD_ENTROPY,
            f"entropy must be 1 to {fairness.MAX_CONTRIBUTION_BYTES} bytes, not {len(entropy)}",
            field="entropy",
        )
    return [EntropyContributed(deal_number=deal_number, seat=seat, entropy=entropy.hex())]


def decide_cut_at(
    deal_number: int, dealer: int, seat_count: int, seat: int, position: int
) -> list[Event]:
    """The cut, by the seat on the dealer's right only."""
    cutter = fairness.cutter_for(dealer, seat_count)
    if seat != cutter:
        raise DomainError(
            Reason.NOT_YOUR_TURN, f"seat {cutter}, on the dealer's right, cuts; you hold {seat}"
        )
    if not 1 <= position <= LAST_CUT_POSITION:
        raise DomainError(
            Reason.BAD_CUT_POSITION,
            f"cut position must be 1 to {LAST_CUT_POSITION}, not {position}",
            field="position",
        )
    return [DeckCut(deal_number=deal_number, seat=seat, position=position)]

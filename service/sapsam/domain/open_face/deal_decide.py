"""``decide`` for the play of an open-face deal: deal a street, place cards, commit and reveal a
Fantasyland hand. Only ``decide`` validates: a refused command raises ``DomainError`` and
produces no events; ``sapsam.domain.open_face.deal_evolve`` trusts what it produced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sapsam import fairness
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import Event
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    DealStreet,
    PlaceCards,
    RevealFantasyland,
)
from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase
from sapsam.domain.open_face.events import (
    CardsPlaced,
    FantasylandCommitted,
    FantasylandRevealed,
    StreetDealt,
)
from sapsam.rules.open_face.board import PlacementError, verify_placement
from sapsam.rules.open_face.fantasyland import verify_fantasyland_arrangement

__all__ = ["COMMITMENT_BYTES", "FANTASYLAND_SCHEME", "decide_deal"]

COMMITMENT_BYTES = 32
FANTASYLAND_SCHEME = 2
"""A Fantasyland hand is committed under scheme 2 (docs/fairness.md §12): bound to the player."""


def decide_deal(deal: OpenFaceDeal, command: Any) -> list[Event]:
    """The events ``command`` produces in this deal, or a ``DomainError`` refusing it."""
    handler = _DECIDERS.get(type(command))
    if handler is None:
        raise DomainError(Reason.INVALID_ARGUMENT, f"unknown command {type(command).__name__}")
    return handler(deal, command)


def _seat_for(deal: OpenFaceDeal, player_id: str, deal_number: int | None) -> int:
    seat = deal.seat_of(player_id)
    if seat is None:
        raise DomainError(Reason.NOT_SEATED, "you do not hold a seat at this table")
    if deal_number is not None and deal_number != deal.number:
        raise DomainError(
            Reason.WRONG_DEAL, f"deal {deal_number} is not the current deal ({deal.number})"
        )
    return seat


def _decide_street(deal: OpenFaceDeal, command: DealStreet) -> list[Event]:
    if deal.phase is not OpenFacePhase.DEALING:
        raise DomainError(
            Reason.WRONG_PHASE, f"no street is due: the deal is in {deal.phase.value}"
        )
    street = deal.streets_dealt
    counts = deal.schedule[street]
    if len(command.digests) != deal.seat_count or any(
        (len(digest) == COMMITMENT_BYTES) != (count > 0)
        for digest, count in zip(command.digests, counts, strict=True)
    ):
        raise DomainError(
            Reason.INVALID_ARGUMENT,
            f"street {street} needs a 32-byte digest for each seat dealt cards "
            f"({list(counts)}) and none for the others",
        )
    limit = deal.move_seconds
    return [
        StreetDealt(
            deal_number=deal.number,
            street=street,
            card_counts=counts,
            digests=tuple(digest.hex() for digest in command.digests),
            deadline_ms=None if limit is None else command.now_ms + limit * 1000,
        )
    ]


def _decide_place(deal: OpenFaceDeal, command: PlaceCards) -> list[Event]:
    seat = _seat_for(deal, command.player_id, command.deal_number)
    if deal.is_fantasyland(seat):
        raise DomainError(
            Reason.WRONG_PHASE,
            "this seat plays a Fantasyland hand: it sets all its rows at once "
            "(CommitFantasyland), it places no street",
        )
    if deal.phase is not OpenFacePhase.PLACING:
        raise DomainError(
            Reason.WRONG_PHASE, f"no placement is due: the deal is in {deal.phase.value}"
        )
    street = deal.streets_dealt - 1
    if command.street != street:
        raise DomainError(
            Reason.INVALID_ARGUMENT,
            f"street {command.street} is not the street being placed ({street})",
            field="street",
        )
    if deal.turn != seat:
        raise DomainError(
            Reason.NOT_YOUR_TURN,
            f"seat {deal.turn} places now (in turn from the dealer's left); you hold {seat}",
        )
    expected = deal.schedule[street][seat]
    if len(command.dealt) != expected:  # pragma: no cover - the application deals them
        raise DomainError(
            Reason.INVALID_ARGUMENT, f"seat {seat} was dealt {expected} cards on street {street}"
        )
    try:
        verify_placement(deal.boards[seat], command.dealt, command.placement)
    except PlacementError as error:
        raise DomainError(Reason.BAD_CARDS, str(error), field="placement") from None
    placement = command.placement
    return [
        CardsPlaced(
            deal_number=deal.number,
            seat=seat,
            street=street,
            front=tuple(map(str, placement.front)),
            middle=tuple(map(str, placement.middle)),
            back=tuple(map(str, placement.back)),
        )
    ]


def _require_fantasyland_seat(deal: OpenFaceDeal, player_id: str, number: int | None) -> int:
    seat = _seat_for(deal, player_id, number)
    if not deal.is_fantasyland(seat):
        raise DomainError(
            Reason.WRONG_PHASE, "this seat plays a normal hand this deal, not a Fantasyland"
        )
    if deal.streets_dealt == 0:
        raise DomainError(Reason.WRONG_PHASE, "the Fantasyland hand is not dealt yet")
    return seat


def _decide_commit(deal: OpenFaceDeal, command: CommitFantasyland) -> list[Event]:
    seat = _require_fantasyland_seat(deal, command.player_id, command.deal_number)
    if deal.commitments[seat] is not None:
        raise DomainError(
            Reason.ALREADY_CONFIRMED, "this seat already set its Fantasyland hand: it is final"
        )
    if len(command.commitment) != COMMITMENT_BYTES:
        raise DomainError(
            Reason.BAD_COMMITMENT,
            f"a commitment is a 32-byte SHA-256 hash, not {len(command.commitment)} bytes",
            field="commitment",
        )
    return [
        FantasylandCommitted(
            deal_number=deal.number, seat=seat, commitment=command.commitment.hex()
        )
    ]


def _decide_reveal(deal: OpenFaceDeal, command: RevealFantasyland) -> list[Event]:
    seat = _require_fantasyland_seat(deal, command.player_id, command.deal_number)
    commitment = deal.commitments[seat]
    if commitment is None:
        raise DomainError(Reason.NO_COMMITMENT, "set the Fantasyland hand before opening it")
    if deal.revealed[seat]:
        raise DomainError(Reason.ALREADY_REVEALED, "this seat already opened its hand")
    if deal.phase is not OpenFacePhase.FANTASYLAND or deal.fantasyland_hidden:
        raise DomainError(
            Reason.WRONG_PHASE,
            "a Fantasyland hand is opened at the end of the deal, once every normal hand is "
            "complete and every Fantasyland hand is set",
        )
    if not fairness.MIN_NONCE_BYTES <= len(command.nonce) <= fairness.MAX_NONCE_BYTES:
        raise DomainError(
            Reason.BAD_NONCE,
            f"the nonce must be {fairness.MIN_NONCE_BYTES} to {fairness.MAX_NONCE_BYTES} bytes, "
            f"not {len(command.nonce)}",
            field="nonce",
        )
    try:
        setting = verify_fantasyland_arrangement(command.dealt, command.arrangement)
    except PlacementError as error:
        raise DomainError(Reason.BAD_CARDS, str(error), field="arrangement") from None
    if not fairness.check_reveal(
        commitment,
        deal.table_id,
        deal.number,
        seat,
        command.arrangement,
        command.nonce,
        scheme=FANTASYLAND_SCHEME,
        player_id=command.player_id,
    ):
        raise DomainError(
            Reason.COMMITMENT_MISMATCH,
            "these rows and nonce do not hash to the commitment this seat made",
        )
    arrangement = command.arrangement
    return [
        FantasylandRevealed(
            deal_number=deal.number,
            seat=seat,
            front=tuple(map(str, arrangement.front)),
            middle=tuple(map(str, arrangement.middle)),
            back=tuple(map(str, arrangement.back)),
            discards=tuple(map(str, setting.discards)),
            nonce=command.nonce.hex(),
            dead=setting.dead,
        )
    ]


_DECIDERS: dict[type[Any], Callable[[OpenFaceDeal, Any], list[Event]]] = {
    DealStreet: _decide_street,
    PlaceCards: _decide_place,
    CommitFantasyland: _decide_commit,
    RevealFantasyland: _decide_reveal,
}

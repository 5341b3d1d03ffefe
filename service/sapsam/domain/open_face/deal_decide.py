"""``decide`` for the play of an open-face deal: deal a street, place cards, commit and reveal a
Fantasyland hand (timeouts and the moves made for a seat are ``deal_timeouts``). Only ``decide``
validates: a refused command raises ``DomainError`` and produces no events;
``sapsam.domain.open_face.deal_evolve`` trusts what it produced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sapsam import fairness
from sapsam.domain.commands import PlayerSignature
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import Event
from sapsam.domain.move_signatures import check_signature
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    DealStreet,
    PlaceCards,
    PlaceForSeat,
    RevealDiscards,
    RevealFantasyland,
    TimeOutDiscards,
    TimeOutFantasyland,
)
from sapsam.domain.open_face.deal_evolve import evolve_deal, fold_deal
from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase
from sapsam.domain.open_face.deal_timeouts import decide_place_for_seat, decide_time_out_fantasyland
from sapsam.domain.open_face.discard_decide import decide_reveal_discards, decide_time_out_discards
from sapsam.domain.open_face.events import (
    CardsPlaced,
    DiscardCommitted,
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandRevealsOpened,
    StreetDealt,
)
from sapsam.domain.open_face.placement_events import cards_placed, require_dealt
from sapsam.domain.table_frame import require_arrangement_commitment, require_nonce_size
from sapsam.fairness import player_keys
from sapsam.rules.open_face.board import (
    PlacementError,
    discards_due,
    verify_placement,
    verify_street_move,
)
from sapsam.rules.open_face.fantasyland import verify_fantasyland_arrangement

__all__ = ["COMMITMENT_BYTES", "FANTASYLAND_SCHEME", "decide_deal", "decide_deal_folded"]

COMMITMENT_BYTES = fairness.COMMITMENT_BYTES
FANTASYLAND_SCHEME = 2
"""A Fantasyland hand is committed under scheme 2 (docs/fairness.md §12): bound to the player."""


def decide_deal(deal: OpenFaceDeal, command: Any) -> list[Event]:
    """The events ``command`` produces in this deal, or a ``DomainError`` refusing it."""
    events, _after = decide_deal_folded(deal, command)
    return events


def decide_deal_folded(deal: OpenFaceDeal, command: Any) -> tuple[list[Event], OpenFaceDeal]:
    """:func:`decide_deal`, and the deal after the events (folded once: whether the move makes
    the reveals due is read off the deal after it)."""
    handler = _DECIDERS.get(type(command))
    if handler is None:
        raise DomainError(Reason.INVALID_ARGUMENT, f"unknown command {type(command).__name__}")
    events = handler(deal, command)
    after = fold_deal(deal, events)
    opened = _reveals_opened(deal, after, events, getattr(command, "now_ms", 0))
    if opened is None:
        return events, after
    return [*events, opened], evolve_deal(after, opened)


def _reveals_opened(
    deal: OpenFaceDeal, after: OpenFaceDeal, events: list[Event], now_ms: int
) -> FantasylandRevealsOpened | None:
    """``FantasylandRevealsOpened`` when ``events`` make the committed Fantasyland hands due to
    be opened (the last placement, commitment or timeout before them), at a table with a reveal
    limit (``move_seconds``, or without it ``reveal_seconds``, every preset's): the reveals then
    have that long, so a hand never opened cannot hold the table (docs/rules.md §8.7)."""
    limit = deal.rules.reveal_limit
    if limit is None or deal.reveals_open or not events:
        return None
    if after.reveals_open or not after.reveals_due:
        return None
    return FantasylandRevealsOpened(
        deal_number=deal.number,
        seats=tuple(seat for seat in after.seats if after.awaits_reveal(seat)),
        deadline_ms=now_ms + limit * 1000,
    )


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
    # A seat dealt cards on this street owes a move by the deadline: a normal seat its
    # placement, a Fantasyland seat (first street only) the setting of its whole hand.
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
    if deal.automatic[seat]:
        raise DomainError(
            Reason.SEAT_TIMED_OUT,
            "this seat's time ran out: the rest of its hand is placed for it",
        )
    require_dealt(deal, street, seat, command.dealt)
    placed = set(command.placement.cards)
    thrown = tuple(card for card in command.dealt if card not in placed)
    try:
        if discards_due(deal.rules, street):
            verify_street_move(
                deal.rules, street, deal.boards[seat], command.dealt, command.placement, thrown
            )
        else:
            verify_placement(deal.boards[seat], command.dealt, command.placement)
            thrown = ()
    except PlacementError as error:
        raise DomainError(Reason.BAD_CARDS, str(error), field="placement") from None
    placed_event = cards_placed(deal, seat, street, command.placement, None, command.now_ms)
    commitment = command.discard_commitment
    if not thrown:
        if commitment is not None:
            raise DomainError(
                Reason.INVALID_ARGUMENT,
                f"street {street} discards nothing: no discard commitment is taken",
                field="discard_commitment",
            )
        return [_signed_placement(deal, seat, command, placed_event)]
    if commitment is None:
        raise DomainError(
            Reason.NO_COMMITMENT,
            f"street {street} discards {len(thrown)} of the cards dealt: send the commitment "
            "to the discard with the placement (docs/fairness.md §23)",
            field="discard_commitment",
        )
    require_arrangement_commitment(commitment)
    return [
        _signed_placement(deal, seat, command, placed_event),
        DiscardCommitted(
            deal_number=deal.number, seat=seat, street=street, commitment=commitment.hex()
        ),
    ]


def _signed_placement(
    deal: OpenFaceDeal, seat: int, command: PlaceCards, placed: CardsPlaced
) -> CardsPlaced:
    """The seat's own placement with its player's signature of the ``place`` message, checked
    (docs/fairness.md §19: required once the player has a key), once every other check passed."""
    signed = check_signature(
        command.signature,
        command.player_keys,
        lambda: player_keys.place_message(
            deal.table_id,
            deal.number,
            seat,
            command.player_id,
            command.street,
            command.placement,
            command.discard_commitment,
        ),
    )
    return replace(placed, player_key=_key_hex(signed), signature=_signature_hex(signed))


def _key_hex(signed: PlayerSignature | None) -> str | None:
    return None if signed is None else signed.public_key.hex()


def _signature_hex(signed: PlayerSignature | None) -> str | None:
    return None if signed is None else signed.signature.hex()


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
    _require_not_taken_over(deal, seat)
    if deal.commitments[seat] is not None:
        raise DomainError(
            Reason.ALREADY_CONFIRMED, "this seat already set its Fantasyland hand: it is final"
        )
    require_arrangement_commitment(command.commitment)
    signed = check_signature(
        command.signature,
        command.player_keys,
        lambda: player_keys.commit_message(
            deal.table_id,
            deal.number,
            seat,
            command.player_id,
            FANTASYLAND_SCHEME,
            command.commitment,
            tag=player_keys.TAG_FANTASYLAND_COMMIT_SIGNATURE,
        ),
    )
    return [
        FantasylandCommitted(
            deal_number=deal.number,
            seat=seat,
            commitment=command.commitment.hex(),
            player_key=_key_hex(signed),
            signature=_signature_hex(signed),
        )
    ]


def _decide_reveal(deal: OpenFaceDeal, command: RevealFantasyland) -> list[Event]:
    seat = _require_fantasyland_seat(deal, command.player_id, command.deal_number)
    _require_not_taken_over(deal, seat)
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
    require_nonce_size(command.nonce)
    try:
        setting = verify_fantasyland_arrangement(command.dealt, command.arrangement, deal.rules)
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
    signed = check_signature(
        command.signature,
        command.player_keys,
        lambda: player_keys.reveal_message(
            deal.table_id,
            deal.number,
            seat,
            command.player_id,
            arrangement,
            command.nonce,
            tag=player_keys.TAG_FANTASYLAND_REVEAL_SIGNATURE,
        ),
    )
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
            player_key=_key_hex(signed),
            signature=_signature_hex(signed),
        )
    ]


def _require_not_taken_over(deal: OpenFaceDeal, seat: int) -> None:
    if deal.timed_out[seat]:
        raise DomainError(
            Reason.SEAT_TIMED_OUT,
            "this seat's time to set its Fantasyland hand ran out: the service sets it",
        )


_DECIDERS: dict[type[Any], Callable[[OpenFaceDeal, Any], list[Event]]] = {
    DealStreet: _decide_street,
    PlaceCards: _decide_place,
    PlaceForSeat: decide_place_for_seat,
    CommitFantasyland: _decide_commit,
    RevealFantasyland: _decide_reveal,
    TimeOutFantasyland: decide_time_out_fantasyland,
    RevealDiscards: decide_reveal_discards,
    TimeOutDiscards: decide_time_out_discards,
}

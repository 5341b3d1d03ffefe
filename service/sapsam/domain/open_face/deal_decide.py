"""``decide`` for the play of an open-face deal: deal a street, place cards, commit and reveal a
Fantasyland hand. Only ``decide`` validates: a refused command raises ``DomainError`` and
produces no events; ``sapsam.domain.open_face.deal_evolve`` trusts what it produced.
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
from sapsam.domain.open_face.deal_deadlines import deadline_extensions
from sapsam.domain.open_face.deal_evolve import evolve_deal, fold_deal
from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase
from sapsam.domain.open_face.deal_views import may_see_board
from sapsam.domain.open_face.discard_decide import (
    decide_reveal_discards,
    decide_time_out_discards,
)
from sapsam.domain.open_face.events import (
    TIMED_OUT_BY_OPERATOR,
    TIMED_OUT_BY_SERVICE,
    CardsPlaced,
    DiscardCommitted,
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandRevealsOpened,
    FantasylandTimedOut,
    StreetDealt,
)
from sapsam.domain.table_frame import (
    require_arrangement_commitment,
    require_nonce_size,
    require_seat_index,
)
from sapsam.fairness import player_keys
from sapsam.rules.cards import DECK, Card
from sapsam.rules.open_face.automatic import (
    AutomaticMove,
    AutomaticReason,
    automatic_move,
    timeout_move,
)
from sapsam.rules.open_face.board import (
    Placement,
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
    _require_dealt(deal, street, seat, command.dealt)
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
    placed_event = _placed(deal, seat, street, command.placement, None, command.now_ms)
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


def _require_dealt(deal: OpenFaceDeal, street: int, seat: int, dealt: tuple[Card, ...]) -> None:
    expected = deal.schedule[street][seat]
    if len(dealt) != expected:  # pragma: no cover - the application deals them
        raise DomainError(
            Reason.INVALID_ARGUMENT, f"seat {seat} was dealt {expected} cards on street {street}"
        )


def _placed(
    deal: OpenFaceDeal,
    seat: int,
    street: int,
    placement: Placement,
    automatic: AutomaticReason | None,
    now_ms: int,
    timed_out_by: str | None = None,
) -> CardsPlaced:
    # The next seat to place (if any still owes this street) gets its own move time. When none
    # does, the deal's next deadline is a Fantasyland hand's still to be set, if any (heads-up,
    # 001: the other seat may finish its hand first), so that a deadline sweep reading the last
    # event's deadline still comes for it; the next street's deal overwrites it.
    others_due = any(not deal.placed[other] for other in deal.seats if other != seat)
    limit = deal.move_seconds
    deadline = None if limit is None or not others_due else now_ms + limit * 1000
    if deadline is None and deal.fantasyland_hidden:
        deadline = deal.fantasyland_deadline_ms
    elif (
        deadline is None
        and limit is not None
        and deal.rules.street_discards
        and street == deal.streets_due - 1
    ):
        # Pineapple's last placement: the discards committed are due to be opened by then.
        deadline = now_ms + limit * 1000
    return CardsPlaced(
        deal_number=deal.number,
        seat=seat,
        street=street,
        front=tuple(map(str, placement.front)),
        middle=tuple(map(str, placement.middle)),
        back=tuple(map(str, placement.back)),
        automatic=None if automatic is None else automatic.value,
        deadline_ms=deadline,
        timed_out_by=timed_out_by,
    )


def _unseen(deal: OpenFaceDeal, seat: int, dealt: tuple[Card, ...]) -> list[Card]:
    """The cards that may still come to ``seat``: none it holds, was dealt, or may see on
    another board (what the seat knows, so a move made for it uses nothing more)."""
    seen = set(dealt).union(deal.boards[seat].cards)
    for other in deal.seats:
        if other != seat and may_see_board(deal, seat, other):
            seen.update(deal.boards[other].cards)
    return [card for card in DECK if card not in seen]


def _overdue_fantasylands(deal: OpenFaceDeal, now_ms: int) -> list[int]:
    """The Fantasyland seats whose hands are not set by the first street's deadline."""
    deadline = deal.fantasyland_deadline_ms
    if deadline is None or now_ms < deadline:
        return []
    return [seat for seat in deal.seats if deal.fantasyland_unset(seat)]


def _decide_place_for_seat(deal: OpenFaceDeal, command: PlaceForSeat) -> list[Event]:
    if command.timed_out and command.forced_seat is not None:
        return _decide_forced_time_out(deal, command, command.forced_seat)
    if command.timed_out:
        # No outage is held against a seat: a deadline that fell while no server served (or
        # just after) is moved, and nobody is timed out by this command.
        extended = deadline_extensions(deal, command.now_ms, command.unserved, command.grace_ms)
        if extended:
            return list(extended)
        overdue = _overdue_fantasylands(deal, command.now_ms)
        if overdue:
            # The deadline sweep's one move: the Fantasyland hands first (the seat on turn
            # then sees the boards they no longer hide, so its own timeout is a next command).
            return [_fantasyland_timed_out(deal, seat, TIMED_OUT_BY_SERVICE) for seat in overdue]
        if deal.reveals_open and deal.reveals_due:
            return _reveals_timed_out(deal, command.now_ms)
    seat = deal.turn
    if deal.phase is not OpenFacePhase.PLACING or seat is None:
        raise DomainError(
            Reason.WRONG_PHASE, f"no placement is due: the deal is in {deal.phase.value}"
        )
    street = deal.streets_dealt - 1
    _require_dealt(deal, street, seat, command.dealt)
    board = deal.boards[seat]
    pool = _unseen(deal, seat, command.dealt)
    move: AutomaticMove | None
    by = None
    if command.timed_out:
        by = TIMED_OUT_BY_SERVICE
        if deal.deadline_ms is None or command.now_ms < deal.deadline_ms:
            raise DomainError(
                Reason.NOTHING_TIMED_OUT, f"seat {seat}'s time to place has not run out"
            )
        move = timeout_move(deal.rules, board, command.dealt, pool)
    elif deal.automatic[seat] and not deal.declared_dead[seat]:
        # 003: after a timeout the rest of the hand is placed as the timeout placed it.
        move = timeout_move(deal.rules, board, command.dealt, pool)
    else:
        move = automatic_move(
            deal.rules, board, command.dealt, pool, declared_dead=deal.declared_dead[seat]
        )
        if move is None:
            raise DomainError(
                Reason.WRONG_PHASE,
                f"seat {seat} chooses its own placement: no move of it is forced",
            )
    # A move made for the seat discards openly to the service (which chose it) and to nobody
    # else: no commitment is made, and anyone recomputes the discard once the seed is out.
    return [_placed(deal, seat, street, move.placement, move.reason, command.now_ms, by)]


def _decide_forced_time_out(deal: OpenFaceDeal, command: PlaceForSeat, seat: int) -> list[Event]:
    """The operator's forced timeout of ``seat``: what its deadline would record, now (the
    closed game's ``TimeOutSeats`` with ``forced_seat``)."""
    require_seat_index(seat, deal.seat_count)
    if deal.streets_dealt and (
        deal.fantasyland_unset(seat) or (deal.reveals_due and deal.awaits_reveal(seat))
    ):
        # A Fantasyland hand not set (the service sets it) or committed and not opened (dead).
        return [_fantasyland_timed_out(deal, seat, TIMED_OUT_BY_OPERATOR)]
    if deal.phase is OpenFacePhase.PLACING and deal.turn == seat and not deal.automatic[seat]:
        street = deal.streets_dealt - 1
        _require_dealt(deal, street, seat, command.dealt)
        pool = _unseen(deal, seat, command.dealt)
        move = timeout_move(deal.rules, deal.boards[seat], command.dealt, pool)
        placed = _placed(deal, seat, street, move.placement, move.reason, command.now_ms)
        return [replace(placed, timed_out_by=TIMED_OUT_BY_OPERATOR)]
    raise DomainError(
        Reason.NOTHING_TIMED_OUT,
        f"seat {seat} owes no move now (the deal is in {deal.phase.value}"
        + ("" if deal.turn is None else f", seat {deal.turn} places")
        + ")",
    )


def _reveals_timed_out(deal: OpenFaceDeal, now_ms: int) -> list[Event]:
    """The committed Fantasyland hands not opened by the reveal deadline: each timed out, dead
    (it cannot be opened without its nonce; docs/rules.md §8.7), as the closed game fouls a
    hand not revealed in time."""
    deadline = deal.reveal_deadline_ms
    if deadline is None or now_ms < deadline:
        raise DomainError(
            Reason.NOTHING_TIMED_OUT, "the time to open the Fantasyland hands has not run out"
        )
    return [
        _fantasyland_timed_out(deal, seat, TIMED_OUT_BY_SERVICE)
        for seat in deal.seats
        if deal.awaits_reveal(seat)
    ]


def _fantasyland_timed_out(deal: OpenFaceDeal, seat: int, by: str) -> FantasylandTimedOut:
    return FantasylandTimedOut(deal_number=deal.number, seat=seat, timed_out_by=by)


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


def _fantasyland_seat_of(deal: OpenFaceDeal, seat: int) -> int:
    require_seat_index(seat, deal.seat_count)
    if not deal.is_fantasyland(seat):
        raise DomainError(
            Reason.WRONG_PHASE, f"seat {seat} plays a normal hand this deal, not a Fantasyland"
        )
    if deal.streets_dealt == 0:
        raise DomainError(Reason.WRONG_PHASE, "the Fantasyland hand is not dealt yet")
    return seat


def _decide_time_out_fantasyland(deal: OpenFaceDeal, command: TimeOutFantasyland) -> list[Event]:
    """001 and 003 time a seat out whatever it plays: a Fantasyland seat too must set its 13
    cards in time, or the rule set's policy sets them (``fantasyland_timeout_setting``), when
    the seed is revealed (``table_decide``)."""
    seat = _fantasyland_seat_of(deal, command.seat)
    if not deal.fantasyland_unset(seat):
        raise DomainError(
            Reason.NOTHING_TIMED_OUT,
            f"seat {seat} has set its Fantasyland hand"
            + (" (the service took it over)" if deal.timed_out[seat] else ""),
        )
    if seat not in _overdue_fantasylands(deal, command.now_ms):
        raise DomainError(
            Reason.NOTHING_TIMED_OUT,
            f"seat {seat}'s time to set its Fantasyland hand has not run out",
        )
    return [_fantasyland_timed_out(deal, seat, TIMED_OUT_BY_SERVICE)]


_DECIDERS: dict[type[Any], Callable[[OpenFaceDeal, Any], list[Event]]] = {
    DealStreet: _decide_street,
    PlaceCards: _decide_place,
    PlaceForSeat: _decide_place_for_seat,
    CommitFantasyland: _decide_commit,
    RevealFantasyland: _decide_reveal,
    TimeOutFantasyland: _decide_time_out_fantasyland,
    RevealDiscards: decide_reveal_discards,
    TimeOutDiscards: decide_time_out_discards,
}

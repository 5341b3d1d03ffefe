"""``decide`` for an open-face deal's timeouts and the moves made for a seat: the deadline
sweep's ``PlaceForSeat`` (deadlines moved after an outage, Fantasyland hands not set or not
opened in time, the seat on turn placed by the rule set's timeout move, a forced move), the
operator's forced timeout of a seat, and ``TimeOutFantasyland``. The rest of the deal's play is
``deal_decide``, which hands these commands here.
"""

from __future__ import annotations

from dataclasses import replace

from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import Event
from sapsam.domain.open_face.commands import PlaceForSeat, TimeOutFantasyland
from sapsam.domain.open_face.deal_deadlines import deadline_extensions
from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase
from sapsam.domain.open_face.deal_views import may_see_board
from sapsam.domain.open_face.events import (
    TIMED_OUT_BY_OPERATOR,
    TIMED_OUT_BY_SERVICE,
    FantasylandTimedOut,
)
from sapsam.domain.open_face.placement_events import cards_placed, require_dealt
from sapsam.domain.table_frame import require_seat_index
from sapsam.rules.cards import DECK, Card
from sapsam.rules.open_face.automatic import (
    AutomaticMove,
    automatic_move,
    timeout_move,
)

__all__ = ["decide_place_for_seat", "decide_time_out_fantasyland"]


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


def decide_place_for_seat(deal: OpenFaceDeal, command: PlaceForSeat) -> list[Event]:
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
    require_dealt(deal, street, seat, command.dealt)
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
    return [cards_placed(deal, seat, street, move.placement, move.reason, command.now_ms, by)]


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
        require_dealt(deal, street, seat, command.dealt)
        pool = _unseen(deal, seat, command.dealt)
        move = timeout_move(deal.rules, deal.boards[seat], command.dealt, pool)
        placed = cards_placed(deal, seat, street, move.placement, move.reason, command.now_ms)
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


def _fantasyland_seat_of(deal: OpenFaceDeal, seat: int) -> int:
    require_seat_index(seat, deal.seat_count)
    if not deal.is_fantasyland(seat):
        raise DomainError(
            Reason.WRONG_PHASE, f"seat {seat} plays a normal hand this deal, not a Fantasyland"
        )
    if deal.streets_dealt == 0:
        raise DomainError(Reason.WRONG_PHASE, "the Fantasyland hand is not dealt yet")
    return seat


def decide_time_out_fantasyland(deal: OpenFaceDeal, command: TimeOutFantasyland) -> list[Event]:
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

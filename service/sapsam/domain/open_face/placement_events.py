"""The ``CardsPlaced`` event as every open-face decider makes it (a seat's own placement, a move
made for it, a timeout), with the next deadline it sets, and the check that the cards a move is
made with are what the street dealt the seat. Shared by ``deal_decide`` and ``deal_timeouts``.
"""

from __future__ import annotations

from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.open_face.deal_state import OpenFaceDeal
from sapsam.domain.open_face.events import CardsPlaced
from sapsam.rules.cards import Card
from sapsam.rules.open_face.automatic import AutomaticReason
from sapsam.rules.open_face.board import Placement

__all__ = ["cards_placed", "require_dealt"]


def require_dealt(deal: OpenFaceDeal, street: int, seat: int, dealt: tuple[Card, ...]) -> None:
    expected = deal.schedule[street][seat]
    if len(dealt) != expected:  # pragma: no cover - the application deals them
        raise DomainError(
            Reason.INVALID_ARGUMENT, f"seat {seat} was dealt {expected} cards on street {street}"
        )


def cards_placed(
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

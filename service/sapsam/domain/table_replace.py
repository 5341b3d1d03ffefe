"""Replacing a seat's player (an operator's command; ``decide``'s part for ``ReplaceSeat``).

Only between deals, once the table has played (or voided) a deal: the old player's commitments
all belong to deals that are over (scored or voided), so nothing the old player committed to is
ever revealed, scored or signed in the new player's name, and the new player's first act is in a
fresh deal. To take a seat from a player in the middle of a deal, the operator first ends the
deal (``ForceSeatTimeout`` for the seat, then the deal scores as after a missed deadline; or
``VoidDeal``). Before the first deal a free seat is taken with ``JoinTable`` instead.
"""

from __future__ import annotations

from sapsam.domain.commands import ReplaceSeat
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import Event, SeatReplaced
from sapsam.domain.table_frame import require_seat_index
from sapsam.domain.table_state import TablePhase, TableState


def decide_replace(state: TableState, command: ReplaceSeat) -> list[Event]:
    require_seat_index(command.seat, state.seat_count)
    if state.phase is not TablePhase.BETWEEN_DEALS or state.deal is None:
        raise DomainError(
            Reason.WRONG_PHASE,
            "a seat's player can be replaced only between deals, after the first deal; the"
            f" table is {state.phase.value}",
        )
    if state.seat_of(command.player_id) is not None:
        raise DomainError(Reason.ALREADY_SEATED, "that player already holds a seat here")
    previous = state.seats[command.seat]
    assert previous is not None  # every seat is taken once a deal has started
    return [
        SeatReplaced(seat=command.seat, previous_player_id=previous, player_id=command.player_id)
    ]

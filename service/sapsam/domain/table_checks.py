"""Checks every table command shares: the phase, the caller's seat, the deal, the seed's size.

Each raises a ``DomainError`` naming what is wrong; ``sapsam.domain.table_decide`` and its parts
(``table_play``, ``table_scoring``) run them before deciding anything.
"""

from __future__ import annotations

from sapsam import fairness
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.table_state import DealState, TablePhase, TableState


def require_phase(state: TableState, *phases: TablePhase) -> None:
    if state.phase not in phases:
        if state.phase is TablePhase.SERIES_COMPLETE:
            # Not a moment to wait for: no move will ever be accepted again (docs/api.md).
            raise DomainError(Reason.SERIES_COMPLETE, "the series is over; the table is closed")
        wanted = " or ".join(phase.value for phase in phases)
        raise DomainError(
            Reason.WRONG_PHASE,
            f"the table is in phase {state.phase.value}; this needs {wanted}",
        )


def seat_for(state: TableState, player_id: str) -> int:
    seat = state.seat_of(player_id)
    if seat is None:
        raise DomainError(Reason.NOT_SEATED, "you do not hold a seat at this table")
    return seat


def require_seed_size(seed: bytes, field: str) -> None:
    if len(seed) != fairness.SEED_BYTES:
        raise DomainError(
            Reason.BAD_SEED,
            f"a seed is {fairness.SEED_BYTES} bytes, not {len(seed)}",
            field=field,
        )


def require_deal(state: TableState, deal_number: int | None) -> None:
    # Checked before the phase so a call for a past deal gets this reason, not WRONG_PHASE.
    if deal_number is None:
        return
    current = None if state.deal is None else state.deal.number
    if deal_number != current:
        now = "no deal has started" if current is None else f"the current deal is {current}"
        raise DomainError(Reason.WRONG_DEAL, f"this call is for deal {deal_number}, but {now}")


def current_deal(state: TableState) -> DealState:
    # Only called after a phase check that implies a running deal.
    assert state.deal is not None
    return state.deal

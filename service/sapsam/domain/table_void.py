"""Voiding a deal in progress (an operator's command; ``decide``'s part for ``VoidDeal``).

A deal that cannot be finished fairly (a fault, a dispute, a seat nobody can play) is voided: no
score is computed and no total changes, and the deal's secret seed is published in the very
event that voids it (``DealVoided``), never before, so that anyone can check it against the
commitment of ``DealStarted`` and recompute the deck. The deal passes to the left as after any
deal, and the next deal may start. A voided deal does not count towards the series.
"""

from __future__ import annotations

from typing import Final

from sapsam import fairness
from sapsam.domain.commands import VoidDeal
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DealVoided, Event
from sapsam.domain.table_checks import current_deal, require_deal, require_seed_size
from sapsam.domain.table_state import TablePhase, TableState

MAX_REASON_LENGTH: Final = 200
"""Most characters of a voiding's reason (docs/api.md)."""

VOIDABLE_PHASES: Final = frozenset(
    {
        TablePhase.AWAITING_CUT,
        TablePhase.DEALING,
        TablePhase.ARRANGING,
        TablePhase.ANNOUNCING,
        TablePhase.REVEALING,
        TablePhase.AWAITING_SEED,
    }
)
"""The phases of a deal in progress: started, not yet scored."""


def require_void_reason(reason: str) -> None:
    """Refuse a voiding's reason that is blank, too long or not printable (either game)."""
    if not reason.strip() or len(reason) > MAX_REASON_LENGTH or not reason.isprintable():
        raise DomainError(
            Reason.INVALID_ARGUMENT,
            f"the reason must be 1 to {MAX_REASON_LENGTH} printable characters",
            field="reason",
        )


def decide_void(state: TableState, command: VoidDeal) -> list[Event]:
    reason = command.reason
    require_void_reason(reason)
    require_deal(state, command.deal_number)
    if state.after_series != "close":
        # The audit places a deal in its series by number (series k holds deals
        # (k - 1) * length + 1 .. k * length): a voided deal there would shift them.
        raise DomainError(
            Reason.WRONG_PHASE,
            "a deal of a table that starts new series (after_series new_series) cannot be voided",
        )
    if state.phase not in VOIDABLE_PHASES:
        raise DomainError(
            Reason.WRONG_PHASE,
            f"only a deal in progress can be voided; the table is {state.phase.value}",
        )
    deal = current_deal(state)
    assert state.table_id is not None
    require_seed_size(command.seed, "seed")
    if fairness.seed_commitment(state.table_id, deal.number, command.seed) != deal.seed_commitment:
        raise DomainError(
            Reason.SEED_MISMATCH, "the seed does not match the commitment published for this deal"
        )
    return [DealVoided(deal_number=deal.number, reason=reason, seed=command.seed.hex())]

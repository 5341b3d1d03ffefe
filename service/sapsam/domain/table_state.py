"""The table aggregate's state: what a table's events describe, and the phase derived from it.

Frozen records only; ``sapsam.domain.table_evolve`` builds them from events and
``sapsam.domain.table_decide`` reads them to judge commands.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import StrEnum

from sapsam import fairness
from sapsam.domain.announcements import Announcements
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.ruleset import RuleSet


class TablePhase(StrEnum):
    """Where a table stands; what it waits for next."""

    NOT_CREATED = "NOT_CREATED"
    SEATING = "SEATING"
    AWAITING_DEALER = "AWAITING_DEALER"
    BETWEEN_DEALS = "BETWEEN_DEALS"
    AWAITING_CUT = "AWAITING_CUT"
    DEALING = "DEALING"
    ARRANGING = "ARRANGING"
    ANNOUNCING = "ANNOUNCING"
    """Seats announce play or surrender in turn (``sapsam.domain.table_surrender``)."""
    REVEALING = "REVEALING"
    AWAITING_SEED = "AWAITING_SEED"
    SERIES_COMPLETE = "SERIES_COMPLETE"


class SeatTimeout(StrEnum):
    """What a seat's timeout in the current deal means for its hand."""

    FOUL = "foul"
    SOLVER = "solver"


@dataclass(frozen=True)
class Reveal:
    """A seat's revealed arrangement and whether it was judged a foul."""

    arrangement: Arrangement
    nonce: bytes
    foul: bool


@dataclass(frozen=True)
class DealState:
    """The current deal: everything public about it, as the log tells it."""

    number: int
    dealer: int
    seed_commitment: bytes
    contributions: tuple[bytes | None, ...]
    cut_position: int | None = None
    dealt: bool = False
    deck_digest: bytes = b""
    cut_deck_digest: bytes = b""
    hand_digests: tuple[bytes, ...] = ()
    commitments: tuple[bytes | None, ...] = ()
    commitment_schemes: tuple[int, ...] = ()
    """Per seat, the scheme of its last commitment (docs/fairness.md §12)."""
    confirmed: tuple[bool, ...] = ()
    timeouts: tuple[SeatTimeout | None, ...] = ()
    reveals: tuple[Reveal | None, ...] = ()
    declarations: tuple[bytes | None, ...] = ()
    """Per seat, its natural declaration's commitment (docs/fairness.md §21), once declared."""
    naturals: tuple[str | None, ...] = ()
    """Per seat, the declaration it opened with its reveal (``none`` or a natural's name)."""
    arrange_deadline_ms: int | None = None
    reveal_deadline_ms: int | None = None
    deadline_set_ms: int | None = None
    """When the current deadline was set (or last extended): only a deadline already running when
    an outage began is extended for it (``sapsam.domain.table_deadlines``)."""
    reveals_open: bool = False
    seed: bytes | None = None
    scored: bool = False
    voided: bool = False
    """The operator voided the deal (``DealVoided``): over, unscored, its seed published."""
    announcements: Announcements | None = None
    """The play-or-surrender announcements, once opened (a rule set with surrender only)."""


@dataclass(frozen=True)
class TableState:
    """A table as its events describe it. ``version`` counts the events folded in."""

    version: int = 0
    table_id: uuid.UUID | None = None
    rule_set: RuleSet = DEFAULT_RULE_SET
    seat_count: int = 0
    seats: tuple[str | None, ...] = ()
    lot_commitment: bytes = b""
    first_dealer: int | None = None
    deal: DealState | None = None
    deals_scored: int = 0
    series_totals: tuple[int, ...] = ()
    series_complete: bool = False
    after_series: str = "close"
    series_number: int = 1
    series_first_deal: int = 1
    voided_in_series: int = 0
    """Deals of the current series that were voided: they do not count towards its length."""

    @property
    def phase(self) -> TablePhase:
        """The phase, derived from the facts so it can never disagree with them."""
        if self.table_id is None:
            return TablePhase.NOT_CREATED
        if self.series_complete:
            return TablePhase.SERIES_COMPLETE
        # Plain loops and ``in``, not any() over generators: the phase is asked a few times on
        # every command decided (the checks, the plans, the settling step).
        if None in self.seats:
            return TablePhase.SEATING
        if self.first_dealer is None:
            return TablePhase.AWAITING_DEALER
        deal = self.deal
        if deal is None or deal.scored or deal.voided:
            return TablePhase.BETWEEN_DEALS
        if deal.cut_position is None:
            return TablePhase.AWAITING_CUT
        if not deal.dealt:
            return TablePhase.DEALING
        if not deal.reveals_open:
            return TablePhase.ARRANGING if deal.announcements is None else TablePhase.ANNOUNCING
        reveals, timeouts = deal.reveals, deal.timeouts
        for seat in range(self.seat_count):
            if reveals[seat] is None and timeouts[seat] is None:  # awaits_reveal(deal, seat)
                return TablePhase.REVEALING
        return TablePhase.AWAITING_SEED

    def seat_of(self, player_id: str) -> int | None:
        """The seat a player holds here, if any."""
        for seat, holder in enumerate(self.seats):
            if holder == player_id:
                return seat
        return None

    @property
    def next_deal_number(self) -> int:
        """The number the next deal takes: one after the last deal's, scored or voided (before
        any deal could be voided this was always ``deals_scored + 1``, the same number)."""
        return self.deals_scored + 1 if self.deal is None else self.deal.number + 1

    @property
    def next_dealer(self) -> int | None:
        """Who deals the next deal: the first dealer, then passing left after each deal."""
        if self.first_dealer is None:
            return None
        if self.deal is None:
            return self.first_dealer
        return fairness.left_of(self.deal.dealer, self.seat_count)


INITIAL_STATE = TableState()


def awaits_reveal(deal: DealState, seat: int) -> bool:
    """Whether a seat still owes its reveal in this deal (neither revealed nor timed out)."""
    return deal.reveals[seat] is None and deal.timeouts[seat] is None

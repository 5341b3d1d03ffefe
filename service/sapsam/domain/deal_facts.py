"""One deal's recorded facts, gathered from its events in order: what a deal's views are built from.

Pure. The facts are everything the log says about a deal, secret or not (the rows and nonces of
the reveals are in the log before the seed is); what a caller may see of them is decided in
``sapsam.domain.table_views``, never here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from sapsam.domain import events as domain_events


@dataclass
class SeatFacts:
    """What the deal's events say about one seat."""

    entropy: bytes = b""
    commitment: bytes = b""
    confirmed: bool = False
    revealed: domain_events.ArrangementRevealed | None = None
    timed_out: domain_events.SeatTimedOut | None = None
    natural: str = ""
    """The natural declaration the seat opened with its reveal (``NaturalRevealed``), if any."""


@dataclass
class DealFacts:
    """The events of one deal, gathered in order (see :func:`gather_deal`)."""

    deal_number: int
    dealer: int = 0
    seed_commitment: bytes = b""
    cut: domain_events.DeckCut | None = None
    dealt: bool = False
    seed: bytes | None = None
    scored: domain_events.DealScored | None = None
    seats: dict[int, SeatFacts] = field(default_factory=dict)

    def seat(self, seat: int) -> SeatFacts:
        """The facts of one seat (created on first use)."""
        return self.seats.setdefault(seat, SeatFacts())

    def add(self, event: domain_events.Event) -> None:
        """Take one event of this deal into account (events of no interest change nothing)."""
        gather = _GATHERERS.get(type(event))
        if gather is not None:
            gather(self, event)


def _started(facts: DealFacts, event: domain_events.DealStarted) -> None:
    facts.dealer = event.dealer
    facts.seed_commitment = bytes.fromhex(event.seed_commitment)


def _contributed(facts: DealFacts, event: domain_events.EntropyContributed) -> None:
    facts.seat(event.seat).entropy = bytes.fromhex(event.entropy)


def _cut(facts: DealFacts, event: domain_events.DeckCut) -> None:
    facts.cut = event


def _dealt(facts: DealFacts, event: domain_events.CardsDealt) -> None:
    facts.dealt = True


def _committed(facts: DealFacts, event: domain_events.ArrangementCommitted) -> None:
    facts.seat(event.seat).commitment = bytes.fromhex(event.commitment)


def _confirmed(facts: DealFacts, event: domain_events.SeatConfirmed) -> None:
    seat = facts.seat(event.seat)
    seat.confirmed = True
    seat.commitment = bytes.fromhex(event.commitment)


def _revealed(facts: DealFacts, event: domain_events.ArrangementRevealed) -> None:
    facts.seat(event.seat).revealed = event


def _natural_revealed(facts: DealFacts, event: domain_events.NaturalRevealed) -> None:
    facts.seat(event.seat).natural = event.natural


def _timed_out(facts: DealFacts, event: domain_events.SeatTimedOut) -> None:
    facts.seat(event.seat).timed_out = event


def _seed_revealed(facts: DealFacts, event: domain_events.SeedRevealed) -> None:
    facts.seed = bytes.fromhex(event.seed)


def _scored(facts: DealFacts, event: domain_events.DealScored) -> None:
    facts.scored = event


_GATHERERS: Final[dict[type[domain_events.Event], Callable[[DealFacts, Any], None]]] = {
    domain_events.DealStarted: _started,
    domain_events.EntropyContributed: _contributed,
    domain_events.DeckCut: _cut,
    domain_events.CardsDealt: _dealt,
    domain_events.ArrangementCommitted: _committed,
    domain_events.SeatConfirmed: _confirmed,
    domain_events.ArrangementRevealed: _revealed,
    domain_events.NaturalRevealed: _natural_revealed,
    domain_events.SeatTimedOut: _timed_out,
    domain_events.SeedRevealed: _seed_revealed,
    domain_events.DealScored: _scored,
}


def gather_deal(events: Iterable[domain_events.Event], deal_number: int) -> DealFacts | None:
    """The facts of deal ``deal_number`` from a table's events; None if it never started."""
    facts: DealFacts | None = None
    for event in events:
        if getattr(event, "deal_number", None) != deal_number:
            continue
        if isinstance(event, domain_events.DealStarted):
            facts = DealFacts(deal_number)
        if facts is not None:
            facts.add(event)
    return facts

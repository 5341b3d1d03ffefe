"""From a table's events to what fair dealing verifies: one finished deal as a ``PublishedDeal``.

Pure: the events of one table's stream in, a value out. The audit uses it on exported files and on
the live log alike, so both verify exactly the same thing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Final

from sapsam.domain.events import (
    ArrangementRevealed,
    CardsDealt,
    DealScored,
    DealStarted,
    DeckCut,
    EntropyContributed,
    Event,
    NaturalDeclared,
    NaturalRevealed,
    PlayerSeated,
    SeatConfirmed,
    SeatReplaced,
    SeatTimedOut,
    SeedRevealed,
    SurrenderAnnounced,
    TableCreated,
)
from sapsam.fairness import DealRecord
from sapsam.fairness.encoding import require_seat_count
from sapsam.fairness.natural_checks import Declaration
from sapsam.fairness.published import PublishedDeal, Reveal
from sapsam.frozen import from_fields
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.naturals import NaturalsTable
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.scoring import DealScore, PairResult


class DealNotFinishedError(ValueError):
    """The events do not hold a finished (scored) deal with that number."""


# The event types a deal's record is read from, in the order they were tested with isinstance.
_KINDS: Final[tuple[type[Event], ...]] = (
    TableCreated,
    PlayerSeated,
    DealStarted,
    EntropyContributed,
    DeckCut,
    CardsDealt,
    SeatConfirmed,
    ArrangementRevealed,
    SeatTimedOut,
    SeedRevealed,
    DealScored,
    SeatReplaced,
    SurrenderAnnounced,
    NaturalDeclared,
    NaturalRevealed,
)
# Per concrete event type, the first of _KINDS its instances are instances of (None: none). What
# isinstance answers depends on the type alone, so each type is worked out once, and an event is
# then tested once, against the one kind it can be, instead of along the whole chain.
_KIND_OF_TYPE: dict[type, type[Event] | None] = {kind: kind for kind in _KINDS}


def _kind(event: Event) -> type[Event] | None:
    event_type = type(event)
    try:
        return _KIND_OF_TYPE[event_type]
    except KeyError:
        kind = next((kind for kind in _KINDS if issubclass(event_type, kind)), None)
        _KIND_OF_TYPE[event_type] = kind
        return kind


def _reveal(arrangement: Arrangement, nonce: bytes) -> Reveal:
    """``Reveal(arrangement, nonce)`` (no defaults, no ``__post_init__``) without ``__init__``'s
    setattr per field."""
    return from_fields(Reveal, {"arrangement": arrangement, "nonce": nonce})


def _pair_result(seat_a: int, seat_b: int, rows: tuple[int, int, int], delta: int) -> PairResult:
    """``PairResult(seat_a, seat_b, rows, delta)`` (no defaults, no ``__post_init__``) without
    ``__init__``'s setattr per field."""
    return from_fields(
        PairResult, {"seat_a": seat_a, "seat_b": seat_b, "rows": rows, "delta": delta}
    )


def _solver_arrangements(scored: DealScored) -> tuple[Arrangement | None, ...] | None:
    """``DealScored.solver_arrangements`` as arrangements (``PublishedDeal`` refuses a list that
    is not one per seat); None when not recorded (schema 1)."""
    recorded = scored.solver_arrangements
    if recorded is None:
        return None
    return tuple(
        None
        if rows is None
        else Arrangement.of_card_rows(
            parse_cards(rows.front), parse_cards(rows.middle), parse_cards(rows.back)
        )
        for rows in recorded
    )


def published_deal(
    events: Iterable[Event], deal_number: int, rule_set: RuleSet | None = None
) -> PublishedDeal:
    """Everything published about deal ``deal_number`` of one table, from that table's events.

    ``rule_set`` may pass ``RuleSet.from_dict`` of the TableCreated's rule set when the caller
    already holds it (the audit verifies many deals of one table); otherwise it is read here.
    """
    created: TableCreated | None = None
    started: DealStarted | None = None
    cut: DeckCut | None = None
    dealt: CardsDealt | None = None
    seed: SeedRevealed | None = None
    scored: DealScored | None = None
    contributions: dict[int, bytes] = {}
    commitments: dict[int, bytes] = {}
    schemes: dict[int, int] = {}
    players: dict[int, str] = {}
    reveals: dict[int, Reveal] = {}
    solver_seats: set[int] = set()
    surrendered: set[int] = set()
    declared: dict[int, Declaration] = {}
    for event in events:
        kind = _kind(event)
        if kind is None:
            continue
        if kind is TableCreated and isinstance(event, TableCreated):
            created = event
            continue
        if kind is PlayerSeated and isinstance(event, PlayerSeated):
            players[event.seat] = event.player_id
            continue
        if kind is SeatReplaced and isinstance(event, SeatReplaced):
            # A seat given to another player counts for the deals after it only.
            if started is None:
                players[event.seat] = event.player_id
            continue
        if getattr(event, "deal_number", None) != deal_number:
            continue
        # One isinstance per event, against its kind (it holds, and tells mypy the type).
        if kind is ArrangementRevealed and isinstance(event, ArrangementRevealed):
            reveals[event.seat] = _reveal(
                Arrangement.of_card_rows(
                    parse_cards(event.front), parse_cards(event.middle), parse_cards(event.back)
                ),
                bytes.fromhex(event.nonce),
            )
        elif kind is SeatConfirmed and isinstance(event, SeatConfirmed):
            commitments[event.seat] = bytes.fromhex(event.commitment)
            schemes[event.seat] = event.scheme
        elif kind is EntropyContributed and isinstance(event, EntropyContributed):
            contributions[event.seat] = bytes.fromhex(event.entropy)
        elif kind is DealStarted and isinstance(event, DealStarted):
            started = event
        elif kind is DeckCut and isinstance(event, DeckCut):
            cut = event
        elif kind is CardsDealt and isinstance(event, CardsDealt):
            dealt = event
        elif kind is SeatTimedOut and isinstance(event, SeatTimedOut):
            if event.consequence == "solver":
                solver_seats.add(event.seat)
        elif kind is SeedRevealed and isinstance(event, SeedRevealed):
            seed = event
        elif kind is SurrenderAnnounced and isinstance(event, SurrenderAnnounced):
            if event.surrender:
                surrendered.add(event.seat)
        elif kind is NaturalDeclared and isinstance(event, NaturalDeclared):
            declared[event.seat] = Declaration(bytes.fromhex(event.commitment))
        elif kind is NaturalRevealed and isinstance(event, NaturalRevealed):
            commitment = declared.get(event.seat, Declaration(b"")).commitment
            declared[event.seat] = Declaration(
                commitment, event.natural, bytes.fromhex(event.nonce)
            )
        elif kind is DealScored and isinstance(event, DealScored):
            scored = event
    if created is None or started is None or cut is None or dealt is None:
        raise DealNotFinishedError(f"deal {deal_number} was not dealt")
    if seed is None or scored is None:
        raise DealNotFinishedError(f"deal {deal_number} is not finished")
    # Checked before anything is sized by it: a forged TableCreated's seat count of 10^9 made
    # the per-seat tuples below take gigabytes (an audit must refuse it, not build it).
    seats = range(require_seat_count(created.seat_count))
    rules = rule_set if rule_set is not None else RuleSet.from_dict(created.rule_set)
    with_naturals = declared or rules.naturals is not NaturalsTable.NONE
    return PublishedDeal(
        table_id=uuid.UUID(created.table_id),
        deal_number=deal_number,
        rule_set=rules,
        seat_count=created.seat_count,
        dealer=started.dealer,
        seed_commitment=bytes.fromhex(started.seed_commitment),
        seed=bytes.fromhex(seed.seed),
        contributions=tuple(map(contributions.get, seats)),
        cut_position=cut.position,
        record=DealRecord(
            deck=bytes.fromhex(dealt.deck_digest),
            cut_deck=bytes.fromhex(dealt.cut_deck_digest),
            hands=tuple(map(bytes.fromhex, dealt.hand_digests)),
        ),
        seat_commitments=tuple(map(commitments.get, seats)),
        reveals=tuple(map(reveals.get, seats)),
        solver_seats=tuple(map(solver_seats.__contains__, seats)),
        solver_arrangements=_solver_arrangements(scored),
        commitment_schemes=tuple(schemes.get(seat, 1) for seat in seats),
        players=tuple(map(players.get, seats)),
        surrendered=tuple(map(surrendered.__contains__, seats)) if surrendered else (),
        natural_declarations=tuple(map(declared.get, seats)) if with_naturals else None,
        recorded_fouls=scored.fouls,
        recorded_scores=DealScore(
            pairs=tuple(
                _pair_result(pair.seat_a, pair.seat_b, pair.rows, pair.delta)
                for pair in scored.pairs
            ),
            totals=scored.totals,
        ),
    )

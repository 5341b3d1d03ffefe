"""What each caller may see of a table and of a deal: the one place hidden information is withheld.

Pure: a table's state (or a deal's facts) and who is asking in, a frozen view out; the API only
translates views to messages. The rules, for every phase of a deal:

- Public to everyone (players, spectators, the operator): the seats and their players, who
  contributed entropy, committed, confirmed, revealed or timed out, the entropy itself, every
  commitment (a hash), the seed commitment, the cut, the deadlines and the scores.
- A seat's dealt cards: its own holder's, once the cards are dealt (``GetMyHand``, and the
  ``CardsDealt`` event on the holder's own stream); everybody's once the deal's seed is in the
  log, since from then on anyone can recompute the deck.
- A seat's revealed rows and nonce: nobody's before the seed is in the log (they are in the log
  from the reveal on, but the reveal event is published without them); everybody's after.
- The seed: nobody's before ``SeedRevealed``; everybody's after.
- The operator plays no seat and sees what a spectator sees: the seed stays secret from everyone
  until the deal is settled, so no one can learn a hand from the server before it counts.

Cards come from the secret seed, which views never read: the caller (the application) computes
the hands when it holds the seed and passes them in; a view shows each hand only to whom it may.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sapsam import fairness
from sapsam.domain.deal_facts import DealFacts, SeatFacts
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import DealScored, PairScored
from sapsam.domain.table_state import TablePhase, TableState
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.ruleset import RuleSet

MISSED_DEADLINE_FOUL: Final = "MISSED_DEADLINE"
"""The foul reason of a seat fouled for missing a deadline; the other reasons are the rules'
:class:`~sapsam.rules.arrangement.FoulReason` values, recorded with the reveal."""

Hand = tuple[Card, ...]
Rows = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True)
class Viewer:
    """Who is looking: the seat they hold at this table (None: they hold none), or the operator."""

    seat: int | None = None
    operator: bool = False

    @classmethod
    def of(cls, state: TableState, player_id: str | None, *, operator: bool = False) -> Viewer:
        """The viewer a caller is at this table: a player by the seat they hold, if any."""
        if operator or player_id is None:
            return OPERATOR if operator else SPECTATOR
        return cls(seat=state.seat_of(player_id))


SPECTATOR: Final = Viewer()
"""Anyone without a seat at the table: another player, a spectator, the public event feed."""
OPERATOR: Final = Viewer(operator=True)


def may_see_hand(viewer: Viewer, seat: int, *, dealt: bool, seed_revealed: bool) -> bool:
    """Whether ``viewer`` may see ``seat``'s dealt cards: its own once dealt, all after the seed."""
    return seed_revealed or (dealt and viewer.seat == seat)


def may_see_reveal(*, seed_revealed: bool) -> bool:
    """Whether anyone may see a seat's revealed rows and nonce: only once the seed is public."""
    return seed_revealed


# -- the table -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatView:
    """One seat as a viewer sees it; ``hand`` is None when hidden from the viewer (or unknown)."""

    seat: int
    player_id: str | None
    series_total: int
    entropy_contributed: bool = False
    committed: bool = False
    confirmed: bool = False
    revealed: bool = False
    timed_out: bool = False
    hand: Hand | None = None
    surrendered: bool | None = None
    """The seat's announcement in this deal (docs/rules.md §2.8): public once made; ``None``
    before it (or without surrender)."""


@dataclass(frozen=True)
class TableView:
    """A table as a viewer sees it. The deal fields are None between series before any deal."""

    table_id: uuid.UUID
    phase: TablePhase
    rule_set: RuleSet
    seat_count: int
    version: int
    seats: tuple[SeatView, ...]
    dealer: int | None
    deal_number: int | None
    seed_commitment: bytes
    cutter: int | None
    """The seat that cuts (or cut) the current deal, until it is scored."""
    deadline_ms: int | None
    """The deadline of the current stage (arranging, the announcing turn or revealing), if one
    runs."""
    announcing: int | None = None
    """The seat whose turn it is to announce play or surrender (phase ``ANNOUNCING``)."""


def table_view_for(
    state: TableState, viewer: Viewer, dealt_hands: Sequence[Hand] | None = None
) -> TableView:
    """The table as ``viewer`` may see it; ``dealt_hands``, when the application computed the
    current deal's hands, are shown seat by seat as :func:`may_see_hand` allows."""
    assert state.table_id is not None
    deal = state.deal
    seed_revealed = deal is not None and deal.seed is not None
    seats = []
    for seat, player_id in enumerate(state.seats):
        series_total = state.series_totals[seat] if state.series_totals else 0
        if deal is None:
            seats.append(SeatView(seat, player_id, series_total))
            continue
        shown = dealt_hands is not None and may_see_hand(
            viewer, seat, dealt=deal.dealt, seed_revealed=seed_revealed
        )
        seats.append(
            SeatView(
                seat,
                player_id,
                series_total,
                entropy_contributed=deal.contributions[seat] is not None,
                committed=deal.commitments[seat] is not None,
                confirmed=deal.confirmed[seat],
                revealed=deal.reveals[seat] is not None,
                timed_out=deal.timeouts[seat] is not None,
                hand=tuple(dealt_hands[seat]) if shown and dealt_hands is not None else None,
                surrendered=(
                    None if deal.announcements is None else deal.announcements.surrendered[seat]
                ),
            )
        )
    phase = state.phase
    deadline_ms = None
    announcing = None
    if deal is not None and phase is TablePhase.ARRANGING:
        deadline_ms = deal.arrange_deadline_ms
    elif deal is not None and phase is TablePhase.REVEALING:
        deadline_ms = deal.reveal_deadline_ms
    elif deal is not None and deal.announcements is not None and phase is TablePhase.ANNOUNCING:
        deadline_ms = deal.announcements.deadline_ms
        announcing = deal.announcements.turn
    return TableView(
        table_id=state.table_id,
        phase=phase,
        rule_set=state.rule_set,
        seat_count=state.seat_count,
        version=state.version,
        seats=tuple(seats),
        dealer=deal.dealer if deal is not None else state.first_dealer,
        deal_number=deal.number if deal is not None else None,
        seed_commitment=deal.seed_commitment if deal is not None else b"",
        cutter=(
            fairness.cutter_for(deal.dealer, state.seat_count)
            if deal is not None and not deal.scored and not deal.voided
            else None
        ),
        deadline_ms=deadline_ms,
        announcing=announcing,
    )


def own_hand_seat(state: TableState, viewer: Viewer) -> int:
    """The seat whose dealt cards ``viewer`` may be given now (``GetMyHand``): their own, once the
    cards are dealt. Decided before any hand is computed, so no other seat's ever is for them."""
    if viewer.seat is None:
        raise DomainError(Reason.NOT_SEATED, "you do not hold a seat at this table")
    deal = state.deal
    dealt = deal is not None and deal.dealt
    seed_revealed = deal is not None and deal.seed is not None
    if not may_see_hand(viewer, viewer.seat, dealt=dealt, seed_revealed=seed_revealed):
        raise DomainError(Reason.WRONG_PHASE, "no cards have been dealt yet")
    return viewer.seat


def dealt_cards_for(
    state: TableState, viewer: Viewer, dealt_hands: Sequence[Hand] | None
) -> Hand | None:
    """The cards ``viewer`` is shown with the deal (the ``CardsDealt`` event, on its stream),
    from ``state`` as it stands just after the cards were dealt: its own seat's, sorted as
    ``GetMyHand`` gives them, as :func:`may_see_hand` allows; None for anyone else (another
    seat's holder, a spectator, the operator) and when the hands are not known."""
    deal = state.deal
    if deal is None or dealt_hands is None or viewer.seat is None:
        return None
    seed_revealed = deal.seed is not None
    if not may_see_hand(viewer, viewer.seat, dealt=deal.dealt, seed_revealed=seed_revealed):
        return None
    return tuple(sorted(dealt_hands[viewer.seat]))


def dealt_cards_by_player(state: TableState, dealt_hands: Sequence[Hand] | None) -> dict[str, Hand]:
    """Each seated player whose view of the deal differs from the public one (``SPECTATOR``
    sees no cards), with the cards :func:`dealt_cards_for` shows it; everyone else is sent the
    public view."""
    shown = {}
    for player_id in state.seats:
        if player_id is None:
            continue
        cards = dealt_cards_for(state, Viewer.of(state, player_id), dealt_hands)
        if cards is not None:
            shown[player_id] = cards
    return shown


# -- a deal's record -----------------------------------------------------------------------------


@dataclass(frozen=True)
class DealSeatView:
    """One seat of a deal as a viewer sees it; None (or empty) where hidden from the viewer."""

    seat: int
    entropy: bytes
    commitment: bytes
    confirmed: bool
    timed_out_stage: str | None
    timeout_consequence: str | None
    hand: Hand | None
    arrangement: Rows | None
    nonce: bytes | None
    foul: bool
    foul_reason: str
    natural: str
    """The natural declaration the seat opened (``none`` or a natural), shown with the rows once
    the seed is public; empty before, or at a table without naturals."""
    score_delta: int | None
    series_total: int | None


@dataclass(frozen=True)
class DealView:
    """A deal's record as a viewer sees it (``GetDealResult``, the feed's ``DealScored``)."""

    deal_number: int
    dealer: int
    cutter: int
    seed_commitment: bytes
    cut_position: int | None
    seed: bytes | None
    scored: bool
    seats: tuple[DealSeatView, ...]
    pairs: tuple[PairScored, ...]


def deal_view_for(
    table_id: uuid.UUID,
    seat_count: int,
    facts: DealFacts,
    viewer: Viewer,
    dealt_hands: Sequence[Hand] | None = None,
) -> DealView:
    """Deal ``facts`` as ``viewer`` may see them. Once the seed is in the log the hands are
    recomputed from it; before, only ``dealt_hands`` the application passes can show one."""
    seed_revealed = facts.seed is not None
    if facts.seed is not None and facts.cut is not None:
        contributions = [facts.seat(seat).entropy or None for seat in range(seat_count)]
        # The deal's result and its DealScored message ask for the same hands the score just
        # dealt: taken from the memo of the last deals (~120 us a deal of the deck otherwise).
        dealt_hands = fairness.remembered_hands_for_deal(
            facts.seed,
            contributions,
            table_id,
            facts.deal_number,
            facts.cut.position,
            facts.dealer,
            seat_count,
        )
    seats = tuple(
        _deal_seat_view(facts, seat, viewer, dealt_hands, seed_revealed)
        for seat in range(seat_count)
    )
    scored = facts.scored
    return DealView(
        deal_number=facts.deal_number,
        dealer=facts.dealer,
        cutter=fairness.cutter_for(facts.dealer, seat_count),
        seed_commitment=facts.seed_commitment,
        cut_position=facts.cut.position if facts.cut is not None else None,
        seed=facts.seed,
        scored=scored is not None,
        seats=seats,
        pairs=scored.pairs if scored is not None else (),
    )


def _deal_seat_view(
    facts: DealFacts,
    seat: int,
    viewer: Viewer,
    dealt_hands: Sequence[Hand] | None,
    seed_revealed: bool,
) -> DealSeatView:
    seat_facts = facts.seat(seat)
    timed_out = seat_facts.timed_out
    scored = facts.scored
    shows_hand = dealt_hands is not None and may_see_hand(
        viewer, seat, dealt=facts.dealt, seed_revealed=seed_revealed
    )
    arrangement, nonce, foul, foul_reason = None, None, False, ""
    if may_see_reveal(seed_revealed=seed_revealed):
        arrangement, nonce, foul, foul_reason = _revealed_rows(seat_facts, seat, scored)
    return DealSeatView(
        seat=seat,
        entropy=seat_facts.entropy,
        commitment=seat_facts.commitment,
        confirmed=seat_facts.confirmed,
        timed_out_stage=timed_out.stage if timed_out is not None else None,
        timeout_consequence=timed_out.consequence if timed_out is not None else None,
        hand=tuple(sorted(dealt_hands[seat])) if shows_hand and dealt_hands is not None else None,
        arrangement=arrangement,
        nonce=nonce,
        foul=foul,
        foul_reason=foul_reason,
        natural=seat_facts.natural if may_see_reveal(seed_revealed=seed_revealed) else "",
        score_delta=scored.totals[seat] if scored is not None else None,
        series_total=scored.series_totals[seat] if scored is not None else None,
    )


def _revealed_rows(
    seat_facts: SeatFacts, seat: int, scored: DealScored | None
) -> tuple[Rows | None, bytes | None, bool, str]:
    """A seat's rows, nonce, foul and foul reason, for a deal whose seed is public."""
    arrangement: Rows | None = None
    nonce: bytes | None = None
    foul, foul_reason = False, ""
    revealed = seat_facts.revealed
    if revealed is not None:
        nonce = bytes.fromhex(revealed.nonce)
        foul = revealed.foul
        foul_reason = revealed.foul_reason or ""
        arrangement = (tuple(revealed.front), tuple(revealed.middle), tuple(revealed.back))
    if scored is not None:
        foul = scored.fouls[seat]
        text = scored.arrangements[seat]
        if text is not None and revealed is None:
            # A solver-set hand (the seat timed out under the solver rule).
            front, middle, back = (
                tuple(str(card) for card in parse_cards(row)) for row in text.split("|")
            )
            arrangement = (front, middle, back)
        if foul and not foul_reason and seat_facts.timed_out is not None:
            foul_reason = MISSED_DEADLINE_FOUL
    return arrangement, nonce, foul, foul_reason

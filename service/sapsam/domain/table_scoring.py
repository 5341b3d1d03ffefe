"""Deciding the end of a deal: the seed's reveal, the score, the series' end (``decide``'s part
for ``RevealSeed``), and the arrangements a deal scores."""

from __future__ import annotations

from collections.abc import Sequence

from sapsam import fairness
from sapsam.domain.commands import RevealSeed
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import (
    DealScored,
    Event,
    PairScored,
    SeatRows,
    SeatStanding,
    SeedRevealed,
    SeriesCompleted,
    SeriesStarted,
)
from sapsam.domain.table_checks import current_deal, require_phase, require_seed_size
from sapsam.domain.table_naturals import seat_verdicts
from sapsam.domain.table_state import DealState, SeatTimeout, TablePhase, TableState
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card, card_texts, format_cards
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.scoring import add_totals, standings
from sapsam.rules.solver import solve
from sapsam.rules.surrender import score_with_surrender


def decide_reveal_seed(state: TableState, command: RevealSeed) -> list[Event]:
    require_phase(state, TablePhase.AWAITING_SEED)
    deal = current_deal(state)
    assert state.table_id is not None and deal.cut_position is not None
    require_seed_size(command.seed, "seed")
    if fairness.seed_commitment(state.table_id, deal.number, command.seed) != deal.seed_commitment:
        raise DomainError(
            Reason.SEED_MISMATCH, "the seed does not match the commitment published for this deal"
        )
    # Remembered: the application dealt these hands for the seats' own calls already.
    hands = fairness.remembered_hands_for_deal(
        command.seed,
        deal.contributions,
        state.table_id,
        deal.number,
        deal.cut_position,
        deal.dealer,
        state.seat_count,
    )
    scored_arrangements = final_arrangements(state.rule_set, deal, hands)
    checks, naturals = seat_verdicts(
        state,
        deal,
        [_NO_ARRANGEMENT if rows is None else rows for rows in scored_arrangements],
        hands,
    )
    fouls = tuple(check.foul for check in checks)
    surrendered = (
        (False,) * state.seat_count
        if deal.announcements is None
        else deal.announcements.surrendering_seats()
    )
    score = score_with_surrender(state.rule_set, checks, surrendered, naturals)
    series_totals = add_totals(state.series_totals, score.totals)
    events: list[Event] = [
        SeedRevealed(deal_number=deal.number, seed=command.seed.hex()),
        DealScored(
            deal_number=deal.number,
            pairs=tuple(
                PairScored(seat_a=pair.seat_a, seat_b=pair.seat_b, rows=pair.rows, delta=pair.delta)
                for pair in score.pairs
            ),
            totals=score.totals,
            fouls=fouls,
            arrangements=tuple(
                None if arrangement is None else arrangement_text(arrangement)
                for arrangement in scored_arrangements
            ),
            series_totals=series_totals,
            # Recorded so that a verifier checks them without running the solver.
            solver_arrangements=tuple(
                seat_rows(arrangement)
                if arrangement is not None and deal.timeouts[seat] is SeatTimeout.SOLVER
                else None
                for seat, arrangement in enumerate(scored_arrangements)
            ),
        ),
    ]
    # Voided deals took numbers but do not count (sapsam.domain.table_void).
    deals_in_series = deal.number - state.series_first_deal + 1 - state.voided_in_series
    if deals_in_series >= state.rule_set.series_length:
        events.append(
            SeriesCompleted(
                deals_played=deals_in_series,
                standings=tuple(
                    SeatStanding(seat=standing.seat, total=standing.total, place=standing.place)
                    for standing in standings(series_totals)
                ),
            )
        )
        if state.after_series == "new_series":
            # A new series: the totals reset, the deal numbers and the dealer rotation go on.
            events.append(
                SeriesStarted(
                    series_number=state.series_number + 1, first_deal_number=deal.number + 1
                )
            )
    return events


# An arrangement with no cards: judged a foul (wrong row sizes) by the rules engine, which is how a
# seat that never showed a hand is scored.
_NO_ARRANGEMENT = Arrangement(front=(), middle=(), back=())


def final_arrangements(
    rule_set: RuleSet, deal: DealState, hands: Sequence[Sequence[Card]]
) -> tuple[Arrangement | None, ...]:
    """Per seat, the arrangement that is scored: the revealed one, the solver's for a seat that
    timed out under the solver rule, or ``None`` for a seat that timed out into a foul."""
    result: list[Arrangement | None] = []
    for seat, dealt in enumerate(hands):
        reveal = deal.reveals[seat]
        if reveal is not None:
            result.append(reveal.arrangement)
        elif deal.timeouts[seat] is SeatTimeout.SOLVER:
            result.append(solve(dealt, rule_set))
        else:
            result.append(None)
    return tuple(result)


def seat_rows(arrangement: Arrangement) -> SeatRows:
    """An arrangement's rows in card notation, cards in the order the arrangement holds them."""
    return SeatRows(
        front=tuple(card_texts(arrangement.front)),
        middle=tuple(card_texts(arrangement.middle)),
        back=tuple(card_texts(arrangement.back)),
    )


def arrangement_text(arrangement: Arrangement) -> str:
    """Rows as ``front|middle|back`` in card notation, e.g. ``2s 2h Ad|7c 7d 9s 5h 3d|…``."""
    return "|".join(
        format_cards(row) for row in (arrangement.front, arrangement.middle, arrangement.back)
    )

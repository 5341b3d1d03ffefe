"""The table aggregate's ``decide(state, command) -> events``: one function per command.

Only ``decide`` validates: it refuses a command with a ``DomainError`` and then produces no events.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sapsam import fairness
from sapsam.domain.commands import (
    ChooseDealer,
    CommitArrangement,
    ConfirmArrangement,
    ContributeEntropy,
    CreateTable,
    CutDeck,
    DealCards,
    RevealArrangement,
    RevealSeed,
    SeatPlayer,
    StartDeal,
    TimeOutSeats,
)
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import (
    ArrangementCommitted,
    ArrangementRevealed,
    CardsDealt,
    DealerChosen,
    DealScored,
    DealStarted,
    DeckCut,
    EntropyContributed,
    Event,
    PairScored,
    PlayerSeated,
    RevealsOpened,
    SeatConfirmed,
    SeatRows,
    SeatStanding,
    SeatTimedOut,
    SeedRevealed,
    SeriesCompleted,
    SeriesStarted,
    TableCreated,
)
from sapsam.domain.move_signatures import check_signature
from sapsam.domain.table_deadlines import deadline_extension
from sapsam.domain.table_state import (
    DealState,
    SeatTimeout,
    TablePhase,
    TableState,
    awaits_reveal,
)
from sapsam.fairness import player_keys
from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.cards import Card, format_cards
from sapsam.rules.ruleset import RuleSet, RuleSetError
from sapsam.rules.scoring import add_totals, score_deal, standings
from sapsam.rules.solver import solve

COMMITMENT_BYTES = 32
AFTER_SERIES_OPTIONS = ("close", "new_series")


def decide(state: TableState, command: Any) -> list[Event]:
    """The events a command produces on this table, or a ``DomainError`` refusing it."""
    handler = _DECIDERS.get(type(command))
    if handler is None:
        raise DomainError(Reason.INVALID_ARGUMENT, f"unknown command {type(command).__name__}")
    if not isinstance(command, CreateTable) and state.table_id is None:
        raise DomainError(Reason.TABLE_NOT_CREATED, "the table does not exist")
    return handler(state, command)


def _require_phase(state: TableState, *phases: TablePhase) -> None:
    if state.phase not in phases:
        if state.phase is TablePhase.SERIES_COMPLETE:
            # Not a moment to wait for: no move will ever be accepted again (docs/api.md).
            raise DomainError(Reason.SERIES_COMPLETE, "the series is over; the table is closed")
        wanted = " or ".join(phase.value for phase in phases)
        raise DomainError(
            Reason.WRONG_PHASE,
            f"the table is in phase {state.phase.value}; this needs {wanted}",
        )


def _seat_for(state: TableState, player_id: str) -> int:
    seat = state.seat_of(player_id)
    if seat is None:
        raise DomainError(Reason.NOT_SEATED, "you do not hold a seat at this table")
    return seat


def _require_seed_size(seed: bytes, field: str) -> None:
    if len(seed) != fairness.SEED_BYTES:
        raise DomainError(
            Reason.BAD_SEED,
            f"a seed is {fairness.SEED_BYTES} bytes, not {len(seed)}",
            field=field,
        )


def _require_deal(state: TableState, deal_number: int | None) -> None:
    # Checked before the phase so a call for a past deal gets this reason, not WRONG_PHASE.
    if deal_number is None:
        return
    current = None if state.deal is None else state.deal.number
    if deal_number != current:
        now = "no deal has started" if current is None else f"the current deal is {current}"
        raise DomainError(Reason.WRONG_DEAL, f"this call is for deal {deal_number}, but {now}")


def _current_deal(state: TableState) -> DealState:
    # Only called after a phase check that implies a running deal.
    assert state.deal is not None
    return state.deal


def _decide_create(state: TableState, command: CreateTable) -> list[Event]:
    if state.table_id is not None:
        raise DomainError(Reason.TABLE_EXISTS, "the table already exists")
    rule_set = command.rule_set
    if not rule_set.min_seats <= command.seat_count <= rule_set.max_seats:
        raise DomainError(
            Reason.BAD_SEAT_COUNT,
            f"seat count must be {rule_set.min_seats} to {rule_set.max_seats} under rule set "
            f"{rule_set.name!r}, not {command.seat_count}",
            field="seat_count",
        )
    try:
        rule_set.check_limits()  # recorded rule sets are read as they are; new ones are bounded
    except RuleSetError as error:
        raise DomainError(Reason.BAD_RULE_SET, str(error), field="rule_set") from None
    if len(command.lot_commitment) != COMMITMENT_BYTES:
        raise DomainError(Reason.BAD_COMMITMENT, "the lot commitment must be 32 bytes")
    if command.after_series not in AFTER_SERIES_OPTIONS:
        raise DomainError(
            Reason.INVALID_ARGUMENT,
            f"after_series must be one of {', '.join(AFTER_SERIES_OPTIONS)}",
            field="after_series",
        )
    return [
        TableCreated(
            table_id=str(command.table_id),
            rule_set=rule_set.to_dict(),
            seat_count=command.seat_count,
            lot_commitment=command.lot_commitment.hex(),
            created_by=command.created_by,
            after_series=command.after_series,
        )
    ]


def _decide_seat(state: TableState, command: SeatPlayer) -> list[Event]:
    if state.seat_of(command.player_id) is not None:
        raise DomainError(Reason.ALREADY_SEATED, "you already hold a seat at this table")
    if all(holder is not None for holder in state.seats):
        raise DomainError(Reason.TABLE_FULL, "every seat at this table is taken")
    if command.seat is None:
        free = [seat for seat, holder in enumerate(state.seats) if holder is None]
        seat = free[0]
    else:
        seat = command.seat
        if not 0 <= seat < state.seat_count:
            raise DomainError(
                Reason.UNKNOWN_SEAT,
                f"seat {seat} does not exist; this table has seats 0 to {state.seat_count - 1}",
                field="seat",
            )
        if state.seats[seat] is not None:
            raise DomainError(Reason.SEAT_TAKEN, f"seat {seat} is taken")
    return [PlayerSeated(seat=seat, player_id=command.player_id)]


def _decide_choose_dealer(state: TableState, command: ChooseDealer) -> list[Event]:
    _require_phase(state, TablePhase.AWAITING_DEALER)
    assert state.table_id is not None
    _require_seed_size(command.lot_seed, "lot_seed")
    if fairness.lot_commitment(state.table_id, command.lot_seed) != state.lot_commitment:
        raise DomainError(
            Reason.SEED_MISMATCH, "the lot seed does not match the commitment made at creation"
        )
    lot = fairness.draw_dealer(command.lot_seed, state.table_id, state.seat_count)
    return [
        DealerChosen(
            dealer=lot.dealer,
            lot_seed=command.lot_seed.hex(),
            lot_cards=tuple(str(card) for card in lot.cards),
        )
    ]


def _decide_start_deal(state: TableState, command: StartDeal) -> list[Event]:
    _require_phase(state, TablePhase.BETWEEN_DEALS)
    if len(command.seed_commitment) != COMMITMENT_BYTES:
        raise DomainError(Reason.BAD_COMMITMENT, "the seed commitment must be 32 bytes")
    dealer = state.next_dealer
    assert dealer is not None
    return [
        DealStarted(
            deal_number=state.deals_scored + 1,
            dealer=dealer,
            seed_commitment=command.seed_commitment.hex(),
        )
    ]


def _decide_contribute(state: TableState, command: ContributeEntropy) -> list[Event]:
    seat = _seat_for(state, command.player_id)
    _require_phase(state, TablePhase.AWAITING_CUT)
    deal = _current_deal(state)
    if deal.contributions[seat] is not None:
        raise DomainError(Reason.ALREADY_CONTRIBUTED, "this seat already contributed entropy")
    if not 1 <= len(command.entropy) <= fairness.MAX_CONTRIBUTION_BYTES:
        raise DomainError(
            Reason.BAD_ENTROPY,
            f"entropy must be 1 to {fairness.MAX_CONTRIBUTION_BYTES} bytes, "
            f"not {len(command.entropy)}",
            field="entropy",
        )
    return [EntropyContributed(deal_number=deal.number, seat=seat, entropy=command.entropy.hex())]


def _decide_cut(state: TableState, command: CutDeck) -> list[Event]:
    seat = _seat_for(state, command.player_id)
    _require_phase(state, TablePhase.AWAITING_CUT)
    deal = _current_deal(state)
    cutter = fairness.cutter_for(deal.dealer, state.seat_count)
    if seat != cutter:
        raise DomainError(
            Reason.NOT_YOUR_TURN, f"seat {cutter}, on the dealer's right, cuts; you hold {seat}"
        )
    if not 1 <= command.position <= 51:
        raise DomainError(
            Reason.BAD_CUT_POSITION,
            f"cut position must be 1 to 51, not {command.position}",
            field="position",
        )
    return [DeckCut(deal_number=deal.number, seat=seat, position=command.position)]


def _decide_deal_cards(state: TableState, command: DealCards) -> list[Event]:
    _require_phase(state, TablePhase.DEALING)
    deal = _current_deal(state)
    if len(command.deal_record.hands) != state.seat_count:
        raise DomainError(Reason.INVALID_ARGUMENT, "the deal record must cover every seat")
    limit = state.rule_set.arrange_seconds
    deadline = None if limit is None else command.now_ms + limit * 1000
    return [
        CardsDealt(
            deal_number=deal.number,
            deck_digest=command.deal_record.deck.hex(),
            cut_deck_digest=command.deal_record.cut_deck.hex(),
            hand_digests=tuple(digest.hex() for digest in command.deal_record.hands),
            arrange_deadline_ms=deadline,
        ),
    ]


def _require_arranging_seat(
    state: TableState, player_id: str, deal_number: int | None
) -> tuple[DealState, int]:
    seat = _seat_for(state, player_id)
    _require_deal(state, deal_number)
    _require_phase(state, TablePhase.ARRANGING)
    deal = _current_deal(state)
    if deal.timeouts[seat] is not None:
        raise DomainError(Reason.SEAT_TIMED_OUT, "this seat missed its deadline for this deal")
    if deal.confirmed[seat]:
        raise DomainError(Reason.ALREADY_CONFIRMED, "this seat already confirmed its arrangement")
    return deal, seat


def _decide_commit(state: TableState, command: CommitArrangement) -> list[Event]:
    deal, seat = _require_arranging_seat(state, command.player_id, command.deal_number)
    if len(command.commitment) != COMMITMENT_BYTES:
        raise DomainError(
            Reason.BAD_COMMITMENT,
            f"a commitment is a 32-byte SHA-256 hash, not {len(command.commitment)} bytes",
            field="commitment",
        )
    if command.scheme not in fairness.COMMITMENT_SCHEMES:
        raise DomainError(
            Reason.BAD_COMMITMENT,
            f"commitment scheme {command.scheme} is unknown: 1 or 2 (docs/fairness.md §12)",
            field="commitment_scheme",
        )
    table_id = state.table_id
    assert table_id is not None
    signed = check_signature(
        command.signature,
        command.player_keys,
        lambda: player_keys.commit_message(
            table_id, deal.number, seat, command.player_id, command.scheme, command.commitment
        ),
    )
    return [
        ArrangementCommitted(
            deal_number=deal.number,
            seat=seat,
            commitment=command.commitment.hex(),
            scheme=command.scheme,
            player_key=None if signed is None else signed.public_key.hex(),
            signature=None if signed is None else signed.signature.hex(),
        )
    ]


def _decide_confirm(state: TableState, command: ConfirmArrangement) -> list[Event]:
    deal, seat = _require_arranging_seat(state, command.player_id, command.deal_number)
    commitment = deal.commitments[seat]
    if commitment is None:
        raise DomainError(Reason.NO_COMMITMENT, "commit an arrangement before confirming it")
    events: list[Event] = [
        SeatConfirmed(
            deal_number=deal.number,
            seat=seat,
            commitment=commitment.hex(),
            scheme=deal.commitment_schemes[seat],
        )
    ]
    settled = all(
        other == seat or deal.confirmed[other] or deal.timeouts[other] is not None
        for other in range(state.seat_count)
    )
    if settled:
        events.append(_reveals_opened(state, deal, command.now_ms))
    return events


def _reveals_opened(state: TableState, deal: DealState, now_ms: int) -> RevealsOpened:
    limit = state.rule_set.reveal_seconds
    deadline = None if limit is None else now_ms + limit * 1000
    return RevealsOpened(deal_number=deal.number, reveal_deadline_ms=deadline)


def _decide_reveal(state: TableState, command: RevealArrangement) -> list[Event]:
    seat = _seat_for(state, command.player_id)
    _require_deal(state, command.deal_number)
    _require_phase(state, TablePhase.REVEALING)
    deal = _current_deal(state)
    table_id = state.table_id
    assert table_id is not None
    if deal.reveals[seat] is not None:
        raise DomainError(Reason.ALREADY_REVEALED, "this seat already revealed")
    if deal.timeouts[seat] is not None:
        raise DomainError(Reason.SEAT_TIMED_OUT, "this seat missed its deadline for this deal")
    if not fairness.MIN_NONCE_BYTES <= len(command.nonce) <= fairness.MAX_NONCE_BYTES:
        raise DomainError(
            Reason.BAD_NONCE,
            f"the nonce must be {fairness.MIN_NONCE_BYTES} to {fairness.MAX_NONCE_BYTES} bytes, "
            f"not {len(command.nonce)}",
            field="nonce",
        )
    commitment = deal.commitments[seat]
    assert commitment is not None  # a confirmed seat always has one
    arrangement = command.arrangement
    if not fairness.check_reveal(
        commitment,
        table_id,
        deal.number,
        seat,
        arrangement,
        command.nonce,
        scheme=deal.commitment_schemes[seat],
        player_id=command.player_id,
    ):
        raise DomainError(
            Reason.COMMITMENT_MISMATCH,
            "these rows and nonce do not hash to the commitment this seat confirmed",
        )
    signed = check_signature(
        command.signature,
        command.player_keys,
        lambda: player_keys.reveal_message(
            table_id, deal.number, seat, command.player_id, arrangement, command.nonce
        ),
    )
    check = check_arrangement(arrangement, command.dealt)
    return [
        ArrangementRevealed(
            deal_number=deal.number,
            seat=seat,
            front=tuple(str(card) for card in arrangement.front),
            middle=tuple(str(card) for card in arrangement.middle),
            back=tuple(str(card) for card in arrangement.back),
            nonce=command.nonce.hex(),
            foul=check.foul,
            foul_reason=None if check.reason is None else check.reason.value,
            player_key=None if signed is None else signed.public_key.hex(),
            signature=None if signed is None else signed.signature.hex(),
        )
    ]


def _decide_time_out(state: TableState, command: TimeOutSeats) -> list[Event]:
    extended = deadline_extension(state, command)
    if extended is not None:
        return [extended]
    phase = state.phase
    deal = state.deal
    events: list[Event] = []
    if phase is TablePhase.ARRANGING and deal is not None:
        deadline = deal.arrange_deadline_ms
        if deadline is not None and command.now_ms >= deadline:
            consequence = SeatTimeout(state.rule_set.arrange_timeout_policy.value)
            for seat in range(state.seat_count):
                if not deal.confirmed[seat] and deal.timeouts[seat] is None:
                    events.append(
                        SeatTimedOut(
                            deal_number=deal.number,
                            seat=seat,
                            stage="arranging",
                            consequence=consequence.value,
                        )
                    )
            if events:
                events.append(_reveals_opened(state, deal, command.now_ms))
    elif phase is TablePhase.REVEALING and deal is not None:
        deadline = deal.reveal_deadline_ms
        if deadline is not None and command.now_ms >= deadline:
            events.extend(
                SeatTimedOut(
                    deal_number=deal.number,
                    seat=seat,
                    stage="revealing",
                    consequence=SeatTimeout.FOUL.value,
                )
                for seat in range(state.seat_count)
                if awaits_reveal(deal, seat)
            )
    if not events:
        raise DomainError(Reason.NOTHING_TIMED_OUT, "no deadline has passed at this table")
    return events


def _decide_reveal_seed(state: TableState, command: RevealSeed) -> list[Event]:
    _require_phase(state, TablePhase.AWAITING_SEED)
    deal = _current_deal(state)
    assert state.table_id is not None and deal.cut_position is not None
    _require_seed_size(command.seed, "seed")
    if fairness.seed_commitment(state.table_id, deal.number, command.seed) != deal.seed_commitment:
        raise DomainError(
            Reason.SEED_MISMATCH, "the seed does not match the commitment published for this deal"
        )
    hands = fairness.hands_for_deal(
        command.seed,
        deal.contributions,
        state.table_id,
        deal.number,
        deal.cut_position,
        deal.dealer,
        state.seat_count,
    )
    scored_arrangements = final_arrangements(state.rule_set, deal, hands)
    checks = [
        check_arrangement(arrangement if arrangement is not None else _NO_ARRANGEMENT, dealt)
        for arrangement, dealt in zip(scored_arrangements, hands, strict=True)
    ]
    fouls = tuple(check.foul for check in checks)
    score = score_deal(state.rule_set, checks)
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
    deals_in_series = deal.number - state.series_first_deal + 1
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
        front=tuple(str(card) for card in arrangement.front),
        middle=tuple(str(card) for card in arrangement.middle),
        back=tuple(str(card) for card in arrangement.back),
    )


def arrangement_text(arrangement: Arrangement) -> str:
    """Rows as ``front|middle|back`` in card notation, e.g. ``2s 2h Ad|7c 7d 9s 5h 3d|…``."""
    return "|".join(
        format_cards(row) for row in (arrangement.front, arrangement.middle, arrangement.back)
    )


_DECIDERS: dict[type[Any], Callable[[TableState, Any], list[Event]]] = {
    CreateTable: _decide_create,
    SeatPlayer: _decide_seat,
    ChooseDealer: _decide_choose_dealer,
    StartDeal: _decide_start_deal,
    ContributeEntropy: _decide_contribute,
    CutDeck: _decide_cut,
    DealCards: _decide_deal_cards,
    CommitArrangement: _decide_commit,
    ConfirmArrangement: _decide_confirm,
    RevealArrangement: _decide_reveal,
    TimeOutSeats: _decide_time_out,
    RevealSeed: _decide_reveal_seed,
}

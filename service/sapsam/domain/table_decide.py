"""The table aggregate's ``decide(state, command) -> events``: one function per command.

Only ``decide`` validates: it refuses a command with a ``DomainError`` and then produces no events.
Setting up a table and a deal is decided here; the play of a deal (commit, confirm, reveal,
deadlines) in ``table_play``, its end (the seed, the score) in ``table_scoring``; the checks they
share are ``table_checks``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sapsam.domain.commands import (
    AnnounceSurrender,
    ChooseDealer,
    CommitArrangement,
    ConfirmArrangement,
    ContributeEntropy,
    CreateTable,
    CutDeck,
    DealCards,
    DeclareNatural,
    ReplaceSeat,
    RevealArrangement,
    RevealSeed,
    SeatPlayer,
    StartDeal,
    TimeOutSeats,
    VoidDeal,
)
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import (
    CardsDealt,
    DealStarted,
    Event,
    TableCreated,
)
from sapsam.domain.table_checks import current_deal, require_phase, seat_for
from sapsam.domain.table_frame import (
    decide_cut_at,
    decide_dealer_lot,
    decide_entropy,
    decide_seating,
    require_hash_size,
    require_seat_count,
)
from sapsam.domain.table_naturals import decide_declare
from sapsam.domain.table_play import (
    COMMITMENT_BYTES,
    decide_commit,
    decide_confirm,
    decide_reveal,
    decide_time_out,
)
from sapsam.domain.table_replace import decide_replace
from sapsam.domain.table_scoring import (
    arrangement_text,
    decide_reveal_seed,
    final_arrangements,
    seat_rows,
)
from sapsam.domain.table_state import TablePhase, TableState
from sapsam.domain.table_surrender import decide_announce
from sapsam.domain.table_void import decide_void
from sapsam.rules.ruleset import RuleSetError

__all__ = [
    "AFTER_SERIES_OPTIONS",
    "COMMITMENT_BYTES",
    "arrangement_text",
    "decide",
    "final_arrangements",
    "seat_rows",
]

AFTER_SERIES_OPTIONS = ("close", "new_series")


def decide(state: TableState, command: Any) -> list[Event]:
    """The events a command produces on this table, or a ``DomainError`` refusing it."""
    handler = _DECIDERS.get(type(command))
    if handler is None:
        raise DomainError(Reason.INVALID_ARGUMENT, f"unknown command {type(command).__name__}")
    if not isinstance(command, CreateTable) and state.table_id is None:
        raise DomainError(Reason.TABLE_NOT_CREATED, "the table does not exist")
    return handler(state, command)


def _decide_create(state: TableState, command: CreateTable) -> list[Event]:
    if state.table_id is not None:
        raise DomainError(Reason.TABLE_EXISTS, "the table already exists")
    rule_set = command.rule_set
    require_seat_count(rule_set.min_seats, rule_set.max_seats, rule_set.name, command.seat_count)
    try:
        rule_set.check_limits()  # recorded rule sets are read as they are; new ones are bounded
    except RuleSetError as error:
        raise DomainError(Reason.BAD_RULE_SET, str(error), field="rule_set") from None
    require_hash_size(command.lot_commitment, "lot commitment")
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
    return decide_seating(state.seats, command.player_id, command.seat)


def _decide_choose_dealer(state: TableState, command: ChooseDealer) -> list[Event]:
    require_phase(state, TablePhase.AWAITING_DEALER)
    assert state.table_id is not None
    return decide_dealer_lot(
        state.table_id, state.lot_commitment, state.seat_count, command.lot_seed
    )


def _decide_start_deal(state: TableState, command: StartDeal) -> list[Event]:
    require_phase(state, TablePhase.BETWEEN_DEALS)
    require_hash_size(command.seed_commitment, "seed commitment")
    dealer = state.next_dealer
    assert dealer is not None
    number = state.next_deal_number
    return [
        DealStarted(
            deal_number=number,
            dealer=dealer,
            seed_commitment=command.seed_commitment.hex(),
        )
    ]


def _decide_contribute(state: TableState, command: ContributeEntropy) -> list[Event]:
    seat = seat_for(state, command.player_id)
    require_phase(state, TablePhase.AWAITING_CUT)
    deal = current_deal(state)
    contributed = deal.contributions[seat] is not None
    return decide_entropy(deal.number, seat, contributed, command.entropy)


def _decide_cut(state: TableState, command: CutDeck) -> list[Event]:
    seat = seat_for(state, command.player_id)
    require_phase(state, TablePhase.AWAITING_CUT)
    deal = current_deal(state)
    return decide_cut_at(deal.number, deal.dealer, state.seat_count, seat, command.position)


def _decide_deal_cards(state: TableState, command: DealCards) -> list[Event]:
    require_phase(state, TablePhase.DEALING)
    deal = current_deal(state)
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


_DECIDERS: dict[type[Any], Callable[[TableState, Any], list[Event]]] = {
    CreateTable: _decide_create,
    SeatPlayer: _decide_seat,
    ChooseDealer: _decide_choose_dealer,
    StartDeal: _decide_start_deal,
    ContributeEntropy: _decide_contribute,
    CutDeck: _decide_cut,
    DealCards: _decide_deal_cards,
    CommitArrangement: decide_commit,
    DeclareNatural: decide_declare,
    ConfirmArrangement: decide_confirm,
    RevealArrangement: decide_reveal,
    AnnounceSurrender: decide_announce,
    TimeOutSeats: decide_time_out,
    RevealSeed: decide_reveal_seed,
    VoidDeal: decide_void,
    ReplaceSeat: decide_replace,
}

"""Deciding a deal's play: commit, confirm, reveal, and the deadlines (``decide``'s part for the
arranging and revealing phases; ``sapsam.domain.table_decide`` dispatches to it)."""

from __future__ import annotations

from sapsam import fairness
from sapsam.domain.commands import (
    CommitArrangement,
    ConfirmArrangement,
    RevealArrangement,
    TimeOutSeats,
)
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import (
    ArrangementCommitted,
    ArrangementRevealed,
    Event,
    SeatConfirmed,
    SeatTimedOut,
)
from sapsam.domain.move_signatures import check_signature
from sapsam.domain.table_checks import current_deal, require_deal, require_phase, seat_for
from sapsam.domain.table_deadlines import deadline_extension
from sapsam.domain.table_frame import (
    require_arrangement_commitment,
    require_nonce_size,
    require_seat_index,
)
from sapsam.domain.table_naturals import open_declaration, require_declared, reveal_verdict
from sapsam.domain.table_state import DealState, SeatTimeout, TablePhase, TableState, awaits_reveal
from sapsam.domain.table_surrender import announcing_time_out, close_arranging
from sapsam.fairness import player_keys
from sapsam.rules.cards import card_texts

COMMITMENT_BYTES = 32


def _require_arranging_seat(
    state: TableState, player_id: str, deal_number: int | None
) -> tuple[DealState, int]:
    seat = seat_for(state, player_id)
    require_deal(state, deal_number)
    require_phase(state, TablePhase.ARRANGING)
    deal = current_deal(state)
    if deal.timeouts[seat] is not None:
        raise DomainError(Reason.SEAT_TIMED_OUT, "this seat missed its deadline for this deal")
    if deal.confirmed[seat]:
        raise DomainError(Reason.ALREADY_CONFIRMED, "this seat already confirmed its arrangement")
    return deal, seat


def decide_commit(state: TableState, command: CommitArrangement) -> list[Event]:
    deal, seat = _require_arranging_seat(state, command.player_id, command.deal_number)
    require_declared(state, deal, seat)
    require_arrangement_commitment(command.commitment)
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


def decide_confirm(state: TableState, command: ConfirmArrangement) -> list[Event]:
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
        events.append(close_arranging(state, deal, command.now_ms))
    return events


def decide_reveal(state: TableState, command: RevealArrangement) -> list[Event]:
    seat = seat_for(state, command.player_id)
    require_deal(state, command.deal_number)
    require_phase(state, TablePhase.REVEALING)
    deal = current_deal(state)
    table_id = state.table_id
    assert table_id is not None
    if deal.reveals[seat] is not None:
        raise DomainError(Reason.ALREADY_REVEALED, "this seat already revealed")
    if deal.timeouts[seat] is not None:
        raise DomainError(Reason.SEAT_TIMED_OUT, "this seat missed its deadline for this deal")
    require_nonce_size(command.nonce)
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
    opening, natural = open_declaration(state, deal, seat, command)
    check = reveal_verdict(state, arrangement, command.dealt, natural)
    return [
        *opening,
        ArrangementRevealed(
            deal_number=deal.number,
            seat=seat,
            front=tuple(card_texts(arrangement.front)),
            middle=tuple(card_texts(arrangement.middle)),
            back=tuple(card_texts(arrangement.back)),
            nonce=command.nonce.hex(),
            foul=check.foul,
            foul_reason=None if check.reason is None else check.reason.value,
            player_key=None if signed is None else signed.public_key.hex(),
            signature=None if signed is None else signed.signature.hex(),
        ),
    ]


def decide_time_out(state: TableState, command: TimeOutSeats) -> list[Event]:
    if command.forced_seat is not None:
        return _decide_forced_time_out(state, command.forced_seat, command.now_ms)
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
                timing_out = [event.seat for event in events if isinstance(event, SeatTimedOut)]
                events.append(close_arranging(state, deal, command.now_ms, timing_out))
    elif phase is TablePhase.ANNOUNCING and deal is not None:
        events = announcing_time_out(state, command.now_ms, forced=False)
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


def _decide_forced_time_out(state: TableState, seat: int, now_ms: int) -> list[Event]:
    """An operator times one seat out now: the events its deadline would have recorded."""
    require_seat_index(seat, state.seat_count)
    deal = state.deal
    phases = (TablePhase.ARRANGING, TablePhase.ANNOUNCING, TablePhase.REVEALING)
    if deal is None or state.phase not in phases:
        raise DomainError(
            Reason.WRONG_PHASE,
            f"a seat can be timed out only while the deal is arranging, announcing or revealing,"
            f" not in {state.phase.value}",
        )
    if state.phase is TablePhase.ANNOUNCING:
        announcements = deal.announcements
        turn = None if announcements is None else announcements.turn
        if seat != turn:
            raise DomainError(
                Reason.NOTHING_TIMED_OUT,
                f"seat {seat} is not awaited: seat {turn} announces now",
            )
        return announcing_time_out(state, now_ms, forced=True)
    if state.phase is TablePhase.ARRANGING:
        if deal.confirmed[seat] or deal.timeouts[seat] is not None:
            raise DomainError(
                Reason.NOTHING_TIMED_OUT, f"seat {seat} is not awaited: it already confirmed"
            )
        events: list[Event] = [
            SeatTimedOut(
                deal_number=deal.number,
                seat=seat,
                stage="arranging",
                consequence=state.rule_set.arrange_timeout_policy.value,
            )
        ]
        settled = all(
            other == seat or deal.confirmed[other] or deal.timeouts[other] is not None
            for other in range(state.seat_count)
        )
        if settled:
            events.append(close_arranging(state, deal, now_ms, (seat,)))
        return events
    if not awaits_reveal(deal, seat):
        raise DomainError(
            Reason.NOTHING_TIMED_OUT, f"seat {seat} is not awaited: it already revealed"
        )
    return [
        SeatTimedOut(
            deal_number=deal.number,
            seat=seat,
            stage="revealing",
            consequence=SeatTimeout.FOUL.value,
        )
    ]

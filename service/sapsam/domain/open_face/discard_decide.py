"""``decide`` for opening a Pineapple seat's discards at the end of the deal (docs/fairness.md
§23): each committed discard is checked against the cards the seat was dealt on its street and
against its commitment; a mismatch is refused and nothing is recorded."""

from __future__ import annotations

from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import Event
from sapsam.domain.move_signatures import check_signature
from sapsam.domain.open_face.commands import RevealDiscards, TimeOutDiscards
from sapsam.domain.open_face.deal_deadlines import deadline_extensions
from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase
from sapsam.domain.open_face.events import (
    TIMED_OUT_BY_OPERATOR,
    TIMED_OUT_BY_SERVICE,
    DiscardsRevealed,
)
from sapsam.domain.table_frame import require_nonce_size, require_seat_index
from sapsam.fairness import player_keys
from sapsam.fairness.discard_commitments import check_discard
from sapsam.rules.cards import format_cards
from sapsam.rules.open_face.board import discards_due

__all__ = ["decide_reveal_discards", "decide_time_out_discards"]


def decide_reveal_discards(deal: OpenFaceDeal, command: RevealDiscards) -> list[Event]:
    """The ``DiscardsRevealed`` of the seat, or a ``DomainError`` refusing the opening."""
    seat = deal.seat_of(command.player_id)
    if seat is None:
        raise DomainError(Reason.NOT_SEATED, "you do not hold a seat at this table")
    if command.deal_number is not None and command.deal_number != deal.number:
        raise DomainError(
            Reason.WRONG_DEAL, f"deal {command.deal_number} is not the current deal ({deal.number})"
        )
    committed = _require_awaited(deal, seat)
    if len(command.cards) != len(committed) or len(command.nonces) != len(committed):
        raise DomainError(
            Reason.INVALID_ARGUMENT,
            f"this seat committed {len(committed)} discards: open each with its cards and nonce",
            field="cards",
        )
    board = set(deal.boards[seat].cards)
    for (street, commitment), cards, nonce in zip(
        committed, command.cards, command.nonces, strict=True
    ):
        require_nonce_size(nonce)
        dealt = command.dealt[street] if street < len(command.dealt) else ()
        due = discards_due(deal.rules, street)
        if (
            len(cards) != due
            or len(set(cards)) != len(cards)
            or not set(cards) <= set(dealt)
            or set(cards) & board
        ):
            raise DomainError(
                Reason.BAD_CARDS,
                f"street {street}'s discard must be the {due} dealt card(s) not placed, "
                f"not {format_cards(cards)}",
                field="cards",
            )
        if not check_discard(
            commitment,
            deal.table_id,
            deal.number,
            seat,
            command.player_id,
            street,
            cards,
            nonce,
        ):
            raise DomainError(
                Reason.COMMITMENT_MISMATCH,
                f"street {street}'s card and nonce do not hash to the commitment this seat made",
            )
    streets = tuple(street for street, _ in committed)
    signed = check_signature(
        command.signature,
        command.player_keys,
        lambda: player_keys.discards_reveal_message(
            deal.table_id,
            deal.number,
            seat,
            command.player_id,
            [
                (street, list(cards), nonce)
                for street, cards, nonce in zip(streets, command.cards, command.nonces, strict=True)
            ],
        ),
    )
    return [
        DiscardsRevealed(
            deal_number=deal.number,
            seat=seat,
            streets=streets,
            cards=tuple(format_cards(cards) for cards in command.cards),
            nonces=tuple(nonce.hex() for nonce in command.nonces),
            player_key=None if signed is None else signed.public_key.hex(),
            signature=None if signed is None else signed.signature.hex(),
        )
    ]


def _require_awaited(deal: OpenFaceDeal, seat: int) -> tuple[tuple[int, bytes], ...]:
    committed = deal.discard_commitments[seat]
    if not committed:
        raise DomainError(Reason.NO_COMMITMENT, "this seat committed no discard in this deal")
    if deal.discards[seat] is not None:
        raise DomainError(Reason.ALREADY_REVEALED, "this seat already opened its discards")
    if (
        deal.phase not in (OpenFacePhase.FANTASYLAND, OpenFacePhase.DISCARDS)
        or deal.fantasyland_hidden
    ):
        raise DomainError(
            Reason.WRONG_PHASE,
            "discards are opened at the end of the deal, once every hand is complete",
        )
    return committed


def decide_time_out_discards(deal: OpenFaceDeal, command: TimeOutDiscards) -> list[Event]:
    """The service opens the discards of a seat that did not by the deadline: each committed
    street's dealt cards left off the board (what the seed and the log fix), ``nonces`` empty
    (the commitment stays unopened; docs/fairness.md §23). The hand is scored as it stands."""
    seat = command.seat
    require_seat_index(seat, deal.seat_count)
    committed = _require_awaited(deal, seat)
    # No outage is held against a seat: a deadline that fell while no server served (or just
    # after) is moved, and no discard is opened by this command. The operator's forced timeout
    # opens them now, whatever the deadline.
    extended = (
        ()
        if command.forced
        else deadline_extensions(deal, command.now_ms, command.unserved, command.grace_ms)
    )
    if extended:
        return list(extended)
    if not command.forced and (deal.deadline_ms is None or command.now_ms < deal.deadline_ms):
        raise DomainError(
            Reason.NOTHING_TIMED_OUT, f"seat {seat}'s time to open its discards has not run out"
        )
    board = set(deal.boards[seat].cards)
    opened: list[str] = []
    for street, _commitment in committed:
        dealt = command.dealt[street] if street < len(command.dealt) else ()
        cards = tuple(card for card in dealt if card not in board)
        if len(cards) != discards_due(deal.rules, street):  # pragma: no cover - the seed's cards
            raise DomainError(
                Reason.BAD_CARDS, f"street {street}'s dealt cards do not match the board"
            )
        opened.append(format_cards(cards))
    return [
        DiscardsRevealed(
            deal_number=deal.number,
            seat=seat,
            streets=tuple(street for street, _ in committed),
            cards=tuple(opened),
            nonces=("",) * len(committed),
            timed_out_by=TIMED_OUT_BY_OPERATOR if command.forced else TIMED_OUT_BY_SERVICE,
        )
    ]

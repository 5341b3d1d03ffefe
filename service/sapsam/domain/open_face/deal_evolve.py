"""``evolve`` for the play of an open-face deal: one function per event. It trusts the log and
never raises for an event ``deal_decide`` could have produced."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sapsam.domain.events import DeadlinesExtended, Event
from sapsam.domain.open_face.deal_deadlines import FANTASYLAND_STAGE, REVEALING_STAGE
from sapsam.domain.open_face.deal_state import OpenFaceDeal
from sapsam.domain.open_face.events import (
    CardsPlaced,
    DiscardCommitted,
    DiscardsRevealed,
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandRevealsOpened,
    FantasylandTimedOut,
    StreetDealt,
)
from sapsam.rules.cards import parse_cards
from sapsam.rules.open_face.automatic import AutomaticReason, timeout_consequence
from sapsam.rules.open_face.board import Board, Placement

__all__ = ["evolve_deal", "fold_deal"]

_Value = TypeVar("_Value")


def _at(values: tuple[_Value, ...], index: int, value: _Value) -> tuple[_Value, ...]:
    return (*values[:index], value, *values[index + 1 :])


def evolve_deal(deal: OpenFaceDeal, event: Event) -> OpenFaceDeal:
    """The deal after one of its events."""
    return _EVOLVERS[type(event)](deal, event)


def fold_deal(deal: OpenFaceDeal, events: Sequence[Event]) -> OpenFaceDeal:
    """The deal after a run of its events."""
    for event in events:
        deal = _EVOLVERS[type(event)](deal, event)
    return deal


def _on_street(deal: OpenFaceDeal, event: StreetDealt) -> OpenFaceDeal:
    # A seat owes a placement when it was dealt cards to place: a Fantasyland seat sets its
    # hand by commitment instead, and a seat dealt none owes nothing.
    placed = tuple(
        count == 0 or deal.is_fantasyland(seat) for seat, count in enumerate(event.card_counts)
    )
    set_ms = _set_at(event.deadline_ms, deal.move_seconds)
    changed = dataclasses.replace(
        deal,
        streets_dealt=event.street + 1,
        placed=placed,
        deadline_ms=event.deadline_ms,
        deadline_set_ms=set_ms,
    )
    if event.street == 0 and any(cards is not None for cards in deal.fantasyland):
        # Every Fantasyland hand is dealt on the first street and due by its deadline.
        changed = dataclasses.replace(
            changed, fantasyland_deadline_ms=event.deadline_ms, fantasyland_deadline_set_ms=set_ms
        )
    return changed


def _set_at(deadline_ms: int | None, seconds: int | None) -> int | None:
    # A deadline is set ``seconds`` before it expires (decide adds them to the time of setting).
    return None if deadline_ms is None or seconds is None else deadline_ms - seconds * 1000


def _on_placed(deal: OpenFaceDeal, event: CardsPlaced) -> OpenFaceDeal:
    placement = Placement(
        parse_cards(event.front), parse_cards(event.middle), parse_cards(event.back)
    )
    board = deal.boards[event.seat].with_placement(placement)
    # The dealt cards not placed were discarded (Pineapple): the count is public, not the card.
    thrown = deal.schedule[event.street][event.seat] - len(placement.cards)
    # With nobody else due this street, the deadline carried is a Fantasyland hand's (decide).
    carried = event.deadline_ms is not None and event.deadline_ms == deal.fantasyland_deadline_ms
    changed = dataclasses.replace(
        deal,
        boards=_at(deal.boards, event.seat, board),
        placed=_at(deal.placed, event.seat, True),
        deadline_ms=event.deadline_ms,
        discards_made=_at(deal.discards_made, event.seat, deal.discards_made[event.seat] + thrown),
        deadline_set_ms=(
            deal.fantasyland_deadline_set_ms
            if carried
            else _set_at(event.deadline_ms, deal.move_seconds)
        ),
    )
    if event.automatic != AutomaticReason.TIMEOUT.value:
        return changed
    # A timeout: the rest of the hand is played for the seat, and under 001's policy the hand
    # is dead (for the set: the table carries it to the next deals).
    return _timed_out(changed, event.seat)


def _timed_out(deal: OpenFaceDeal, seat: int) -> OpenFaceDeal:
    dead = timeout_consequence(deal.rules).dead_until_set_ends
    return dataclasses.replace(
        deal,
        automatic=_at(deal.automatic, seat, True),
        declared_dead=_at(deal.declared_dead, seat, dead or deal.declared_dead[seat]),
        timed_out=_at(deal.timed_out, seat, True),
    )


def _on_fantasyland_timed_out(deal: OpenFaceDeal, event: FantasylandTimedOut) -> OpenFaceDeal:
    # 001: dead for the rest of the set; 003: set for it, alive. Either way the service sets
    # the hand and opens it with the seed (table_decide).
    return _timed_out(deal, event.seat)


def _on_committed(deal: OpenFaceDeal, event: FantasylandCommitted) -> OpenFaceDeal:
    commitment = bytes.fromhex(event.commitment)
    return dataclasses.replace(deal, commitments=_at(deal.commitments, event.seat, commitment))


def _on_revealed(deal: OpenFaceDeal, event: FantasylandRevealed) -> OpenFaceDeal:
    board = Board(parse_cards(event.front), parse_cards(event.middle), parse_cards(event.back))
    return dataclasses.replace(
        deal,
        boards=_at(deal.boards, event.seat, board),
        revealed=_at(deal.revealed, event.seat, True),
        dead=_at(deal.dead, event.seat, event.dead),
    )


def _on_discard_committed(deal: OpenFaceDeal, event: DiscardCommitted) -> OpenFaceDeal:
    made = (*deal.discard_commitments[event.seat], (event.street, bytes.fromhex(event.commitment)))
    return dataclasses.replace(
        deal, discard_commitments=_at(deal.discard_commitments, event.seat, made)
    )


def _on_discards_revealed(deal: OpenFaceDeal, event: DiscardsRevealed) -> OpenFaceDeal:
    opened = tuple(
        (street, parse_cards(cards))
        for street, cards in zip(event.streets, event.cards, strict=True)
    )
    return dataclasses.replace(deal, discards=_at(deal.discards, event.seat, opened))


def _on_reveals_opened(deal: OpenFaceDeal, event: FantasylandRevealsOpened) -> OpenFaceDeal:
    return dataclasses.replace(
        deal,
        reveals_open=True,
        reveal_deadline_ms=event.deadline_ms,
        reveal_deadline_set_ms=_set_at(event.deadline_ms, deal.rules.reveal_limit),
        deadline_ms=event.deadline_ms,
        deadline_set_ms=_set_at(event.deadline_ms, deal.rules.reveal_limit),
    )


def _on_extended(deal: OpenFaceDeal, event: DeadlinesExtended) -> OpenFaceDeal:
    # The moved deadline runs from the end of the outage (as the closed game's).
    if event.stage == REVEALING_STAGE:
        return dataclasses.replace(
            deal,
            reveal_deadline_ms=event.deadline_ms,
            reveal_deadline_set_ms=event.unserved_until_ms,
            deadline_ms=event.deadline_ms,
            deadline_set_ms=event.unserved_until_ms,
        )
    if event.stage == FANTASYLAND_STAGE:
        changed = dataclasses.replace(
            deal,
            fantasyland_deadline_ms=event.deadline_ms,
            fantasyland_deadline_set_ms=event.unserved_until_ms,
        )
        if deal.deadline_ms != event.previous_deadline_ms:
            return changed
        # The deal's next deadline was this one (the first street's, or carried after the
        # last placement of a street): it moves with it.
    else:
        changed = deal
    return dataclasses.replace(
        changed, deadline_ms=event.deadline_ms, deadline_set_ms=event.unserved_until_ms
    )


_EVOLVERS: dict[type[Event], Callable[[OpenFaceDeal, Any], OpenFaceDeal]] = {
    StreetDealt: _on_street,
    CardsPlaced: _on_placed,
    FantasylandCommitted: _on_committed,
    FantasylandRevealed: _on_revealed,
    FantasylandTimedOut: _on_fantasyland_timed_out,
    DiscardCommitted: _on_discard_committed,
    DiscardsRevealed: _on_discards_revealed,
    DeadlinesExtended: _on_extended,
    FantasylandRevealsOpened: _on_reveals_opened,
}

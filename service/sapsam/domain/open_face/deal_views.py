"""What each caller may see of an open-face deal: the one place its hidden information is
withheld. Pure: the deal's state and who is asking in, a frozen view out.

The rules (issue #18; sources 001 and 003):

- Every normal seat's placements are face up: everyone sees them as they are made (players,
  spectators, the operator) -- except while a Fantasyland hand is being set: until every
  Fantasyland seat has committed, a normal seat's placements are shown to that seat alone (001:
  online, the others place while the Fantasyland hand is set, their placements hidden until it
  is committed), so no Fantasyland hand is set knowing the others' cards.
- A Fantasyland hand is set face down: nobody sees its rows before it is revealed at the end of
  the deal (the server does not know them: it holds only the commitment); everybody after.
- Cards dealt: a seat's holder sees its own as they are dealt; nobody sees another seat's before
  the seed is published, everybody after (from then on anyone can recompute the deck). The
  application computes the cards from the secret seed and passes them in; a view shows each to
  whom it may.
- Who plays a Fantasyland hand, who has placed, committed or revealed, whose turn it is, the
  deadline: public.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase
from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import Board

__all__ = [
    "OpenFaceDealView",
    "OpenFaceSeatView",
    "deal_view_for",
    "may_see_board",
    "may_see_dealt",
]


def may_see_board(deal: OpenFaceDeal, viewer: int | None, seat: int) -> bool:
    """Whether ``viewer`` (a seat, or None for a spectator or the operator) may see ``seat``'s
    rows now; a ``CardsPlaced`` of ``seat`` is shown to the viewer exactly when this holds."""
    if deal.is_fantasyland(seat):
        return deal.revealed[seat]
    return viewer == seat or not deal.fantasyland_hidden


def may_see_dealt(
    deal: OpenFaceDeal, viewer: int | None, seat: int, *, seed_revealed: bool
) -> bool:
    """Whether ``viewer`` may see the cards dealt to ``seat``: its own once dealt, everybody's
    once the seed is published."""
    return seed_revealed or (viewer == seat and deal.streets_dealt > 0)


@dataclass(frozen=True)
class OpenFaceSeatView:
    """One seat of the deal as a viewer may see it."""

    seat: int
    player_id: str
    fantasyland: bool
    placed: bool
    """Whether it placed its cards of the current street (or owes none)."""
    committed: bool
    revealed: bool
    board: Board | None
    """Its rows, or None when this viewer may not see them (a hidden board is not an empty one)."""
    dealt: tuple[Card, ...] | None
    """Its cards dealt so far, when the application passed them and this viewer may see them."""
    timed_out: bool = False
    """Whether its time ran out this deal (its moves, or its Fantasyland hand, are made for it)."""
    discards_made: int = 0
    """How many cards it has discarded (Pineapple): all anyone else may know of them before the
    end ("a card was discarded")."""
    discards: tuple[Card, ...] | None = None
    """Its discards, once it opened them at the end of the deal (to every viewer); None before
    (the seat knows its own from its cards ``dealt``)."""


@dataclass(frozen=True)
class OpenFaceDealView:
    """The deal as one viewer may see it."""

    number: int
    dealer: int
    phase: OpenFacePhase
    street: int | None
    """The last street dealt (0 first), None before the first."""
    turn: int | None
    deadline_ms: int | None
    seats: tuple[OpenFaceSeatView, ...]


def _opened_discards(deal: OpenFaceDeal, seat: int) -> tuple[Card, ...] | None:
    opened = deal.discards[seat]
    if opened is None:
        return None
    return tuple(card for _street, cards in opened for card in cards)


def deal_view_for(
    deal: OpenFaceDeal,
    viewer: int | None,
    dealt: Sequence[Sequence[Card]] | None = None,
    *,
    seed_revealed: bool = False,
) -> OpenFaceDealView:
    """The deal as ``viewer`` may see it; ``dealt[seat]``, when the application computed the
    cards dealt so far, are shown seat by seat as :func:`may_see_dealt` allows."""
    seats = tuple(
        OpenFaceSeatView(
            seat=seat,
            player_id=deal.players[seat],
            fantasyland=deal.is_fantasyland(seat),
            placed=deal.placed[seat],
            committed=deal.commitments[seat] is not None,
            revealed=deal.revealed[seat],
            board=deal.boards[seat] if may_see_board(deal, viewer, seat) else None,
            dealt=(
                tuple(dealt[seat])
                if dealt is not None
                and may_see_dealt(deal, viewer, seat, seed_revealed=seed_revealed)
                else None
            ),
            timed_out=deal.timed_out[seat],
            discards_made=deal.discards_made[seat],
            discards=_opened_discards(deal, seat),
        )
        for seat in deal.seats
    )
    return OpenFaceDealView(
        number=deal.number,
        dealer=deal.dealer,
        phase=deal.phase,
        street=deal.streets_dealt - 1 if deal.streets_dealt else None,
        turn=deal.turn,
        deadline_ms=deal.deadline_ms,
        seats=seats,
    )

"""The solver's work behind a suggestion, as it runs in a solver process
(``sapsam.app.solver_processes``): each function takes only small, picklable facts (the seat's
cards, the rules, the cards it has seen, a seed) and gives back a :class:`Suggestion`.

Apart from ``sapsam.app.suggestions`` (which reads the table and decides whether the seat has
something to decide) so that a solver process imports the rules and nothing of the server's
(no gRPC, no database driver).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from sapsam.rules.cards import Card
from sapsam.rules.naturals import NaturalsTable
from sapsam.rules.open_face.board import Board
from sapsam.rules.open_face.fantasyland_setting import solve_fantasyland
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.solver import solve_street
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.solver_play import best_play

SUGGESTION_ROLLOUTS: Final = 200
"""Futures per candidate placement for an open-face suggestion (``sapsam-play``'s hint's)."""

Rows = tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]


@dataclass(frozen=True)
class Suggestion:
    """What the solver suggests: ``rows`` (front, middle, back), either the whole hand
    (``whole_hand``: a closed table's 13 cards or a Fantasyland hand) or what one open-face
    street adds to each row (``street``); the cards it leaves off; the natural to declare at a
    closed table with naturals ("" elsewhere)."""

    seat: int
    deal_number: int
    rows: Rows
    whole_hand: bool
    natural: str = ""
    discards: tuple[Card, ...] = ()
    street: int | None = None


def closed_suggestion(
    seat: int, deal_number: int, cards: tuple[Card, ...], rule_set: RuleSet
) -> Suggestion:
    """A closed hand: ``best_play``'s rows, and the natural to declare where naturals are
    played."""
    play = best_play(cards, rule_set)
    rows = play.arrangement
    natural = "" if rule_set.naturals == NaturalsTable.NONE else str(play.natural)
    return Suggestion(seat, deal_number, (rows.front, rows.middle, rows.back), True, natural)


def fantasyland_suggestion(
    seat: int, deal_number: int, cards: tuple[Card, ...], rules: OpenFaceRules
) -> Suggestion:
    """A Fantasyland hand set whole (``solve_fantasyland``), the cards beyond 13 left off."""
    setting, left_off = solve_fantasyland(rules, cards)
    rows = (setting.front, setting.middle, setting.back)
    return Suggestion(seat, deal_number, rows, True, discards=left_off)


def street_suggestion(
    seat: int,
    deal_number: int,
    street: int,
    rules: OpenFaceRules,
    board: Board,
    street_cards: tuple[Card, ...],
    seen: Collection[Card],
    seed: int,
) -> Suggestion:
    """An open-face street: where ``street_cards`` go on ``board`` (and, past the first
    street at Pineapple, which to discard), ``solve_street`` with :data:`SUGGESTION_ROLLOUTS`
    futures drawn from the cards the seat has not ``seen``."""
    choice = solve_street(
        rules,
        board,
        street_cards,
        rules.street_discards if street else 0,
        seen,
        seed=seed,
        rollouts=SUGGESTION_ROLLOUTS,
    )
    placed = choice.placement
    rows = (tuple(placed.front), tuple(placed.middle), tuple(placed.back))
    return Suggestion(
        seat, deal_number, rows, False, discards=tuple(choice.discards), street=street
    )

"""Fantasyland: who gets all their cards at once next deal, how many, and how such a hand is set.

Entry (001, 003): a live hand with QQ or better in front (``fantasyland_entry_rank``) plays the
next deal as a Fantasyland: all its cards at once, set face down before the others move. Re-entry
from a Fantasyland hand follows ``fantasyland_reentry``, at most ``fantasyland_max_consecutive``
Fantasyland deals in a row. A dead hand earns neither (001: a dead hand's combinations «считаются
самыми младшими», "count as the lowest"). docs/rules.md §8.5.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sapsam.rules.arrangement import ROW_SIZES, Arrangement
from sapsam.rules.cards import RANK_CHARS, Card, format_cards
from sapsam.rules.hands import Category, HandValue
from sapsam.rules.open_face.board import ROW_LABELS, Board, PlacementError
from sapsam.rules.open_face.dead import rows_in_order
from sapsam.rules.open_face.parameters import (
    HAND_CARDS,
    FantasylandCards,
    FantasylandReentry,
    OpenFaceRules,
)
from sapsam.rules.open_face.scoring import JudgedHand, hand_values, judge_hand

_QUEEN = 10
_TRIPS_CARDS = 17
_MOST_PAIR_CARDS = 16
REENTRY_ROYALTY_ABOVE = 10
"""``row_royalty_over_ten``: a row must earn more than this (003: «mai mult de zece puncte»)."""


def entry_cards(rules: OpenFaceRules, front: HandValue) -> int | None:
    """The cards a Fantasyland earned by this front of a live normal hand gets, else ``None``."""
    entry = rules.fantasyland_entry_rank
    if entry is None:
        return None
    if front.category is Category.THREE_OF_A_KIND:
        trips = True
    elif front.category is Category.PAIR and front.ranks[0] >= RANK_CHARS.index(entry):
        trips = False
    else:
        return None
    if rules.fantasyland_cards is FantasylandCards.THIRTEEN:
        return HAND_CARDS
    if rules.fantasyland_cards is FantasylandCards.FOURTEEN:
        return HAND_CARDS + 1
    # Progressive: QQ 14, KK 15, AA 16, trips 17; a pair below queens (a lowered entry) 14.
    if trips:
        return _TRIPS_CARDS
    return min(_MOST_PAIR_CARDS, HAND_CARDS + 1 + max(0, front.ranks[0] - _QUEEN))


def _reentry_cards(rules: OpenFaceRules) -> int:
    if rules.fantasyland_cards is not FantasylandCards.THIRTEEN:
        return HAND_CARDS + 1
    return HAND_CARDS


def earns_reentry(rules: OpenFaceRules, hand: JudgedHand) -> bool:
    """Whether a live Fantasyland hand meets ``fantasyland_reentry`` (the limit aside)."""
    if hand.dead:
        return False
    front, middle, back = hand.values
    condition = rules.fantasyland_reentry
    if condition is FantasylandReentry.NONE:
        return False
    if condition is FantasylandReentry.ROW_ROYALTY_OVER_TEN:
        return max(hand.royalties) > REENTRY_ROYALTY_ABOVE
    if front.category is Category.THREE_OF_A_KIND or back.category >= Category.FOUR_OF_A_KIND:
        return True
    return (
        condition is FantasylandReentry.FRONT_TRIPS_MIDDLE_FULL_HOUSE_BACK_QUADS
        and middle.category >= Category.FULL_HOUSE
    )


def next_fantasyland(
    rules: OpenFaceRules, hand: JudgedHand, fantasylands_in_a_row: int
) -> int | None:
    """The cards the seat gets at once next deal, or ``None`` for a normal deal.

    ``hand`` is the seat's finished hand of this deal (``scoring.judge_hand``);
    ``fantasylands_in_a_row`` counts the Fantasyland deals the seat has played in a row, this
    one included (0: this deal was not a Fantasyland for it).
    """
    if fantasylands_in_a_row < 0:
        raise ValueError(f"fantasylands_in_a_row is {fantasylands_in_a_row}, not >= 0")
    if hand.dead or rules.fantasyland_entry_rank is None:
        return None
    if fantasylands_in_a_row == 0:
        return entry_cards(rules, hand.values[0])
    limit = rules.fantasyland_max_consecutive
    if limit is not None and fantasylands_in_a_row >= limit:
        return None
    return _reentry_cards(rules) if earns_reentry(rules, hand) else None


def button_moves(next_fantasylands: Sequence[int | None]) -> bool:
    """Whether the button passes after this deal: not when any seat plays a Fantasyland next
    (001: «В случае появления фантазии баттон не передвигается», "when a fantasy appears the
    button does not move")."""
    return all(cards is None for cards in next_fantasylands)


def set_is_over(seats: int, button_moves_so_far: int) -> bool:
    """Whether a set is complete: as many deals as seats, the deals in which the button stayed
    for a Fantasyland not counted (001: «количество раздач в которой равно количеству сидящих за
    столом игроков», "whose number of deals equals the number of players")."""
    return button_moves_so_far >= seats


@dataclass(frozen=True)
class FantasylandSetting:
    """A Fantasyland hand as set: its arrangement, the cards discarded, and whether it is dead."""

    arrangement: Arrangement
    discards: tuple[Card, ...]
    dead: bool


def verify_fantasyland_arrangement(
    dealt: Sequence[Card], arrangement: Arrangement, rules: OpenFaceRules | None = None
) -> FantasylandSetting:
    """Check a Fantasyland hand's arrangement against the cards dealt: rows of 3, 5 and 5 of the
    dealt cards, each once; the rest (beyond 13) discarded. Rows out of order are allowed and
    make the hand dead, as for any hand (under ``rules``' order rule: 2-7's when its middle is
    lowball; the classic order without ``rules``). Raises :class:`PlacementError` saying what
    is wrong."""
    dealt_set = set(dealt)
    if len(dealt_set) != len(dealt) or not HAND_CARDS <= len(dealt) <= _TRIPS_CARDS:
        raise PlacementError(
            f"a Fantasyland hand is 13 to 17 distinct cards, got {len(dealt)}: "
            f"{format_cards(dealt)}"
        )
    for label, row, size in zip(ROW_LABELS, arrangement.rows, ROW_SIZES, strict=True):
        if len(row) != size:
            raise PlacementError(f"the {label} row has {len(row)} cards, not {size}")
    placed = arrangement.cards
    if len(set(placed)) != len(placed):
        raise PlacementError(f"a card is set twice: {arrangement}")
    extra = [card for card in placed if card not in dealt_set]
    if extra:
        raise PlacementError(f"not dealt to this seat: {format_cards(extra)}")
    placed_set = set(placed)
    discards = tuple(card for card in dealt if card not in placed_set)
    board = Board(arrangement.front, arrangement.middle, arrangement.back)
    if rules is not None and rules.lowball_middle:
        return FantasylandSetting(arrangement, discards, judge_hand(rules, board).fouled)
    front, middle, back = hand_values(board)
    return FantasylandSetting(arrangement, discards, not rows_in_order(front, middle, back))

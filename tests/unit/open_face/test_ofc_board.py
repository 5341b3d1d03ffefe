"""Boards, streets and legal placements, checked exhaustively against a brute force."""

from __future__ import annotations

import random
from itertools import product

import pytest

from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.board import (
    ROW_CAPACITY,
    Board,
    Placement,
    PlacementError,
    Row,
    can_place,
    legal_placements,
    place,
    street_of,
    street_starts,
    verify_placement,
)
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.presets import open_face_preset


def brute_force_placements(board: Board, dealt: tuple[Card, ...]) -> set[Placement]:
    """Every row per card, kept when each row fits: the definition, without cleverness."""
    found = set()
    for rows in product(Row, repeat=len(dealt)):
        if all(len(board.rows[row]) + rows.count(row) <= ROW_CAPACITY[row] for row in Row):
            found.add(Placement.of_rows(dealt, rows))
    return found


def random_board(rng: random.Random, placed: int, deck: list[Card]) -> Board:
    rows: list[list[Card]] = [[], [], []]
    for card in deck[:placed]:
        choices = [row for row in Row if len(rows[row]) < ROW_CAPACITY[row]]
        rows[rng.choice(choices)].append(card)
    return Board(tuple(rows[0]), tuple(rows[1]), tuple(rows[2]))


def test_five_cards_on_an_empty_board_have_232_placements() -> None:
    dealt = parse_cards("As Kd 7h 7c 2s")
    found = legal_placements(Board(), dealt)
    assert len(found) == 232 == 3**5 - 5 * 2 - 1  # four or five in the front do not fit
    assert set(found) == brute_force_placements(Board(), dealt)
    # The first is the biggest-row-first fill: all five in the back.
    assert found[0] == Placement(back=dealt)


@pytest.mark.parametrize("streets", [(5, 1, 1, 1, 1, 1, 1, 1, 1), (5, 4, 4)])
def test_every_street_of_random_boards_matches_the_brute_force(streets: tuple[int, ...]) -> None:
    rules = OpenFaceRules(street_cards=streets)
    rng = random.Random(18)
    for _ in range(120):
        deck = [Card(card) for card in rng.sample(range(52), 13)]
        start = rng.choice(street_starts(rules))
        board = random_board(rng, start, deck)
        assert street_of(rules, board) == street_starts(rules).index(start)
        dealt = tuple(deck[start : start + streets[street_starts(rules).index(start)]])
        found = legal_placements(board, dealt)
        assert len(set(found)) == len(found)
        assert set(found) == brute_force_placements(board, dealt)
        for placement in found:
            assert can_place(board, dealt, placement)
            assert place(board, dealt, placement).placed == start + len(dealt)


def test_a_complete_board_waits_for_no_street() -> None:
    board = Board.parse("2c 3c 4c", "5c 6c 7c 8c 9c", "Tc Jc Qc Kc Ac")
    assert board.complete
    assert street_of(OpenFaceRules(), board) is None


def test_a_board_between_streets_is_refused() -> None:
    with pytest.raises(PlacementError, match="6 cards placed is not the start of a street"):
        street_of(open_face_preset("ofc_turbo"), Board.parse("", "2c 3c 4c", "5c 6c 7c"))


def test_streets_start_where_the_schedule_says() -> None:
    assert street_starts(OpenFaceRules()) == (0, 5, 6, 7, 8, 9, 10, 11, 12)
    assert street_starts(open_face_preset("ofc_turbo")) == (0, 5, 9)


@pytest.mark.parametrize(
    ("placement", "message"),
    [
        (Placement(back=parse_cards("As Kd")), "every dealt card must be placed; not placed: 7h"),
        (Placement(back=parse_cards("As Kd 7h 2c")), "not dealt to this seat on this street: 2c"),
        (Placement(back=parse_cards("As Kd"), front=parse_cards("7h As")), "placed twice"),
        (Placement(front=parse_cards("As Kd 7h")), "the front row has room for 2 more, not 3"),
    ],
)
def test_a_bad_placement_says_what_is_wrong(placement: Placement, message: str) -> None:
    board = Board.parse("Qs", "", "")
    dealt = parse_cards("As Kd 7h")
    with pytest.raises(PlacementError, match=message):
        verify_placement(board, dealt, placement)
    assert not can_place(board, dealt, placement)


def test_placed_cards_never_move() -> None:
    board = Board.parse("Qs", "2c", "3d")
    after = place(board, parse_cards("4h"), Placement(middle=parse_cards("4h")))
    assert after.rows[0] == board.front and after.back == board.back
    assert after.middle[: len(board.middle)] == board.middle


def test_a_board_repeating_a_card_or_overflowing_is_refused() -> None:
    with pytest.raises(PlacementError, match="repeats"):
        Board.parse("Qs", "Qs", "")
    with pytest.raises(PlacementError, match="front row holds 4 cards"):
        Board.parse("Qs Qh Qd Qc", "", "")
    with pytest.raises(PlacementError, match="room for 0"):
        legal_placements(
            Board.parse("2c 3c 4c", "5c 6c 7c 8c 9c", "Tc Jc Qc Kc Ac"), parse_cards("2d")
        )

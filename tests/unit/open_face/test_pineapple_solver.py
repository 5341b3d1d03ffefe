"""The solver and the heuristic choose Pineapple's discard too (issue #19): a legal move of the
street, deterministic in its arguments, never into a dead hand while a move keeps it alive."""

from __future__ import annotations

import random

from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.board import Board, discards_due, verify_street_move
from sapsam.rules.open_face.dead import kills
from sapsam.rules.open_face.heuristic import heuristic_street_move
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.scoring import judge_hand
from sapsam.rules.open_face.solver import solve_placement, solve_street

PINEAPPLE = open_face_preset("pineapple")
TWO_SEVEN = open_face_preset("pineapple_2_7")


def test_the_solver_discards_one_of_three_and_places_the_others() -> None:
    board = Board.parse("Qc", "Ac Kd", "9h 9s")
    dealt = parse_cards("Qd 2c 7h")
    choice = solve_street(PINEAPPLE, board, dealt, 1, seed=3, rollouts=6)
    verify_street_move(PINEAPPLE, 1, board, dealt, choice.placement, choice.discards)
    assert choice.legal == 3 * 3 * 3 and choice.played_out == 6
    assert choice == solve_street(PINEAPPLE, board, dealt, 1, seed=3, rollouts=6)
    # The queen pairs the front: a Fantasyland in reach is kept, not thrown away.
    assert parse_cards("Qd")[0] not in choice.discards


def test_without_a_discard_the_street_is_solve_placements_choice() -> None:
    dealt = parse_cards("Ac Kd Qh 7s 2c")
    street = solve_street(PINEAPPLE, Board(), dealt, 0, seed=1, rollouts=4)
    placement = solve_placement(PINEAPPLE, Board(), dealt, seed=1, rollouts=4)
    assert street.discards == () and street.placement == placement.placement


def test_the_last_street_keeps_the_hand_alive_when_it_can() -> None:
    # Front a pair of kings; the middle needs a pair above it or better: keep the ace pair.
    board = Board.parse("Kc Kd 3h", "Ac 8d 7s 4c", "Qh Qs Qd 9c")
    dealt = parse_cards("Ad 2s 5h")
    pool = [Card(c) for c in range(52) if c not in {*board.cards, *dealt}]
    for choose in (
        lambda: solve_street(PINEAPPLE, board, dealt, 1, rollouts=3),
        lambda: heuristic_street_move(PINEAPPLE, board, dealt, 1),
    ):
        made = choose()
        placement = made.placement if hasattr(made, "placement") else made[0]
        assert not kills(board, placement, pool)
        assert not judge_hand(PINEAPPLE, board.with_placement(placement)).dead


def test_whole_random_pineapple_hands_are_legal_for_solver_and_heuristic() -> None:
    for rules in (PINEAPPLE, TWO_SEVEN):
        rng = random.Random(19)
        for trial in range(3):
            deck = [Card(c) for c in rng.sample(range(52), 17)]
            board = Board()
            for street, count in enumerate(rules.dealt_street_cards):
                dealt, deck = tuple(deck[:count]), deck[count:]
                due = discards_due(rules, street)
                if trial % 2:
                    placement, thrown = heuristic_street_move(rules, board, dealt, due)
                else:
                    choice = solve_street(rules, board, dealt, due, seed=street, rollouts=3)
                    placement, thrown = choice.placement, choice.discards
                verify_street_move(rules, street, board, dealt, placement, thrown)
                board = board.with_placement(placement)
            assert board.complete

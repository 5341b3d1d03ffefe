"""Automatic moves and the two timeout policies (001, 003)."""

from __future__ import annotations

import random

from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.automatic import (
    AutomaticReason,
    automatic_move,
    fill_from_the_back,
    timeout_consequence,
    timeout_move,
)
from sapsam.rules.open_face.board import Board, Placement, legal_placements
from sapsam.rules.open_face.dead import is_dead, kills
from sapsam.rules.open_face.parameters import AutomaticMoves, OpenFaceRules
from sapsam.rules.open_face.presets import open_face_preset

CLASSIC = open_face_preset("ofc_classic")  # dead_for_set
RUSSIAN = open_face_preset("ofc_russian")  # biggest_row_first


def test_one_option_is_placed_for_the_seat() -> None:
    board = Board.parse("2c 3d 4h", "5c 6d 7h 8s", "Tc Td Jh Js")
    # Two places, two rows: one card has two options; fill the middle and only the back is left.
    move = automatic_move(
        CLASSIC, board.with_placement(Placement(middle=parse_cards("9c"))), parse_cards("Qd")
    )
    assert move is not None and move.reason is AutomaticReason.ONLY_OPTION
    assert move.placement == Placement(back=parse_cards("Qd"))


def test_a_choice_that_keeps_the_hand_alive_is_left_to_the_seat() -> None:
    board = Board.parse("Qc Qd", "Kc Kd 2h 3s 4c", "Tc Td 5h 6s")
    assert (
        automatic_move(CLASSIC, board, parse_cards("9h")) is None
    )  # the front kills, not the back


def test_every_option_kills_it() -> None:
    board = Board.parse("Qc Qd", "Jc Jd 2h 3s 4c", "Tc Td 5h 6s")
    move = automatic_move(CLASSIC, board, parse_cards("9h"))
    assert move is not None and move.reason is AutomaticReason.ALREADY_DEAD
    # Not dead yet: the front must stay at or below jacks and the middle needs the last queen.
    # A king kills it in the front (QQK over QQJ65) and in the middle (king high under QQ).
    board = Board.parse("Qc Qd", "Qh Js 5c 6d", "Ac Ad As Ah 2c")
    assert not is_dead(board)
    move = automatic_move(CLASSIC, board, parse_cards("Ks"))
    assert move is not None and move.reason is AutomaticReason.EVERY_OPTION_KILLS
    assert automatic_move(CLASSIC, board, parse_cards("Qs")) is None  # the middle saves it


def test_already_dead_and_declared_dead_are_filled_from_the_back() -> None:
    board = Board.parse("Ac Ad", "2c 3d 4h 6s 7c", "")
    dealt = parse_cards("Kh Kd Ks 9c 8c")
    move = automatic_move(CLASSIC, board, dealt)
    assert move is not None and move.reason is AutomaticReason.ALREADY_DEAD
    assert move.placement == Placement(back=dealt)
    declared = automatic_move(CLASSIC, Board(), dealt, declared_dead=True)
    assert declared is not None and declared.placement == Placement(back=dealt)


def test_automatic_moves_off_leaves_every_choice_to_the_seat() -> None:
    off = OpenFaceRules(automatic_moves=AutomaticMoves.OFF)
    board = Board.parse("Qc Qd", "Jc Jd 2h 3s 4c", "Tc Td 5h 6s")
    assert automatic_move(off, board, parse_cards("9h")) is None


def test_never_automatically_into_a_dead_hand_while_an_option_lives() -> None:
    rng = random.Random(5)
    made = 0
    for _ in range(40):
        cards = [Card(card) for card in rng.sample(range(52), 13)]
        board = Board()
        for card in cards:
            options = legal_placements(board, [card])
            move = automatic_move(CLASSIC, board, [card])
            if move is not None:
                made += 1
                if move.reason is not AutomaticReason.ONLY_OPTION:
                    assert all(kills(board, option) for option in options)
            board = board.with_placement(move.placement if move else rng.choice(options))
    assert made > 40


def test_001_timeout_kills_the_hand_for_the_set_and_fills_from_the_back() -> None:
    consequence = timeout_consequence(CLASSIC)
    assert consequence.dead_until_set_ends and consequence.automatic_until_set_ends
    assert not consequence.set_ends_after_hand
    board = Board.parse("Qc", "", "2c 3c 4c 5d")
    dealt = parse_cards("Ah Kh")
    move = timeout_move(CLASSIC, board, dealt)
    assert (
        move.placement
        == fill_from_the_back(board, dealt)
        == Placement(middle=parse_cards("Kh"), back=parse_cards("Ah"))
    )


def test_003_timeout_fills_from_the_biggest_row_without_killing() -> None:
    consequence = timeout_consequence(RUSSIAN)
    assert not consequence.dead_until_set_ends and consequence.set_ends_after_hand
    # The back is full; the fill would put the ace into the middle, under a front pair of kings
    # with the middle otherwise finished: dead. The front is the one living place.
    board = Board.parse("Kc Kd", "2c 3d 4h 6s", "Tc Td Th 9s 9c")
    dealt = parse_cards("Ah")
    assert kills(board, fill_from_the_back(board, dealt))
    assert timeout_move(RUSSIAN, board, dealt).placement == Placement(front=dealt)
    # Under 001 the fill stands: the hand is dead anyway.
    assert timeout_move(CLASSIC, board, dealt).placement == Placement(middle=dealt)


def test_003_timeout_fills_from_the_back_when_nothing_is_at_stake() -> None:
    dealt = parse_cards("Ah Kh 7c 7d 2s")
    assert timeout_move(RUSSIAN, Board(), dealt).placement == Placement(back=dealt)

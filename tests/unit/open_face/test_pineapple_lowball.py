"""2-7 Pineapple: the deuce-to-seven middle against a table of hand-ranked cases, the mirrored
comparison, the order rule that makes a hand dead, and no royalty (docs/rules.md §8.12)."""

from __future__ import annotations

import dataclasses
from itertools import pairwise

import pytest

from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.board import Board
from sapsam.rules.open_face.dead import is_dead
from sapsam.rules.open_face.lowball import deuce_to_seven_key
from sapsam.rules.open_face.parameters import LowballOrder
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.scoring import JudgedHand, compare_hands, judge_hand

LOWBALL = open_face_preset("pineapple_2_7")
FREE = dataclasses.replace(LOWBALL, lowball_order=LowballOrder.BACK_OVER_FRONT)

# Deuce-to-seven, best first: the ace is high only, so A-5-4-3-2 is no straight; straights and
# flushes count against the hand.
RANKED = [
    ("7d 5c 4h 3s 2d", "seven-five, the best hand"),
    ("7d 6c 4h 3s 2d", "seven-six"),
    ("7d 6c 5h 4s 2d", "seven-six-five"),
    ("8d 5c 4h 3s 2d", "eight-five"),
    ("8d 6c 5h 4s 3d", "eight-six"),
    ("9d 8c 7h 6s 4d", "nine-eight"),
    ("Kd Qc Jh Ts 8d", "king high"),
    ("Ad 5c 4h 3s 2d", "ace-five: ace high, no straight"),
    ("Ad Kc Qh Js 9d", "ace-king"),
    ("2d 2c 3h 4s 5d", "a pair of deuces"),
    ("Ad Ac Kh Qs Jd", "a pair of aces"),
    ("3d 3c 2h 2s 4d", "two pair"),
    ("2d 2c 2h 3s 4d", "trips"),
    ("2d 3c 4h 5s 6d", "six-high straight"),
    ("Td Jc Qh Ks Ad", "ace-high straight"),
    ("7h 5h 4h 3h 2h", "seven-high flush"),
    ("Ah 5h 4h 3h 2h", "ace-five suited: an ace-high flush, no straight flush"),
    ("2d 2c 2h 3s 3d", "full house"),
    ("2d 2c 2h 2s 3d", "quads"),
    ("2s 3s 4s 5s 6s", "straight flush"),
    ("Ts Js Qs Ks As", "royal flush, the worst"),
]


def test_deuce_to_seven_ranks_the_table_best_first() -> None:
    keys = [deuce_to_seven_key(parse_cards(cards)) for cards, _ in RANKED]
    for (better, worse), (first, second) in zip(pairwise(keys), pairwise(RANKED), strict=True):
        assert better < worse, f"{first[1]} should beat {second[1]}"
    # The order does not depend on the order of the cards.
    assert deuce_to_seven_key(parse_cards("2d 3s 4h 5c 7d")) == keys[0]


def _hand_with_middle(middle: str) -> JudgedHand:
    """A live hand (back over front) around this middle, its other rows of cards left over."""
    cards = parse_cards(middle)
    rest = sorted((card for card in range(52) if card not in cards), reverse=True)
    board = Board(tuple(map(Card, rest[5:8])), cards, tuple(map(Card, rest[:5])))
    hand = judge_hand(FREE, board)
    assert not hand.dead
    return hand


@pytest.mark.parametrize("better", range(len(RANKED) - 1))
def test_the_lower_middle_wins_the_row_mirrored(better: int) -> None:
    first = _hand_with_middle(RANKED[better][0])
    second = _hand_with_middle(RANKED[better + 1][0])
    assert compare_hands(first, second)[1] == 1
    assert compare_hands(second, first)[1] == -1
    assert compare_hands(first, first)[1] == 0


def test_middle_weakest_makes_a_middle_above_the_front_dead() -> None:
    # Front K-Q-J high, middle seven-five: back >= front >= middle, alive.
    alive = Board.parse("Kc Qd Jh", "7d 5c 4h 3s 2d", "Ac Ah Ad 9c 9d")
    assert not judge_hand(LOWBALL, alive).fouled
    # Front 4-3-2 high is weaker than the seven-five middle: dead under the source's reading,
    # alive when only back >= front is asked.
    low_front = Board.parse("4c 3d 2h", "7d 5c 4h 3s 2d", "Ac Ah Ad 9c 9d")
    assert judge_hand(LOWBALL, low_front).fouled
    assert not judge_hand(FREE, low_front).fouled
    # A front above the back is dead under both.
    high_front = Board.parse("Kc Kd Kh", "7d 5c 4h 3s 2d", "Ac Ah 8d 9c 9d")
    assert judge_hand(LOWBALL, high_front).fouled and judge_hand(FREE, high_front).fouled
    # A pair in the middle weaker than a front pair of kings: alive (a poor lowball hand).
    paired = Board.parse("Kc Kd 2h", "9d 9c 4h 3s 2d", "Ac Ah Ad 8c 8d")
    assert not judge_hand(LOWBALL, paired).fouled


def test_a_lowball_middle_earns_no_royalty_and_a_high_middle_order_does_not_apply() -> None:
    # A middle flush would earn 8 in classic and would be in order; in 2-7 it earns nothing
    # and, above a K-high front, is dead under middle_weakest.
    board = Board.parse("Kc Qd Jh", "7h 5h 4h 3h 2h", "Ac Ah Ad 9c 9d")
    assert judge_hand(LOWBALL, board).fouled
    assert judge_hand(FREE, board).royalties == (0, 0, 6)
    assert judge_hand(open_face_preset("pineapple"), board).royalties == (0, 8, 6)


def test_dead_detection_follows_the_lowball_order() -> None:
    # Front 4-3-2 is below any 5-card middle but a low one...: one place left in the middle.
    board = Board.parse("4c 3d 2h", "Kd Kc 9h 8s", "Ac Ah Ad 9c 9d")
    assert is_dead(board, rules=LOWBALL)  # a paired middle is above the 4-high front
    assert not is_dead(board, rules=FREE)
    assert not is_dead(board)  # classic: kings in the middle are in order

"""A 2-7 Pineapple Fantasyland hand set by 2-7's order (docs/rules.md §8.12): ``solve_fantasyland``
under a deuce-to-seven middle sets back >= front >= middle (``middle_weakest``; the middle read
deuce-to-seven) or back >= front (``back_over_front``), never the classic back >= middle >= front,
which the 2-7 rules call dead; the most front and back royalties it finds, a lowball middle
earning none."""

from __future__ import annotations

import dataclasses
import random
import time

import pytest

from sapsam.rules.cards import DECK, parse_cards
from sapsam.rules.open_face.board import Board
from sapsam.rules.open_face.fantasyland_setting import lowball_row_first, solve_fantasyland
from sapsam.rules.open_face.parameters import FantasylandCards, LowballOrder, MiddleRow
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.scoring import judge_hand

TWO_SEVEN = open_face_preset("pineapple_2_7")
FREE_MIDDLE = dataclasses.replace(TWO_SEVEN, lowball_order=LowballOrder.BACK_OVER_FRONT)
HIGH = dataclasses.replace(TWO_SEVEN, middle_row=MiddleRow.HIGH)


def _hand(rules, arrangement):  # type: ignore[no-untyped-def]
    return judge_hand(rules, Board(arrangement.front, arrangement.middle, arrangement.back))


@pytest.mark.parametrize(
    ("dealt", "front", "middle", "back", "royalties"),
    [
        # The classic order sets the pair of nines with the queens in the middle behind KK in
        # front: dead under 2-7 (the middle must be the weakest). 2-7 sets the wheel's cards
        # behind (A-5 is no straight in lowball, but a straight behind: 2), KK in front (8) and
        # a Q-high middle, the weakest row.
        (
            "Qs Qh 2c 3d 4h 5s 7c 9d 9c Kd Kh 8s Jd As",
            "Qs Kd Kh",
            "7c 8s 9c Jd Qh",
            "2c 3d 4h 5s As",
            (8, 0, 2),
        ),
        # Trips of tens in front (18 and a re-entry) with the sixes full of jacks behind (6); the
        # middle 8-high. The classic order's trips go behind the middle: dead under 2-7.
        (
            "6s 6h 6d 2c 3d 4h 5s 8c Ts Th Tc Jd Jh 9c",
            "Tc Th Ts",
            "2c 3d 4h 5s 8c",
            "6d 6h 6s Jd Jh",
            (18, 0, 6),
        ),
    ],
)
def test_a_table_of_two_seven_settings(
    dealt: str, front: str, middle: str, back: str, royalties: tuple[int, int, int]
) -> None:
    cards = parse_cards(dealt)
    setting, discards = solve_fantasyland(TWO_SEVEN, cards)
    hand = _hand(TWO_SEVEN, setting)
    assert not hand.dead
    assert [set(row) for row in setting.rows] == [
        set(parse_cards(r)) for r in (front, middle, back)
    ]
    assert hand.royalties == royalties  # a lowball middle earns nothing
    assert len(discards) == 1 and set(discards) | set(setting.cards) == set(cards)
    # The classic order's setting of the same cards is dead under 2-7.
    classic, _ = solve_fantasyland(HIGH, cards)
    assert _hand(TWO_SEVEN, classic).dead


def test_never_dead_when_the_greedy_two_seven_setting_is_alive_and_never_fewer_royalties() -> None:
    """Over 25 seeded 14-card hands: alive whenever ``lowball_row_first`` is, with at least its
    royalties; the classic-order setting would have been dead under 2-7 in most of them."""
    rng = random.Random(2026)
    classic_dead = 0
    for _ in range(25):
        cards = rng.sample(DECK, 14)
        setting, _ = solve_fantasyland(TWO_SEVEN, cards)
        hand = _hand(TWO_SEVEN, setting)
        greedy = _hand(TWO_SEVEN, lowball_row_first(TWO_SEVEN, cards)[0])
        assert not hand.dead or greedy.dead
        if not greedy.dead:
            assert sum(hand.royalties) >= sum(greedy.royalties)
        classic_dead += _hand(TWO_SEVEN, solve_fantasyland(HIGH, cards)[0]).dead
    assert classic_dead > 8


def test_back_over_front_leaves_the_middle_free() -> None:
    rng = random.Random(19)
    for _ in range(10):
        cards = rng.sample(DECK, 14)
        hand = _hand(FREE_MIDDLE, solve_fantasyland(FREE_MIDDLE, cards)[0])
        assert not hand.dead  # the back, the strongest five, is never below a front


def test_a_progressive_two_seven_hand_of_17_is_set_quickly() -> None:
    rules = dataclasses.replace(TWO_SEVEN, fantasyland_cards=FantasylandCards.PROGRESSIVE)
    rng = random.Random(7)
    took = []
    for _ in range(3):
        cards = rng.sample(DECK, 17)
        started = time.process_time()
        setting, discards = solve_fantasyland(rules, cards)
        took.append(time.process_time() - started)
        assert len(discards) == 4 and not _hand(rules, setting).dead
    assert sorted(took)[1] < 2.0, took  # CPU seconds; the budget bounds it

"""Setting a Fantasyland hand: never dead, the most royalties found, the two timeouts."""

from __future__ import annotations

import random

import pytest

from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.board import Board, PlacementError
from sapsam.rules.open_face.fantasyland import verify_fantasyland_arrangement
from sapsam.rules.open_face.fantasyland_setting import (
    biggest_row_first,
    fantasyland_timeout_setting,
    solve_fantasyland,
)
from sapsam.rules.open_face.parameters import FantasylandCards, OpenFaceRules
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.scoring import judge_hand

CLASSIC = open_face_preset("ofc_classic")
RUSSIAN = open_face_preset("ofc_russian")
PROGRESSIVE = OpenFaceRules(fantasyland_cards=FantasylandCards.PROGRESSIVE, max_seats=3)


def test_the_best_setting_beats_the_greedy_one() -> None:
    dealt = parse_cards("As Ks Qs Js Ts 9h 9d 9c 9s 2c Qh Qd 3c")
    greedy, _ = biggest_row_first(dealt)
    greedy_hand = judge_hand(CLASSIC, Board(greedy.front, greedy.middle, greedy.back))
    assert greedy_hand.royalties == (0, 20, 25)  # the queen kicks the nines, the front is Q-high
    best, discards = solve_fantasyland(CLASSIC, dealt)
    hand = judge_hand(CLASSIC, Board(best.front, best.middle, best.back))
    assert hand.royalties == (7, 20, 25) and discards == ()
    assert sorted(best.front) == sorted(parse_cards("Qh Qd 3c"))


@pytest.mark.parametrize("size", [13, 14, 15, 16, 17])
def test_settings_are_never_dead_and_use_the_dealt_cards(size: int) -> None:
    rng = random.Random(size)
    for _ in range(3):
        dealt = [Card(card) for card in rng.sample(range(52), size)]
        greedy, _ = biggest_row_first(dealt)
        # A small budget keeps the test short; what is checked holds for any budget.
        best, discards = solve_fantasyland(PROGRESSIVE, dealt, budget=500)
        setting = verify_fantasyland_arrangement(dealt, best)
        assert not setting.dead and sorted(setting.discards) == sorted(discards)
        assert not verify_fantasyland_arrangement(dealt, greedy).dead
        royalties = [
            judge_hand(PROGRESSIVE, Board(a.front, a.middle, a.back)).royalty_total
            for a in (greedy, best)
        ]
        assert royalties[1] >= royalties[0]
        assert solve_fantasyland(PROGRESSIVE, list(reversed(dealt)), budget=500) == (
            best,
            discards,
        )


def test_001_timeout_is_dead_and_set_in_the_order_dealt() -> None:
    dealt = parse_cards("2c 3c 4c 5c 6c 7d 8d 9d Td Jd Qh Kh Ah As")
    timeout = fantasyland_timeout_setting(CLASSIC, dealt)
    assert timeout.declared_dead
    assert timeout.arrangement.back == dealt[:5] and timeout.arrangement.front == dealt[10:13]
    assert timeout.discards == dealt[13:]


def test_003_timeout_is_set_from_the_biggest_row_and_lives() -> None:
    dealt = parse_cards("2c 3c 4c 5c 6c 7d 8d 9d Td Jd Qh Kh Ah")
    timeout = fantasyland_timeout_setting(RUSSIAN, dealt)
    assert not timeout.declared_dead
    assert timeout.arrangement == biggest_row_first(dealt)[0]
    assert not verify_fantasyland_arrangement(dealt, timeout.arrangement).dead


def test_a_wrong_number_of_cards_is_refused() -> None:
    with pytest.raises(PlacementError, match="13 to 17 distinct cards, got 12"):
        solve_fantasyland(CLASSIC, [Card(card) for card in range(12)])
    with pytest.raises(PlacementError, match="got 18"):
        fantasyland_timeout_setting(CLASSIC, [Card(card) for card in range(18)])

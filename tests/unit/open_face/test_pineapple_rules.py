"""Pineapple's rules: the schedule with discards, at most three seats, placements with a discard,
moves made for a seat, and the 14-card Fantasyland (docs/rules.md §8.12)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.automatic import AutomaticReason, automatic_move, timeout_move
from sapsam.rules.open_face.board import (
    Board,
    Placement,
    PlacementError,
    discards_due,
    street_moves,
    street_of,
    verify_street_move,
)
from sapsam.rules.open_face.fantasyland import (
    entry_cards,
    next_fantasyland,
    verify_fantasyland_arrangement,
)
from sapsam.rules.open_face.fantasyland_setting import (
    biggest_row_first,
    fantasyland_timeout_setting,
)
from sapsam.rules.open_face.parameters import (
    PINEAPPLE_KEYS,
    FantasylandCards,
    OpenFaceRules,
    OpenFaceRulesError,
    OpenFaceTimeoutPolicy,
)
from sapsam.rules.open_face.presets import (
    OPEN_FACE_PRESETS,
    PINEAPPLE_PRESET_DESCRIPTIONS,
    PINEAPPLE_PRESETS,
    open_face_preset,
)
from sapsam.rules.open_face.scoring import judge_hand

PINEAPPLE = open_face_preset("pineapple")


def test_the_presets_deal_5_then_3_a_turn_and_seat_at_most_three() -> None:
    assert set(PINEAPPLE_PRESETS) == set(PINEAPPLE_PRESET_DESCRIPTIONS)
    assert not set(PINEAPPLE_PRESETS) & set(OPEN_FACE_PRESETS)
    for name, rules in PINEAPPLE_PRESETS.items():
        assert rules.name == name
        assert rules.street_cards == (5, 2, 2, 2, 2)  # 001: «5+2+2+2+2»
        assert rules.dealt_street_cards == (5, 3, 3, 3, 3)
        assert rules.normal_hand_cards == 17
        assert rules.max_seats == 3  # 001: «не более трех участников»
        assert OpenFaceRules.from_json(rules.to_json()) == rules
    assert open_face_preset("ofc_classic").dealt_street_cards == (5, 1, 1, 1, 1, 1, 1, 1, 1)


def test_a_classic_rule_set_is_recorded_as_before_pineapple() -> None:
    classic = open_face_preset("ofc_classic")
    recorded = classic.to_dict()
    # Only the reveal deadline every preset has since (docs/rules.md §8.7).
    assert set(recorded) & PINEAPPLE_KEYS == {"reveal_seconds"}
    assert OpenFaceRules.from_dict(recorded) == classic
    assert set(PINEAPPLE.to_dict()) & PINEAPPLE_KEYS == {"street_discards", "reveal_seconds"}
    two_seven = open_face_preset("pineapple_2_7").to_dict()
    assert set(two_seven) & PINEAPPLE_KEYS == {"street_discards", "middle_row", "reveal_seconds"}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"max_seats": 4}, "hands of 17 dealt cards"),
        ({"street_discards": 4}, "'street_discards' must be in 0..3"),
        ({"street_discards": -1}, "'street_discards' must be in 0..3"),
        ({"middle_row": "lowest"}, "'middle_row' must be one of high, deuce_to_seven"),
        ({"finnish_two_of_spades": True}, "'finnish_two_of_spades' must be one of off, row, own"),
    ],
)
def test_a_bad_pineapple_rule_set_names_the_key(changes: dict[str, object], message: str) -> None:
    data = {**PINEAPPLE.to_dict(), **changes}
    with pytest.raises(OpenFaceRulesError, match=message):
        OpenFaceRules.from_dict(data)


def test_progressive_fantasyland_fits_three_pineapple_seats() -> None:
    rules = dataclasses.replace(PINEAPPLE, fantasyland_cards=FantasylandCards.PROGRESSIVE)
    assert rules.most_fantasyland_cards == 17
    front = judge_hand(rules, Board.parse("Kc Kd 2h", "Ac Ad 7h 8s 9c", "Jc Jd Jh Js 3c"))
    assert entry_cards(rules, front.values[0]) == 15


def test_a_street_after_the_first_places_two_and_discards_one() -> None:
    board = Board.parse("", "Ac Kd", "Qh Qs 9c")
    assert street_of(PINEAPPLE, board) == 1
    assert (discards_due(PINEAPPLE, 0), discards_due(PINEAPPLE, 1)) == (0, 1)
    dealt = parse_cards("2c 7d Td")
    good = Placement(front=parse_cards("2c"), middle=parse_cards("Td"))
    verify_street_move(PINEAPPLE, 1, board, dealt, good, parse_cards("7d"))
    cases = [
        (good, (), "street 1 discards 1 card of the 3 dealt, not 0"),
        (good, parse_cards("7d 2c"), "discards 1 card of the 3 dealt, not 2"),
        (good, parse_cards("8d"), "not dealt to this seat on this street: 8d"),
        (Placement(front=dealt[:2]), parse_cards("2c"), "both placed and discarded: 2c"),
        (Placement(front=dealt[:1]), parse_cards("7d"), "every dealt card must be placed"),
    ]
    for placement, discards, message in cases:
        with pytest.raises(PlacementError, match=message):
            verify_street_move(PINEAPPLE, 1, board, dealt, placement, discards)
    with pytest.raises(PlacementError, match="discards 0 cards of the 5 dealt, not 1"):
        verify_street_move(PINEAPPLE, 0, Board(), parse_cards("2c 3c 4c 5c 6c"), good, dealt[:1])


def test_street_moves_list_every_discard_and_placement_last_card_discarded_first() -> None:
    board = Board.parse("", "Ac Kd", "Qh Qs 9c")
    dealt = parse_cards("2c 7d Td")
    moves = street_moves(board, dealt, 1)
    assert len(moves) == 3 * 3 * 3  # a discard of 3, then each of 2 cards into 3 rows
    assert moves[0][1] == parse_cards("Td")
    assert moves[0][0] == Placement(back=parse_cards("2c 7d"))
    assert len({move for move in moves}) == len(moves)


def test_a_move_made_for_a_pineapple_seat_discards_the_last_card_dealt() -> None:
    board = Board.parse("", "Ac Kd", "Qh Qs 9c")
    dealt = parse_cards("2c 7d Td")
    made = timeout_move(PINEAPPLE, board, dealt)
    assert made.reason is AutomaticReason.TIMEOUT
    assert made.discards == parse_cards("Td")
    assert made.placement == Placement(back=parse_cards("2c 7d"))
    dead = automatic_move(PINEAPPLE, board, dealt, declared_dead=True)
    assert dead is not None and dead.discards == parse_cards("Td")
    assert automatic_move(PINEAPPLE, board, dealt) is None  # a real choice: the seat's
    # The first street discards nothing.
    first = timeout_move(PINEAPPLE, Board(), parse_cards("2c 3c 4c 5c 6c"))
    assert first.discards == ()


def test_003s_timeout_in_pineapple_keeps_the_hand_alive_with_its_discard() -> None:
    rules = dataclasses.replace(PINEAPPLE, timeout_policy=OpenFaceTimeoutPolicy.BIGGEST_ROW_FIRST)
    # Front holds aces: the back and middle must still beat them. Back two places left.
    board = Board.parse("Ac Ad", "Kc Kd Ks 3c", "Qh Qs Qd 9c")
    dealt = parse_cards("2c 7d 4h")
    made = timeout_move(rules, board, dealt)
    after = board.with_placement(made.placement)
    assert len(made.discards) == 1 and set(made.discards) | set(made.placement.cards) == set(dealt)
    assert after.placed == board.placed + 2


def test_pineapple_fantasyland_is_14_cards_13_set_1_discarded() -> None:
    front = judge_hand(PINEAPPLE, Board.parse("Qc Qd 2h", "Ac Ad 7h 8s 9c", "Jc Jd Jh Js 3c"))
    assert entry_cards(PINEAPPLE, front.values[0]) == 14
    dealt = parse_cards("Ah Kh Qh Jh Th 9c 9d 9h 2c 2d 3s 4s 5s 6d")
    arrangement = Arrangement.of_card_rows(dealt[10:13], dealt[5:10], dealt[:5])
    setting = verify_fantasyland_arrangement(dealt, arrangement, PINEAPPLE)
    assert setting.discards == parse_cards("6d") and not setting.dead
    # Re-entry gets 14 again: back quads (a royal flush here) in a Fantasyland hand.
    hand = judge_hand(PINEAPPLE, Board(*arrangement.rows))
    assert next_fantasyland(PINEAPPLE, hand, 1) == 14


def test_a_timed_out_2_7_fantasyland_is_set_with_a_low_middle() -> None:
    rules = dataclasses.replace(
        open_face_preset("pineapple_2_7"), timeout_policy=OpenFaceTimeoutPolicy.BIGGEST_ROW_FIRST
    )
    dealt = parse_cards("Ah Ad Ac Ks Kd 9c 7d 5h 4s 2c Qh Jd Tc 8s")
    # The classic never-dead setting puts a strong middle under a weaker front: dead in 2-7.
    classic, _ = biggest_row_first(dealt)
    assert judge_hand(rules, Board(*classic.rows)).dead
    setting = fantasyland_timeout_setting(rules, dealt)
    hand = judge_hand(rules, Board(*setting.arrangement.rows))
    assert not hand.dead and len(setting.discards) == 1
    assert hand.lowball_middle is not None and hand.lowball_middle[0] == 0  # no pair
    # Over seeded hands, the 2-7 setting is alive far more often than the classic one.
    rng = random.Random(27)
    alive = 0
    for _ in range(20):
        cards = [Card(card) for card in rng.sample(range(52), 14)]
        made = fantasyland_timeout_setting(rules, cards).arrangement
        alive += not judge_hand(rules, Board(*made.rows)).dead
    assert alive >= 18

"""Fantasyland: entry from the front, progressive counts, re-entry, limits, a 13+ card hand."""

from __future__ import annotations

import pytest

from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.open_face.board import Board, PlacementError
from sapsam.rules.open_face.fantasyland import (
    button_moves,
    earns_reentry,
    next_fantasyland,
    set_is_over,
    verify_fantasyland_arrangement,
)
from sapsam.rules.open_face.parameters import FantasylandCards, FantasylandReentry, OpenFaceRules
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.scoring import judge_hand

CLASSIC = open_face_preset("ofc_classic")
PROGRESSIVE = OpenFaceRules(fantasyland_cards=FantasylandCards.PROGRESSIVE, max_seats=3)
MIDDLE = "5c 5d 5h 9c 9d"  # a full house: beats any front below
BACK = "8c 8d 8h 8s Ts"  # quads


def hand(
    front: str,
    middle: str = "2s 3s 4s 6h 7d",
    back: str = "As Ks 9s 8s Ts",
    rules: OpenFaceRules = CLASSIC,
):
    return judge_hand(rules, Board.parse(front, middle, back))


@pytest.mark.parametrize(
    ("front", "cards"),
    [
        ("Jc Jd 2h", None),  # JJ is short of queens
        ("Qc Qd 2h", 13),
        ("Ac Ad Kh", 13),
        ("2c 2d 2h", 13),  # trips are better than QQ
    ],
)
def test_entry_needs_queens_or_better_in_front(front: str, cards: int | None) -> None:
    board = hand(front, MIDDLE, BACK)
    assert not board.dead
    assert next_fantasyland(CLASSIC, board, 0) == cards


@pytest.mark.parametrize(
    ("front", "cards"),
    [("Qc Qd 2h", 14), ("Kc Kd 2h", 15), ("Ac Ad 2h", 16), ("3c 3d 3h", 17), ("Jc Jd 2h", None)],
)
def test_progressive_counts(front: str, cards: int | None) -> None:
    assert next_fantasyland(PROGRESSIVE, hand(front, MIDDLE, BACK, PROGRESSIVE), 0) == cards


def test_a_lowered_entry_and_no_fantasyland() -> None:
    jacks = OpenFaceRules(fantasyland_entry_rank="J")
    assert next_fantasyland(jacks, hand("Jc Jd 2h", MIDDLE, BACK, jacks), 0) == 13
    off = OpenFaceRules(fantasyland_entry_rank=None)
    assert next_fantasyland(off, hand("Ac Ad 2h", MIDDLE, BACK, off), 0) is None


def test_a_dead_hand_earns_no_fantasyland() -> None:
    dead = hand("Ac Ad Kh")  # aces over a middle of nothing
    assert dead.dead
    assert next_fantasyland(CLASSIC, dead, 0) is None
    assert next_fantasyland(CLASSIC, dead, 1) is None


@pytest.mark.parametrize(
    ("reentry", "front", "middle", "back", "earned"),
    [
        # 001's classic and turbo rule: trips in front, a full house in the middle, quads behind.
        (
            "front_trips_middle_full_house_back_quads",
            "2c 2d 2h",
            "3s 4s 5s 6h 7d",
            "As Ks 9s 8s Ts",
            True,
        ),
        ("front_trips_middle_full_house_back_quads", "Qh Qd 3h", MIDDLE, "Ah As Ac Kh Kd", True),
        ("front_trips_middle_full_house_back_quads", "Qh Qd 3h", "Kc Kd 7h 7s 2h", BACK, True),
        (
            "front_trips_middle_full_house_back_quads",
            "Qh Qd 3h",
            "Kc Kd 7h 7s 2h",
            "Ah As Ac Kh 4d",
            False,
        ),
        # 001's general rule leaves the middle out.
        ("front_trips_back_quads", "Qh Qd 3h", MIDDLE, "Ah As Ac Kh Ks", False),
        ("front_trips_back_quads", "Qh Qd 3h", "Kc Kd 7h 7s 2h", BACK, True),
        # Mercier/Deeb by its number: a row earning more than 10.
        ("row_royalty_over_ten", "Qh Qd 3h", MIDDLE, "Ah As Ac Kh Kd", True),  # middle FH 12
        ("row_royalty_over_ten", "Qh Qd 3h", "Kc Kd 7h 7s 2h", BACK, False),  # quads 10
        ("row_royalty_over_ten", "2c 2d 2h", "3s 4s 5s 6h 7d", "As Ks 9s 8s Ts", False),  # 222: 10
        ("row_royalty_over_ten", "3c 3d 3h", "4s 5s 6s 7h 8d", "As Ks 9s Js Ts", True),  # 333: 11
        ("none", "2c 2d 2h", "3s 4s 5s 6h 7d", "As Ks 9s 8s Ts", False),
    ],
)
def test_reentry_conditions(reentry: str, front: str, middle: str, back: str, earned: bool) -> None:
    rules = OpenFaceRules(fantasyland_reentry=FantasylandReentry(reentry))
    judged = hand(front, middle, back, rules)
    assert not judged.dead
    assert earns_reentry(rules, judged) is earned
    assert next_fantasyland(rules, judged, 1) == (13 if earned else None)


def test_a_plain_entry_does_not_repeat_a_fantasyland() -> None:
    # QQ in front earns entry from a normal hand, not a repeat from a Fantasyland hand.
    judged = hand("Qh Qd 3h", "Kc Kd 7h 7s 2h", "Ah As Ac Kh 4d")
    assert next_fantasyland(CLASSIC, judged, 0) == 13
    assert next_fantasyland(CLASSIC, judged, 1) is None


@pytest.mark.parametrize(
    ("limit", "in_a_row", "again"),
    [(2, 1, True), (2, 2, False), (3, 2, True), (3, 3, False), (None, 50, True), (1, 1, False)],
)
def test_the_limit_in_a_row(limit: int | None, in_a_row: int, again: bool) -> None:
    rules = OpenFaceRules(fantasyland_max_consecutive=limit)
    trips = hand("2c 2d 2h", "3s 4s 5s 6h 7d", "As Ks 9s 8s Ts", rules)
    assert next_fantasyland(rules, trips, in_a_row) == (13 if again else None)


def test_progressive_reentry_gets_fourteen() -> None:
    trips = hand("2c 2d 2h", "3s 4s 5s 6h 7d", "As Ks 9s 8s Ts", PROGRESSIVE)
    assert next_fantasyland(PROGRESSIVE, trips, 1) == 14


def test_the_button_stays_for_a_fantasyland_and_the_set_counts_its_moves() -> None:
    assert button_moves([None, None, None])
    assert not button_moves([None, 13, None])
    assert not set_is_over(3, 2) and set_is_over(3, 3)


def test_a_fantasyland_hand_of_fourteen_discards_one() -> None:
    dealt = parse_cards("2c 2d 2h 5c 5d 5h 9c 9d 8c 8d 8h 8s As Kd")
    setting = verify_fantasyland_arrangement(
        dealt, Arrangement.parse("2c 2d 2h", "5c 5d 5h 9c 9d", "8c 8d 8h 8s As")
    )
    assert setting.discards == parse_cards("Kd") and not setting.dead
    fouled = verify_fantasyland_arrangement(
        dealt, Arrangement.parse("8c 8d 8h", "5c 5d 5h 9c 9d", "2c 2d 2h 8s As")
    )
    assert fouled.dead  # a middle full house over a back of trips


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (("2c 2d", "5c 5d 5h 9c 9d", "8c 8d 8h 8s As"), "front row has 2 cards, not 3"),
        (("2c 2d 3c", "5c 5d 5h 9c 9d", "8c 8d 8h 8s As"), "not dealt to this seat: 3c"),
        (("2c 2d 2h", "5c 5d 5h 9c 2c", "8c 8d 8h 8s As"), "set twice"),
    ],
)
def test_a_bad_fantasyland_arrangement_says_why(rows: tuple[str, str, str], message: str) -> None:
    dealt = parse_cards("2c 2d 2h 5c 5d 5h 9c 9d 8c 8d 8h 8s As")
    with pytest.raises(PlacementError, match=message):
        verify_fantasyland_arrangement(dealt, Arrangement.parse(*rows))
    with pytest.raises(PlacementError, match="13 to 17 distinct cards, got 12"):
        verify_fantasyland_arrangement(dealt[:12], Arrangement.parse(*rows))

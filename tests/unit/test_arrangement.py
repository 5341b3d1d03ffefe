"""Arrangements and the foul check (docs/rules.md §1)."""

import dataclasses

import pytest

from sapsam.rules.arrangement import (
    Arrangement,
    FoulReason,
    check_arrangement,
    is_foul,
)
from sapsam.rules.cards import Card, CardError, parse_cards
from sapsam.rules.hands import Category

WORKED_A = Arrangement.parse("2♠ 2♥ A♦", "7♣ 7♦ 9♠ 5♥ 3♦", "10♣ J♣ Q♣ K♣ A♣")
WORKED_B = Arrangement.parse("3♠ 3♥ 4♦", "6♣ 6♦ 8♠ 5♣ 2♦", "9♣ 9♦ 10♥ 10♠ A♠")


def test_worked_example_arrangements_are_legal() -> None:
    for arrangement in (WORKED_A, WORKED_B):
        check = check_arrangement(arrangement, dealt=arrangement.cards)
        assert not check.foul
        assert check.reason is None
        assert check.detail == ""
        assert check.values is not None
    check_a = check_arrangement(WORKED_A)
    assert check_a.values is not None
    assert [value.category for value in check_a.values] == [
        Category.PAIR,
        Category.PAIR,
        Category.STRAIGHT_FLUSH,
    ]


def test_parse_cards_str_and_canonical() -> None:
    assert str(WORKED_A) == "2s 2h Ad / 7c 7d 9s 5h 3d / Tc Jc Qc Kc Ac"
    assert len(WORKED_A.cards) == 13
    assert WORKED_A.cards[:3] == WORKED_A.front
    assert str(WORKED_A.canonical()) == "2h 2s Ad / 3d 5h 7c 7d 9s / Tc Jc Qc Kc Ac"
    assert WORKED_A.canonical().canonical() == WORKED_A.canonical()
    assert Arrangement.of(WORKED_A.front, WORKED_A.middle, WORKED_A.back) == WORKED_A
    with pytest.raises(CardError, match="'Xd' at position 2"):
        Arrangement.parse("2s Xd Ad", "", "")


def test_front_pair_with_missing_kickers_is_weaker_than_same_middle_pair() -> None:
    # Front Q-Q-K against middle Q-Q-K-3-2: the front's missing kickers are weaker than 3 and 2.
    check = check_arrangement(Arrangement.parse("Qs Qh Kd", "Qc Qd Ks 3h 2d", "Ac Ad Ah 3c 3s"))
    assert not check.foul
    assert check.values is not None
    assert check.values[0] < check.values[1]


def test_front_ace_king_queen_over_middle_ace_king_jack_is_a_foul() -> None:
    check = check_arrangement(Arrangement.parse("As Kh Qd", "Ac Kd Js 3h 2d", "7c 7d 8h 8c 9s"))
    assert check.foul
    assert check.reason is FoulReason.ROWS_OUT_OF_ORDER
    assert check.detail.startswith("front ace high")
    assert "beats middle ace high" in check.detail


def test_front_high_card_equal_to_middle_top_three_is_legal() -> None:
    # A-K-Q in front against A-K-Q-3-2: the middle's extra kickers make it stronger.
    assert not is_foul(Arrangement.parse("As Kh Qd", "Ac Kd Qs 3h 2d", "7c 7d 8h 8c 9s"))


def test_front_pair_of_aces_over_middle_pair_of_kings_is_a_foul() -> None:
    check = check_arrangement(Arrangement.parse("As Ah 2d", "Kc Kd Js 3h 2c", "7c 7d 8h 8c 9s"))
    assert check.foul
    assert check.reason is FoulReason.ROWS_OUT_OF_ORDER
    assert check.detail.startswith("front pair of aces")
    assert "beats middle pair of kings" in check.detail


def test_middle_stronger_than_back_is_a_foul() -> None:
    check = check_arrangement(Arrangement.parse("2s 3h 4d", "Ac Ad Ah 3c 3s", "Kc Kd Qs Jh 9c"))
    assert check.foul
    assert check.reason is FoulReason.ROWS_OUT_OF_ORDER
    assert check.detail.startswith("middle full house")


def test_equal_strength_middle_and_back_are_legal() -> None:
    # Two ace-high straights in different suits are equal: suits never break ties.
    check = check_arrangement(Arrangement.parse("2s 3h 4d", "Tc Jd Qh Ks Ac", "Td Jh Qs Kc Ad"))
    assert not check.foul
    assert check.values is not None
    assert check.values[1] == check.values[2]


@pytest.mark.parametrize(
    ("rows", "detail"),
    [
        (("2s 2h", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ac Ad"), "front has 2 cards, expected 3"),
        (("2s 2h Ad", "7c 7d 9s 5h", "Tc Jc Qc Kc Ac"), "middle has 4 cards, expected 5"),
        (("2s 2h Ad", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ac 4s"), "back has 6 cards, expected 5"),
    ],
)
def test_wrong_row_sizes_are_fouls_without_values(rows: tuple[str, str, str], detail: str) -> None:
    check = check_arrangement(Arrangement.parse(*rows))
    assert check.foul
    assert check.reason is FoulReason.WRONG_ROW_SIZE
    assert check.detail == detail
    assert check.values is None


def test_a_card_repeated_across_rows_is_a_foul() -> None:
    check = check_arrangement(Arrangement.parse("2s 2h Ad", "7c 7d 9s 5h Ad", "Tc Jc Qc Kc Ac"))
    assert check.foul
    assert check.reason is FoulReason.NOT_DEALT_CARDS
    assert check.detail == "card repeated: Ad"
    assert check.values is None


def test_cards_other_than_the_dealt_ones_are_a_foul() -> None:
    dealt = set(WORKED_A.cards) - set(parse_cards("Ad")) | set(parse_cards("Kd"))
    check = check_arrangement(WORKED_A, dealt=dealt)
    assert check.foul
    assert check.reason is FoulReason.NOT_DEALT_CARDS
    assert check.detail == "not dealt: Ad; dealt but not placed: Kd"
    assert check.values is not None
    # Without the dealt cards to compare with, the same arrangement is legal.
    assert not check_arrangement(WORKED_A).foul


def test_legal_order_but_foul_by_cards_reports_cards_first() -> None:
    out_of_order = Arrangement.parse("As Ah 2d", "Kc Kd Js 3h 2c", "7c 7d 8h 8c 9s")
    check = check_arrangement(out_of_order, dealt=WORKED_A.cards)
    assert check.reason is FoulReason.NOT_DEALT_CARDS


def test_rows_are_stored_as_tuples_of_cards_whatever_was_passed() -> None:
    arrangement = Arrangement.of([0, 1, 2], range(3, 8), (8, 9, 10, 11, 12))
    assert arrangement == Arrangement.parse("2c 2d 2h", "2s 3c 3d 3h 3s", "4c 4d 4h 4s 5c")
    assert all(type(card) is Card for card in arrangement.cards)
    assert hash(arrangement) == hash(arrangement.canonical())


def test_an_arrangement_of_card_rows_equals_the_constructed_one() -> None:
    rows = (parse_cards("As Kd 2c"), parse_cards("Tc Jc Qc Kc Ac"), parse_cards("2d 3d"))
    built = Arrangement.of_card_rows(*rows)
    constructed = Arrangement(*rows)
    assert built == constructed
    assert hash(built) == hash(constructed)
    assert repr(built) == repr(constructed)
    assert vars(built) == vars(constructed)
    assert type(built) is Arrangement
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.front = ()  # type: ignore[misc]

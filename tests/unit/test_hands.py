"""Hand values: exhaustive counts, the full order against a reference, cross-size rows, words."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Sequence
from itertools import combinations, pairwise, permutations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sapsam.rules.cards import parse_cards
from sapsam.rules.hands import (
    ALL_VALUES,
    FIVE_CARD_VALUES,
    THREE_CARD_VALUES,
    Category,
    HandValue,
    evaluate,
    evaluate3,
    evaluate5,
)

# ---------------------------------------------------------------------------------------------
# A deliberately plain reference evaluator, written from rules.md §1 without the module's tables.


def reference_key(ranks_high_to_low: tuple[int, ...], suited: bool) -> tuple[int, ...]:
    """Category, then group ranks and kickers, padded with -1 ("missing") to six numbers."""
    counts = Counter(ranks_high_to_low)
    # Ranks by (how many, how high): quads/trips/pairs first, then kickers high to low.
    by_group = sorted(counts, key=lambda rank: (counts[rank], rank), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    five = len(ranks_high_to_low) == 5
    flush = five and suited
    straight_top = None
    if five and len(counts) == 5:
        if ranks_high_to_low[0] - ranks_high_to_low[4] == 4:
            straight_top = ranks_high_to_low[0]
        elif ranks_high_to_low == (12, 3, 2, 1, 0):  # the wheel, A-2-3-4-5: top is the five
            straight_top = 3
    if straight_top is not None and flush:
        key = [8, straight_top]
    elif shape[0] == 4:
        key = [7, *by_group]
    elif shape == [3, 2]:
        key = [6, *by_group]
    elif flush:
        key = [5, *by_group]
    elif straight_top is not None:
        key = [4, straight_top]
    elif shape[0] == 3:
        key = [3, *by_group]
    elif shape[:2] == [2, 2]:
        key = [2, *by_group]
    elif shape[0] == 2:
        key = [1, *by_group]
    else:
        key = [0, *by_group]
    return tuple(key + [-1] * (6 - len(key)))


def reference_key_of_cards(cards: Sequence[int]) -> tuple[int, ...]:
    ranks = tuple(sorted((card >> 2 for card in cards), reverse=True))
    return reference_key(ranks, len({card & 3 for card in cards}) == 1)


def value(text: str) -> HandValue:
    return evaluate(parse_cards(text))


# ---------------------------------------------------------------------------------------------
# One exhaustive pass over every hand, shared by the slow tests below.


@dataclasses.dataclass
class Census:
    hands_per_value: Counter[HandValue]
    reference_of_value: dict[HandValue, tuple[int, ...]]
    # (ranks high to low, suited, value) of the first few hands whose reference key differs from
    # that of another hand with the same value.
    mismatches: list[tuple[tuple[int, ...], bool, HandValue]]


# Each hand is tallied under one number: its value's strength, its ranks (the digits base 13 of
# RANK_CODE, ascending cards giving ascending digits) and whether its suits agree. One integer
# per hand, not a tuple of them and the values' own (Python-level) hash: the tally of all
# 2,598,960 hands then takes a few seconds instead of a dozen.
SUITED_BITS = 1
RANK_BITS = 19  # 13 ** 5 < 2 ** 19
RANK_CODE = [[(card >> 2) * 13**digit for card in range(52)] for digit in range(5)]


def _tally(size: int) -> tuple[dict[int, int], dict[int, HandValue]]:
    """How many hands of ``size`` cards have each (value, ranks, suited) number, every hand
    evaluated by the fast evaluator; and the value object it returned first for each number."""
    counts: dict[int, int] = {}
    first_value: dict[int, HandValue] = {}
    d0, d1, d2, d3, d4 = RANK_CODE
    shift = RANK_BITS + SUITED_BITS
    if size == 5:
        for a, b, c, d, e in combinations(range(52), 5):
            hand_value = evaluate5(a, b, c, d, e)
            key = (
                hand_value.strength << shift
                | (d0[a] + d1[b] + d2[c] + d3[d] + d4[e]) << SUITED_BITS
                | (a & 3 == b & 3 == c & 3 == d & 3 == e & 3)
            )
            if key in counts:
                counts[key] += 1
            else:
                counts[key] = 1
                first_value[key] = hand_value
    else:
        for a, b, c in combinations(range(52), 3):
            hand_value = evaluate3(a, b, c)
            key = (
                hand_value.strength << shift
                | (d0[a] + d1[b] + d2[c]) << SUITED_BITS
                | (a & 3 == b & 3 == c & 3)
            )
            if key in counts:
                counts[key] += 1
            else:
                counts[key] = 1
                first_value[key] = hand_value
    return counts, first_value


def take_census(size: int) -> Census:
    counts, first_value = _tally(size)
    hands_per_value: Counter[HandValue] = Counter()
    reference_of_value: dict[HandValue, tuple[int, ...]] = {}
    mismatches: list[tuple[tuple[int, ...], bool, HandValue]] = []
    # The reference depends only on the ranks and whether the suits agree, so it is computed once
    # per tallied number; every hand's value was checked to go with them.
    for key, count in counts.items():  # in the order of the first hand of each
        hand_value = first_value[key]
        hands_per_value[hand_value] += count
        code = key >> SUITED_BITS & (1 << RANK_BITS) - 1
        ranks = tuple(code // 13**digit % 13 for digit in reversed(range(size)))
        suited = bool(key & 1)
        reference = reference_key(ranks, suited)
        known = reference_of_value.setdefault(hand_value, reference)
        if known != reference and len(mismatches) < 10:
            mismatches.append((ranks, suited, hand_value))
    return Census(hands_per_value, reference_of_value, mismatches)


@pytest.fixture(scope="module")
def five_card_census() -> Census:
    return take_census(5)


@pytest.fixture(scope="module")
def three_card_census() -> Census:
    return take_census(3)


@pytest.mark.slow
def test_all_five_card_hands_give_the_textbook_category_counts(five_card_census: Census) -> None:
    per_category: Counter[Category] = Counter()
    for hand_value, count in five_card_census.hands_per_value.items():
        per_category[hand_value.category] += count
    assert per_category == {
        Category.STRAIGHT_FLUSH: 40,
        Category.FOUR_OF_A_KIND: 624,
        Category.FULL_HOUSE: 3_744,
        Category.FLUSH: 5_108,
        Category.STRAIGHT: 10_200,
        Category.THREE_OF_A_KIND: 54_912,
        Category.TWO_PAIR: 123_552,
        Category.PAIR: 1_098_240,
        Category.HIGH_CARD: 1_302_540,
    }
    assert sum(per_category.values()) == 2_598_960
    assert len(five_card_census.hands_per_value) == 7_462
    assert set(five_card_census.hands_per_value) == set(FIVE_CARD_VALUES)


@pytest.mark.slow
def test_all_three_card_fronts_give_the_textbook_category_counts(
    three_card_census: Census,
) -> None:
    per_category: Counter[Category] = Counter()
    for hand_value, count in three_card_census.hands_per_value.items():
        per_category[hand_value.category] += count
    assert per_category == {
        Category.THREE_OF_A_KIND: 52,
        Category.PAIR: 3_744,
        Category.HIGH_CARD: 18_304,
    }
    assert len(three_card_census.hands_per_value) == 455
    assert set(three_card_census.hands_per_value) == set(THREE_CARD_VALUES)


# SHA-256 of the sorted order of all 2,598,960 five-card hands, one line per distinct value from
# weakest to strongest: "<category> <ranks> <number of hands>". Changing the order changes it.
FIVE_CARD_ORDER_DIGEST = "514e62a298da80512d942dda24d13c72b3dc2742076526241dd25e919969b0d6"


@pytest.mark.slow
def test_digest_of_the_sorted_order_of_all_five_card_hands(five_card_census: Census) -> None:
    lines = [
        f"{hand_value.category.name} {' '.join(map(str, hand_value.ranks))} {count}\n"
        for hand_value, count in sorted(
            five_card_census.hands_per_value.items(), key=lambda item: item[0].strength
        )
    ]
    digest = hashlib.sha256("".join(lines).encode()).hexdigest()
    assert digest == FIVE_CARD_ORDER_DIGEST


@pytest.mark.slow
@pytest.mark.parametrize("size", [5, 3])
def test_every_hand_agrees_with_the_reference_evaluator(
    size: int, five_card_census: Census, three_card_census: Census
) -> None:
    census = five_card_census if size == 5 else three_card_census
    # Every hand with the same value has the same reference key, and vice versa ...
    assert census.mismatches == []
    keys = list(census.reference_of_value.values())
    assert len(set(keys)) == len(keys)
    # ... and the values, sorted, have strictly increasing reference keys: the same order.
    in_order = sorted(census.reference_of_value)
    assert [census.reference_of_value[v] for v in in_order] == sorted(keys)
    for hand_value, key in census.reference_of_value.items():
        assert key[0] == hand_value.category


@pytest.mark.slow
def test_three_and_five_card_values_interleave_as_the_reference_orders_them(
    five_card_census: Census, three_card_census: Census
) -> None:
    reference_of_value = {
        **five_card_census.reference_of_value,
        **three_card_census.reference_of_value,
    }
    assert len(reference_of_value) == len(ALL_VALUES) == 7_917
    keys_in_value_order = [reference_of_value[v] for v in ALL_VALUES]
    # Strictly increasing: no 3-card value equals a 5-card one, and every pair is ordered alike.
    assert all(a < b for a, b in pairwise(keys_in_value_order))


# ---------------------------------------------------------------------------------------------
# The value type


def test_all_values_are_sorted_and_indexed_by_strength() -> None:
    assert [v.strength for v in ALL_VALUES] == list(range(7_917))
    assert len(FIVE_CARD_VALUES) == 7_462
    assert len(THREE_CARD_VALUES) == 455
    assert all(a < b for a, b in pairwise(ALL_VALUES))
    assert ALL_VALUES[0] == value("4c 3d 2h")  # the weakest front
    assert ALL_VALUES[-1] == value("As Ks Qs Js Ts")
    assert FIVE_CARD_VALUES[0] == value("7c 5d 4h 3s 2c")  # the weakest five cards


def test_values_are_frozen_and_shared() -> None:
    royal = value("As Ks Qs Js Ts")
    with pytest.raises(dataclasses.FrozenInstanceError):
        royal.strength = 0  # type: ignore[misc]
    assert value("Ah Kh Qh Jh Th") is royal
    assert hash(royal) == hash(value("Ad Kd Qd Jd Td"))


def test_key_pads_missing_kickers_below_the_deuce() -> None:
    assert value("Qs Qh Kd").key == (Category.PAIR, 10, 11, -1, -1, -1)
    assert value("Qc Qd Kh 3s 2s").key == (Category.PAIR, 10, 11, 1, 0, -1)
    assert value("Ac 2d 3h 4s 5c").ranks == (3,)  # the wheel's top is the five


def test_values_do_not_compare_with_other_types() -> None:
    royal = value("As Ks Qs Js Ts")
    assert royal != royal.strength
    with pytest.raises(TypeError):
        _ = royal < royal.strength


# ---------------------------------------------------------------------------------------------
# Rules: straights, suits, cross-size order


def test_wheel_is_the_lowest_straight_and_there_is_no_wrap_around() -> None:
    wheel = value("Ac 2d 3h 4s 5c")
    assert wheel.category == Category.STRAIGHT
    assert wheel < value("2c 3d 4h 5s 6c") < value("Tc Jd Qh Ks Ac")
    assert wheel > value("Ac Ad Ah Ks Qc")  # above every three of a kind
    assert value("Qc Kd Ah 2s 3c").category == Category.HIGH_CARD
    assert value("Jc Qd Kh As 2c").category == Category.HIGH_CARD
    steel_wheel = value("Ac 2c 3c 4c 5c")
    assert steel_wheel.category == Category.STRAIGHT_FLUSH
    assert steel_wheel.describe() == "five-high straight flush"
    assert steel_wheel < value("2h 3h 4h 5h 6h")
    assert steel_wheel > value("As Ad Ah Ac Kc")


def test_suits_never_break_ties() -> None:
    assert value("7c 7d 9s 5h 3d") == value("7h 7s 9c 5d 3c")
    assert value("Ac Kc 9c 5c 3c") == value("As Ks 9s 5s 3s")
    assert value("Tc Jd Qh Ks As") == value("Ts Js Qs Kd Ac")
    assert value("2s 2h Ad") == value("2c 2d As")


def test_a_missing_kicker_is_weaker_than_any_real_card() -> None:
    assert value("Qs Qh Kd") < value("Qc Qd Kh 3s 2s")
    assert value("Ks Qh Jd") < value("Kc Qd Jh 3s 2s")
    assert value("Kc Kd Kh") < value("Ks Kh Kd 3c 2c")


def test_cross_size_rows_compare_by_category_then_groups_then_kickers() -> None:
    # Front A-K-Q beats a middle A-K-J-x-x (that arrangement would be a foul).
    assert value("Ac Kd Qh") > value("As Kh Jd 3c 2c")
    assert value("Ac Kd Qh") < value("As Kh Qd 3c 2c")
    # A front pair of aces is stronger than a middle pair of kings (also a foul).
    assert value("Ac Ad Kh") > value("Ks Kh Qd Jc Tc")
    assert value("Ac Ad 2h") > value("Ks Kh Ad Qc Jc")
    assert value("Ac Ad 2h") < value("As Ah 3d 2c 4c")
    # Trips in front lose to any straight and beat every two pair.
    assert value("Ac Ad Ah") < value("Ac 2d 3h 4s 5c")
    assert value("2c 2d 2h") > value("As Ah Kd Kc Qc")
    # Different sizes never compare equal.
    assert all(f != v for f in THREE_CARD_VALUES[:50] for v in FIVE_CARD_VALUES[:50])


def test_worked_example_row_values() -> None:
    # rules.md §1: B wins the front, A the middle and the back.
    assert value("2s 2h Ad") < value("3s 3h 4d")
    assert value("7c 7d 9s 5h 3d") > value("6c 6d 8s 5c 2d")
    back_a, back_b = value("Tc Jc Qc Kc Ac"), value("9c 9d Th Ts As")
    assert back_a > back_b
    assert back_a.category == Category.STRAIGHT_FLUSH
    assert back_b.category == Category.TWO_PAIR


# ---------------------------------------------------------------------------------------------
# Words


@pytest.mark.parametrize(
    ("cards", "words"),
    [
        ("As Ks Qs Js Ts", "ace-high straight flush (royal flush)"),
        ("9h 8h 7h 6h 5h", "nine-high straight flush"),
        ("Ad 2d 3d 4d 5d", "five-high straight flush"),
        ("9c 9d 9h 9s 5c", "four of a kind, nines, kicker 5"),
        ("Kc Kd Ks 7h 7s", "full house, kings over sevens"),
        ("Ac Qc 9c 5c 3c", "ace-high flush, kickers Q 9 5 3"),
        ("Tc Jd Qh Ks Ac", "ace-high straight"),
        ("Ac 2d 3h 4s 5c", "five-high straight"),
        ("6c 6d 6h Ks 2c", "three of a kind, sixes, kickers K 2"),
        ("Kc Kd 7h 7s 9c", "two pair, kings and sevens, kicker 9"),
        ("7c 7d 9s 5h 3d", "pair of sevens, kickers 9 5 3"),
        ("Ac Kd 9h 5s 3c", "ace high, kickers K 9 5 3"),
        ("Td 8c 6s 4h 2d", "ten high, kickers 8 6 4 2"),
        ("Qs Qh Qd", "three of a kind, queens"),
        ("2s 2h Ad", "pair of twos, kicker A"),
        ("Ac Kd Th", "ace high, kickers K T"),
    ],
)
def test_describe(cards: str, words: str) -> None:
    assert value(cards).describe() == words
    assert str(value(cards)) == words


def test_describe_covers_every_category_of_every_size() -> None:
    described = {(v.size, v.category) for v in ALL_VALUES if v.describe()}
    assert described == {(5, category) for category in Category} | {
        (3, Category.THREE_OF_A_KIND),
        (3, Category.PAIR),
        (3, Category.HIGH_CARD),
    }


# ---------------------------------------------------------------------------------------------
# Input checking


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        ([0, 1, 2, 3], "3 or 5 cards"),
        ([], "3 or 5 cards"),
        ([0, 1, 2, 3, 4, 5], "3 or 5 cards"),
        ([0, 1, 1], "repeated"),
        ([0, 1, 2, 3, 0], "repeated"),
        ([0, 1, 52], "not a card"),
        ([-1, 1, 2, 3, 4], "not a card"),
        ([0.0, 1, 2], "not a card"),
    ],
)
def test_evaluate_refuses_bad_rows(cards: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(cards)


# ---------------------------------------------------------------------------------------------
# Properties

five_cards = st.lists(st.integers(0, 51), min_size=5, max_size=5, unique=True)
three_cards = st.lists(st.integers(0, 51), min_size=3, max_size=3, unique=True)
any_row = st.one_of(five_cards, three_cards)


@given(any_row, any_row, any_row)
def test_the_order_is_total_and_transitive(
    first: list[int], second: list[int], third: list[int]
) -> None:
    a, b, c = evaluate(first), evaluate(second), evaluate(third)
    assert [a < b, a == b, a > b].count(True) == 1
    assert (a <= b) == (not a > b)
    assert (a >= b) == (not a < b)
    assert (a < b) == (b > a)
    if a <= b and b <= c:
        assert a <= c
    if a < b and b < c:
        assert a < c


@given(any_row, any_row)
def test_the_order_agrees_with_strength_categories_and_the_reference(
    first: list[int], second: list[int]
) -> None:
    a, b = evaluate(first), evaluate(second)
    assert (a < b) == (a.strength < b.strength)
    assert (a == b) == (a.strength == b.strength) == (a.key == b.key)
    if a == b:
        assert hash(a) == hash(b)
        assert a.size == b.size
    if a.category > b.category:
        assert a > b
    key_a, key_b = reference_key_of_cards(first), reference_key_of_cards(second)
    assert (a < b) == (key_a < key_b)
    assert (a == b) == (key_a == key_b)


@given(any_row, st.permutations(range(4)))
def test_suit_renaming_and_card_order_do_not_change_the_value(
    cards: list[int], suit_map: list[int]
) -> None:
    renamed = [(card & ~3) | suit_map[card & 3] for card in cards]
    shuffled = list(reversed(cards))
    assert evaluate(renamed) == evaluate(cards) == evaluate(shuffled)


@given(five_cards)
def test_fast_paths_agree_with_the_checked_path(cards: list[int]) -> None:
    assert evaluate5(*cards) is evaluate(cards)
    assert evaluate3(*cards[:3]) is evaluate(cards[:3])


def test_card_order_within_a_row_never_matters() -> None:
    for cards in (parse_cards("Ac 2d 3h 4s 5c"), parse_cards("Qs Qh Kd")):
        assert len({evaluate(order) for order in permutations(cards)}) == 1

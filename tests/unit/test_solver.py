"""The arrangement solver, its objective and its shipped tables."""

import json
import random
from functools import cache
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.cards import CardError, parse_cards
from sapsam.rules.hands import FIVE_CARD_VALUES, THREE_CARD_VALUES, evaluate
from sapsam.rules.solver import Objective, legal_arrangements, objective, solve
from sapsam.rules.solver_tables import (
    FIVE_CARD_TOTAL,
    PLAYED_DEALS,
    PLAYED_FILE_NAME,
    THREE_CARD_TOTAL,
    compute_played_row_counts,
    compute_row_counts,
    encode,
    played_row_scores,
    shipped_text,
    win_scores,
)

WORKED_A_CARDS = parse_cards("2s 2h Ad 7c 7d 9s 5h 3d Tc Jc Qc Kc Ac")
HANDS = [
    WORKED_A_CARDS,
    parse_cards("2c 3d 4h 5s 7c 8d 9h Js Qc Kd Ah 6s Tc"),  # a dragon: one of every rank
    parse_cards("2c 2d 3c 3d 4c 4d 5c 5d 6c 6d 7c 7d 8c"),  # six pairs
    parse_cards("As Ah Ad Ac Ks Kh Kd Kc Qs Qh Qd Qc Js"),  # three quads
]


def random_legal_arrangement(cards: list[int], rng: random.Random) -> Arrangement:
    """Shuffle the cards into 3/5/5 until the split is legal (fouls are rejected)."""
    while True:
        shuffled = cards[:]
        rng.shuffle(shuffled)
        arrangement = Arrangement.of(shuffled[:3], shuffled[3:8], shuffled[8:])
        if not check_arrangement(arrangement).foul:
            return arrangement


@cache
def every_legal_arrangement(cards: tuple[int, ...]) -> tuple[Arrangement, ...]:
    """Every legal arrangement of a hand of HANDS: enumerated once (about a second) for all the
    objectives' tests below."""
    return tuple(legal_arrangements(cards))


@pytest.mark.parametrize("goal", list(Objective))
@pytest.mark.parametrize("cards", HANDS, ids=["worked-a", "dragon", "six-pairs", "quads"])
def test_solver_is_legal_and_optimal_over_every_legal_arrangement(
    cards: tuple[int, ...], goal: Objective
) -> None:
    solved = solve(cards, goal=goal)
    assert not check_arrangement(solved, dealt=cards).foul
    best = max(objective(arrangement, goal) for arrangement in every_legal_arrangement(cards))
    assert objective(solved, goal) == best


def test_legal_arrangements_are_exactly_the_splits_that_are_not_fouls() -> None:
    cards = list(WORKED_A_CARDS)
    expected = set()
    for back in combinations(cards, 5):
        rest = [card for card in cards if card not in back]
        for middle in combinations(rest, 5):
            front = [card for card in rest if card not in middle]
            arrangement = Arrangement.of(front, middle, back)
            if not check_arrangement(arrangement).foul:
                expected.add(arrangement.canonical())
    found = [arrangement.canonical() for arrangement in legal_arrangements(cards)]
    assert len(found) == len(set(found))
    assert set(found) == expected


def test_the_worked_example_hand_solves_to_a_known_arrangement() -> None:
    solved = solve(WORKED_A_CARDS)
    # Better than A's own split in rules.md: aces in front, two pair in the middle, a king-high
    # straight behind (the straight flush broken up).
    assert str(solved) == "Ac Ad 5h / 7c 7d 3d 2h 2s / Kc Qc Jc Tc 9s"
    assert objective(solved) > objective(
        Arrangement.parse("2s 2h Ad", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ac")
    )


def test_result_depends_on_the_cards_not_their_order() -> None:
    assert solve(WORKED_A_CARDS) == solve(tuple(reversed(WORKED_A_CARDS)))


def test_solver_refuses_a_wrong_count_or_repeats() -> None:
    with pytest.raises(CardError, match="expected 13 cards, got 12"):
        solve(WORKED_A_CARDS[:12])
    with pytest.raises(CardError, match="repeated card"):
        solve((*WORKED_A_CARDS[:12], WORKED_A_CARDS[0]))


def test_objective_needs_three_five_five_distinct_cards() -> None:
    with pytest.raises(ValueError, match="not a 3/5/5"):
        objective(Arrangement.parse("2s 2h", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ac Ad"))


def test_objective_is_the_summed_chance_of_beating_random_rows() -> None:
    # Royal flush back, ace-high straight flush... the strongest rows approach 1 each.
    arrangement = Arrangement.parse("As Ah Ad", "Ks Qs Js Ts 9s", "Ac Kc Qc Jc Tc")
    assert objective(arrangement) == pytest.approx(3.0, abs=2e-4)
    weakest = Arrangement.parse("2c 3d 4h", "2d 3h 4s 5c 7d", "2h 3s 4c 5d 7h")
    assert objective(weakest) == pytest.approx(0.0, abs=2e-3)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**64), st.sampled_from(Objective))
def test_solver_beats_or_equals_200_random_legal_arrangements(seed: int, goal: Objective) -> None:
    rng = random.Random(seed)
    cards = rng.sample(range(52), 13)
    solved = solve(cards, goal=goal)
    check = check_arrangement(solved, dealt=cards)
    assert not check.foul, check.detail
    best = objective(solved, goal)
    for _ in range(200):
        assert objective(random_legal_arrangement(cards, rng), goal) <= best


def test_shipped_tables_cover_every_value_once() -> None:
    table = json.loads(shipped_text())
    assert table["five_card"]["total"] == FIVE_CARD_TOTAL
    assert table["three_card"]["total"] == THREE_CARD_TOTAL
    assert {int(key) for key in table["five_card"]["counts"]} == {
        value.strength for value in FIVE_CARD_VALUES
    }
    assert {int(key) for key in table["three_card"]["counts"]} == {
        value.strength for value in THREE_CARD_VALUES
    }
    royal = evaluate(parse_cards("As Ks Qs Js Ts")).strength
    trip_aces = evaluate(parse_cards("As Ah Ad")).strength
    assert table["five_card"]["counts"][str(royal)] == 4
    assert table["three_card"]["counts"][str(trip_aces)] == 4
    five, three, denominator = win_scores()
    # A royal flush ties 3 of the other royal flushes' 4 … of all hands: (2 * below + 4) / 2.
    assert five[royal] == denominator - 4 * denominator // (2 * FIVE_CARD_TOTAL)
    assert three[trip_aces] == denominator - 4 * denominator // (2 * THREE_CARD_TOTAL)


def test_played_rows_aim_at_real_rows() -> None:
    # A real back is much stronger than a random hand: the same two pair that beats most random
    # hands beats few real backs, and more real middles than real backs.
    two_pair = Arrangement.parse("2c 3d 4h", "5c 5d 6h 6s 8c", "9c 9d Th Ts Ac")
    front, middle, back, denominator = played_row_scores()
    back_strength = evaluate(two_pair.back).strength
    assert back[back_strength] < middle[back_strength]
    assert (
        back[back_strength] / denominator < 0.5 < win_scores()[0][back_strength] / win_scores()[2]
    )
    assert objective(two_pair, Objective.PLAYED_ROWS) < objective(two_pair)
    assert json.loads(shipped_text(PLAYED_FILE_NAME))["deals"] == PLAYED_DEALS
    assert len(front) == len(THREE_CARD_VALUES)


def test_goal_can_be_named_by_its_string() -> None:
    assert solve(WORKED_A_CARDS, goal="played_rows") == solve(  # type: ignore[arg-type]
        WORKED_A_CARDS, goal=Objective.PLAYED_ROWS
    )


@pytest.mark.slow
def test_shipped_tables_equal_a_fresh_exhaustive_enumeration() -> None:
    assert shipped_text() == encode(compute_row_counts())


@pytest.mark.slow
def test_shipped_played_rows_equal_a_fresh_simulation() -> None:
    assert shipped_text(PLAYED_FILE_NAME) == encode(compute_played_row_counts())

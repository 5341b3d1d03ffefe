"""``row_order``: source 004's rows that must each beat the one before, against the default.

004: «Backhand musi pokonać środkowy układ, a środkowy układ musi pokonać przedni układ.» — "The
back hand must beat the middle hand, and the middle hand must beat the front hand." 000 and 003
allow equal rows (docs/rules.md §1.5).
"""

import random

import pytest

from sapsam.rules.arrangement import Arrangement, FoulReason, check_arrangement
from sapsam.rules.hands import evaluate5
from sapsam.rules.presets import PRESETS
from sapsam.rules.ruleset import RowOrder, RuleSet
from sapsam.rules.scoring import score_deal
from sapsam.rules.solver import solve

# Seat 0's middle and back are equal king-high straights: legal under pagat, a foul under 004.
SEATS = [
    Arrangement.parse("Ac Ad 2c", "9c Td Jh Qs Kc", "9d Th Js Qc Kd"),  # aces; two equal straights
    Arrangement.parse("2d 2h 3c", "4c 4d 4h 5c 6c", "Ah As 8c 8d 8h"),  # twos; trips; eights full
    Arrangement.parse("3d 3h 2s", "5d 5h 5s Tc Ts", "7c 7d 7h 7s 4s"),  # threes; fives full; quads
    Arrangement.parse("Qd Qh 3s", "Kh Ks Jc Jd 8s", "6d 6h 6s 9h 9s"),  # queens; two pair; 6s full
]


def test_equal_middle_and_back_are_a_foul_only_under_strictly_increasing() -> None:
    assert not check_arrangement(SEATS[0]).foul
    strict = check_arrangement(SEATS[0], strict_order=True)
    assert strict.foul and strict.reason is FoulReason.ROWS_OUT_OF_ORDER
    assert "does not beat back" in strict.detail
    for seat in SEATS[1:]:
        assert not check_arrangement(seat, strict_order=True).foul


@pytest.mark.parametrize(
    ("preset_name", "deltas", "totals"),
    [
        # Seat 0 legal: 0-1 wins front and middle, loses the back (+1); 0-2 wins the front only
        # (-1); 0-3 wins front and middle (+1); 1-2 loses all (-3); 1-3 and 2-3 lose the front
        # only (+1 each).
        ("pagat", [1, -1, 1, -3, 1, 1], [1, -3, 5, -3]),
        # Seat 0 fouled: it loses all three rows to each opponent (-3 three times).
        ("four_player", [-3, -3, -3, -3, 1, 1], [-9, 1, 7, 1]),
    ],
)
def test_a_four_seat_deal_under_both_orders(
    preset_name: str, deltas: list[int], totals: list[int]
) -> None:
    rule_set = PRESETS[preset_name]
    checks = [check_arrangement(seat, strict_order=rule_set.strict_row_order) for seat in SEATS]
    score = score_deal(rule_set, checks)
    assert [pair.delta for pair in score.pairs] == deltas
    assert list(score.totals) == totals
    assert sum(score.totals) == 0


def test_the_four_player_preset_is_sources_004_game() -> None:
    four = PRESETS["four_player"]
    assert (four.min_seats, four.max_seats) == (4, 4)  # «LICZBA GRACZY: 4 graczy»
    assert four.row_order is RowOrder.STRICTLY_INCREASING
    assert RuleSet().row_order is RowOrder.NON_DECREASING


def test_the_solver_keeps_rows_strictly_increasing_when_asked() -> None:
    # Two equal king-high straights and little else: the unconstrained best splits them.
    cards = [card for row in SEATS[0].rows for card in row]
    loose = solve(cards, PRESETS["pagat"])
    strict = solve(cards, PRESETS["four_player"])
    assert not check_arrangement(loose, cards).foul
    assert not check_arrangement(strict, cards, strict_order=True).foul
    rng = random.Random(4)
    for _ in range(300):
        hand = rng.sample(range(52), 13)
        arrangement = solve(hand, PRESETS["four_player"])
        assert not check_arrangement(arrangement, hand, strict_order=True).foul
        assert evaluate5(*arrangement.middle) < evaluate5(*arrangement.back)

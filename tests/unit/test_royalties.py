"""Royalties (docs/rules.md §2.7): hand-computed deals under source 004's table and 002's options.

004: «Za wygraną przednią rękę z 3 takimi samymi gracz otrzymuje 3 jednostki. Za środkową rękę
wygraną z fullem otrzymujesz 2 jednostki. Za wygraną Back lub Middlehand z 4 takimi samymi
układami otrzymujesz 4 jednostki. Za wygrany Back lub Middlehand z Royal Flush lub Straight Flush
otrzymujesz 5 jednostek.» — a won front with trips 3 units, a middle won with a full house 2, a
won back or middle with quads 4, with a (royal or) straight flush 5.
"""

import pytest

from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.presets import PRESETS
from sapsam.rules.royalties import RoyaltyLimit, RoyaltyPayment, row_royalties
from sapsam.rules.ruleset import RuleSet, RuleSetError
from sapsam.rules.scoring import score_deal

# A: trips in front (3), a full house in the middle (2), quads in the back (4).
A = Arrangement.parse("Qc Qd Qh", "5c 5d 5h 9c 9d", "8c 8d 8h 8s 2c")
# B: a pair in front (0), a straight flush in the middle (5) and in the back (5).
B = Arrangement.parse("Ac Ad 3c", "4s 5s 6s 7s 3s", "9s Ts Js Qs Ks")


def pair_delta(rule_set: RuleSet) -> int:
    score = score_deal(rule_set, [check_arrangement(A), check_arrangement(B)])
    reverse = score_deal(rule_set, [check_arrangement(B), check_arrangement(A)])
    assert reverse.pairs[0].delta == -score.pairs[0].delta  # antisymmetric, so zero-sum
    return score.pairs[0].delta


def test_each_rows_royalty_follows_the_004_table() -> None:
    rules = RuleSet(royalties=RoyaltyPayment.WON_ROW)
    assert row_royalties(rules, check_arrangement(A)) == (3, 2, 4)
    assert row_royalties(rules, check_arrangement(B)) == (0, 5, 5)
    assert row_royalties(RuleSet(), check_arrangement(A)) == (0, 0, 0)  # royalties none
    middle_trips = rules.with_changes(royalty_middle_three_of_a_kind=2)
    trips = Arrangement.parse("2c 3d 4h", "7c 7d 7h Kc 2d", "Ac Ah As 9h 9s")
    assert row_royalties(middle_trips, check_arrangement(trips)) == (0, 2, 0)
    assert row_royalties(rules, check_arrangement(trips)) == (0, 0, 0)  # the default 0


@pytest.mark.parametrize(
    ("payment", "limit", "delta"),
    [
        # A wins the front, B the middle and back: rows -1. A collects its front trips (3); B
        # its middle and back straight flushes (5 + 5): -1 + 3 - 10 = -8.
        (RoyaltyPayment.WON_ROW, RoyaltyLimit.EVERY_ROW, -8),
        # 002's "one royalty per hand": A's largest won 3, B's 5: -1 + 3 - 5 = -3.
        (RoyaltyPayment.WON_ROW, RoyaltyLimit.LARGEST_ONLY, -3),
        # Held, won or lost: A 3 + 2 + 4 = 9, B 0 + 5 + 5 = 10: -1 + 9 - 10 = -2.
        (RoyaltyPayment.HELD_ROW, RoyaltyLimit.EVERY_ROW, -2),
        # Held, largest only: A 4, B 5: -1 + 4 - 5 = -2.
        (RoyaltyPayment.HELD_ROW, RoyaltyLimit.LARGEST_ONLY, -2),
        (RoyaltyPayment.NONE, RoyaltyLimit.EVERY_ROW, -1),
    ],
)
def test_a_pair_under_every_payment_and_limit(
    payment: RoyaltyPayment, limit: RoyaltyLimit, delta: int
) -> None:
    rules = RuleSet(royalties=payment, royalty_limit=limit)
    assert pair_delta(rules) == delta
    assert pair_delta(rules.with_changes(row_unit=2)) == 2 * delta


def test_amounts_are_overridable_and_a_foul_earns_none() -> None:
    flat = RuleSet(
        royalties=RoyaltyPayment.WON_ROW,
        royalty_front_three_of_a_kind=1,
        royalty_middle_straight_flush=1,
        royalty_back_straight_flush=1,
    )  # 002: «toate redevențele valorează aceeași sumă (de exemplu, 1 unitate pe redevență)»
    assert pair_delta(flat) == -1 + 1 - 2
    fouled = Arrangement.parse("Qc Qd Qh", "8c 8d 8h 8s 2c", "5c 5d 5h 9c 9d")  # A, rows swapped
    score = score_deal(flat, [check_arrangement(fouled), check_arrangement(B)])
    # B wins every row against the foul and collects its royalties; the foul's count for nothing.
    assert score.pairs[0].delta == -3 - 2


def test_four_player_royalties_a_four_seat_deal() -> None:
    seats = [
        Arrangement.parse("Ac Ad 2c", "9c Td Jh Qs Kc", "9d Th Js Qc Kd"),  # fouls: equal rows
        Arrangement.parse("2d 2h 3c", "4c 4d 4h 5c 6c", "Ah As 8c 8d 8h"),  # no royalty row
        Arrangement.parse("3d 3h 2s", "5d 5h 5s Tc Ts", "7c 7d 7h 7s 4s"),  # middle FH 2, quads 4
        Arrangement.parse("Qd Qh 3s", "Kh Ks Jc Jd 8s", "6d 6h 6s 9h 9s"),  # no royalty row
    ]
    rules = PRESETS["four_player_royalties"]
    checks = [check_arrangement(seat, strict_order=rules.strict_row_order) for seat in seats]
    score = score_deal(rules, checks)
    # 0-1 -3; 0-2 -3 - (2 + 4); 0-3 -3; 1-2 -3 - (2 + 4); 1-3 +1 (seat 1's won rows pay nothing);
    # 2-3 +1 + (2 + 4) for seat 2's won middle and back.
    assert [pair.delta for pair in score.pairs] == [-3, -9, -3, -9, 1, 7]
    assert list(score.totals) == [-15, -5, 25, -5]


def test_royalties_exist_from_rules_version_4() -> None:
    with pytest.raises(RuleSetError, match="'royalties' does not exist in rules version 3"):
        RuleSet.from_dict({"rules_version": 3, "royalties": "won_row"})
    with pytest.raises(RuleSetError, match="'royalty_back_straight_flush'"):
        RuleSet.from_dict({"royalty_back_straight_flush": 1_001}).check_limits()

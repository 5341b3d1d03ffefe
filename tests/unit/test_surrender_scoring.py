"""Surrender scoring (docs/rules.md §2.8): hand-computed deals.

Source 002, line 3: «După ce toți jucătorii și-au pus mâinile, fiecare jucător va anunța la rândul
său (în sensul acelor de ceasornic, pornind de la stânga dealerului), indiferent dacă își joacă sau
nu mâna.» -- after every player has set their hand, each in turn, clockwise from the dealer's left,
announces whether they play it. The price and whom it is paid to are the rule set's
(``surrender_price``, ``surrender``): the source gives neither.

The four hands (one deck, no card twice): A and B are source 000's worked example.
Row results, per_row, from the first seat's side (front, middle, back):
  A-B (-1, +1, +1) +1   A-C (+1, -1, +1) +1   A-D (+1, -1, +1) +1
  B-C (+1, -1, +1) +1   B-D (+1, -1, -1) -1   C-D (-1, -1, -1) -3
so without surrender A +3, B -1, C -5, D +3.
"""

from itertools import product

import pytest

from sapsam.rules.arrangement import Arrangement, ArrangementCheck, check_arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.naturals import Natural, NaturalsTable, natural_hand
from sapsam.rules.royalties import RoyaltyPayment
from sapsam.rules.ruleset import RuleSet, RuleSetError, ScoringMethod, SurrenderRule
from sapsam.rules.scoring import score_deal
from sapsam.rules.surrender import NO_ROWS, score_with_surrender

A = Arrangement.parse("2s 2h Ad", "7c 7d 9s 5h 3d", "Tc Jc Qc Kc Ac")  # pair, pair, SF
B = Arrangement.parse("3s 3h 4d", "6c 6d 8s 5c 2d", "9c 9d Th Ts As")  # pair, pair, two pair
C = Arrangement.parse("4c 5d 7h", "8c 8h 2c 3c 4h", "Kd Kh Qd Jd Td")  # 7 high, 8s, kings
D = Arrangement.parse("Js Qs Ks", "4s 5s 6s 7s 8d", "6h 9h Jh Qh Kh")  # K high, straight, flush
# D's cards with the middle and back swapped: a flush in the middle over a straight, a foul.
D_FOUL = Arrangement.parse("Js Qs Ks", "6h 9h Jh Qh Kh", "4s 5s 6s 7s 8d")

DRAGON = "2c 3d 4h 5s 6c 7d 8h 9s Tc Jd Qh Ks Ac"  # one card of every rank: 002's dragon
PER_ROW = RuleSet(surrender=SurrenderRule.PAY_PLAYERS)


def checks(*arrangements: Arrangement) -> list[ArrangementCheck]:
    return [check_arrangement(arrangement) for arrangement in arrangements]


def totals(
    rule_set: RuleSet, surrendered: tuple[bool, ...], *hands: Arrangement
) -> tuple[int, ...]:
    score = score_with_surrender(rule_set, checks(*hands), surrendered)
    assert sum(score.totals) == 0
    return score.totals


def test_the_hands_score_as_the_docstring_says_without_surrender() -> None:
    score = score_deal(PER_ROW, checks(A, B, C, D))
    assert [pair.rows for pair in score.pairs] == [
        (-1, 1, 1), (1, -1, 1), (1, -1, 1), (1, -1, 1), (1, -1, -1), (-1, -1, -1)
    ]  # fmt: skip
    assert score.totals == (3, -1, -5, 3)
    assert score_with_surrender(PER_ROW, checks(A, B, C, D), (False,) * 4) == score


def test_deal_1_per_row_c_surrenders_and_pays_two_to_each_player() -> None:
    # C pays 2 to A, B and D (-6, worse than the -5 it would have lost); the other pairs play:
    # A +1 +1 (B, D) +2 = 4; B -1 -1 (A, D) +2 = 0; D -1 +1 (A, B) +2 = 2.
    score = score_with_surrender(PER_ROW, checks(A, B, C, D), (False, False, True, False))
    assert score.totals == (4, 0, -6, 2)
    by_pair = {(pair.seat_a, pair.seat_b): pair for pair in score.pairs}
    assert by_pair[0, 2].rows == NO_ROWS and by_pair[0, 2].delta == 2
    assert by_pair[2, 3].rows == NO_ROWS and by_pair[2, 3].delta == -2
    assert by_pair[0, 1].rows == (-1, 1, 1)  # a pair of players compares rows as ever


def test_deal_2_two_four_c_surrenders_and_saves_two_units() -> None:
    # 2-4: every 2-1 nets 2, C-D is D's scoop, 4. Played, C would lose 2 + 2 + 4 = 8; it pays
    # 3 x 2 = 6. A 2 + 2 (B, D) + 2 = 6; B -2 -2 (A, D) + 2 = -2; D -2 + 2 (A, B) + 2 = 2.
    rules = PER_ROW.with_changes(scoring=ScoringMethod.TWO_FOUR)
    assert score_deal(rules, checks(A, B, C, D)).totals[2] == -8
    assert totals(rules, (False, False, True, False), A, B, C, D) == (6, -2, -6, 2)


def test_deal_3_all_but_one_surrender_the_one_collects_from_each() -> None:
    # A alone plays: it compares rows with nobody and collects 2 from each of B, C, D; the
    # surrendered seats settle nothing among themselves.
    score = score_with_surrender(PER_ROW, checks(A, B, C, D), (False, True, True, True))
    assert score.totals == (6, -2, -2, -2)
    assert all(pair.delta == 0 for pair in score.pairs if pair.seat_a != 0)
    assert all(pair.rows == NO_ROWS for pair in score.pairs)


def test_deal_4_every_seat_surrenders_nothing_changes_hands() -> None:
    assert totals(PER_ROW, (True, True, True, True), A, B, C, D) == (0, 0, 0, 0)


def test_deal_5_a_fouled_player_collects_only_under_pay_players() -> None:
    # D fouls: A and B win all three rows against it (+3 each). C surrenders.
    # pay_players: C pays A, B and D: A +1 +2 +3 = 6, B -1 +2 +3 = 4, C -6, D -3 -3 +2 = -4.
    assert totals(PER_ROW, (False, False, True, False), A, B, C, D_FOUL) == (6, 4, -6, -4)
    # pay_legal_hands: D's foul collects nothing from C: C -4, D -6.
    legal = PER_ROW.with_changes(surrender=SurrenderRule.PAY_LEGAL_HANDS)
    assert totals(legal, (False, False, True, False), A, B, C, D_FOUL) == (6, 4, -4, -6)


def test_deal_6_the_price_is_counted_in_units_of_row_unit() -> None:
    # One-six at 10 a unit, price 3: B's surrender costs it 30, whatever A holds.
    rules = PER_ROW.with_changes(scoring=ScoringMethod.ONE_SIX, row_unit=10, surrender_price=3)
    assert totals(rules, (False, True), A, B) == (30, -30)
    assert totals(rules, (True, False), A, B) == (-30, 30)


def test_deal_7_no_royalty_passes_in_a_surrendered_pair() -> None:
    # A's back straight flush is worth 5 under 004's won-row royalties; against C, which
    # surrendered, A collects the price only (2), not the row or its royalty.
    rules = PER_ROW.with_changes(royalties=RoyaltyPayment.WON_ROW)
    assert score_deal(rules, checks(A, C)).totals == (1 + 5, -6)
    assert totals(rules, (False, True), A, C) == (2, -2)


@pytest.mark.parametrize("rule", [SurrenderRule.PAY_PLAYERS, SurrenderRule.PAY_LEGAL_HANDS])
@pytest.mark.parametrize("method", list(ScoringMethod))
def test_every_announcement_pattern_is_zero_sum(rule: SurrenderRule, method: ScoringMethod) -> None:
    rules = RuleSet(surrender=rule, scoring=method, surrender_price=5)
    for surrendered in product((False, True), repeat=4):
        score = score_with_surrender(rules, checks(A, B, C, D_FOUL), surrendered)
        assert sum(score.totals) == 0
        for pair in score.pairs:
            if surrendered[pair.seat_a] and surrendered[pair.seat_b]:
                assert pair.delta == 0


def test_a_surrender_under_a_rule_set_without_it_is_refused() -> None:
    with pytest.raises(ValueError, match="without surrender"):
        score_with_surrender(RuleSet(), checks(A, B), (True, False))
    with pytest.raises(ValueError, match="announcements"):
        score_with_surrender(PER_ROW, checks(A, B), (True,))


def test_surrender_fields_are_recorded_only_when_used() -> None:
    # A rule set without surrender records exactly the keys it recorded before the fields.
    assert not {"surrender", "surrender_price", "surrender_seconds"} & RuleSet().to_dict().keys()
    on = RuleSet(surrender=SurrenderRule.PAY_PLAYERS, surrender_seconds=20)
    assert on.to_dict()["surrender"] == "pay_players"
    assert on.to_dict()["surrender_price"] == 2 and on.to_dict()["surrender_seconds"] == 20
    for rule_set in (RuleSet(), on, RuleSet(surrender_price=7)):
        assert RuleSet.from_dict(rule_set.to_dict()) == rule_set
    with pytest.raises(RuleSetError, match="surrender_price"):
        RuleSet(surrender_price=1001)
    with pytest.raises(RuleSetError, match="surrender_seconds"):
        RuleSet(surrender_seconds=0)
    with pytest.raises(RuleSetError, match="does not exist in rules version 3"):
        RuleSet.from_dict({"rules_version": 3, "surrender": "pay_players"})


def test_deal_8_a_natural_is_paid_before_anyone_surrenders() -> None:
    # 002, line 21: a natural is rewarded at once, «înainte de a se preda oricine» (before anyone
    # surrenders). A holds a dragon (13 units under 004's table); B surrenders: the pair settles
    # the dragon, not the price. C plays: C-B settles the price, A-C the dragon.
    rules = PER_ROW.with_changes(naturals=NaturalsTable.CLASSIC)
    dragon = parse_cards(DRAGON.split(" "))
    held = natural_hand(rules, Natural.DRAGON, [int(card) for card in dragon])
    assert held is not None
    naturals = (held, None, None)
    score = score_with_surrender(rules, checks(A, B, C), (False, True, False), naturals)
    by_pair = {(pair.seat_a, pair.seat_b): pair.delta for pair in score.pairs}
    assert by_pair == {(0, 1): 13, (0, 2): 13, (1, 2): -2}
    assert score.totals == (26, -15, -11)

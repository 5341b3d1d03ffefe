"""Scoring a deal: the worked example, fouls, 3 and 4 seats, every method, standings."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sapsam.rules.arrangement import Arrangement, ArrangementCheck, check_arrangement
from sapsam.rules.cards import DECK
from sapsam.rules.presets import DEFAULT_RULE_SET, PRESETS
from sapsam.rules.ruleset import MajorityRule, RuleSet, ScoringMethod
from sapsam.rules.scoring import (
    DealScore,
    PairResult,
    Standing,
    compare_rows,
    score_deal,
    series_totals,
    settle,
    standings,
)

WORKED_A = Arrangement.parse("2♠ 2♥ A♦", "7♣ 7♦ 9♠ 5♥ 3♦", "10♣ J♣ Q♣ K♣ A♣")
WORKED_B = Arrangement.parse("3♠ 3♥ 4♦", "6♣ 6♦ 8♠ 5♣ 2♦", "9♣ 9♦ 10♥ 10♠ A♠")
# Two more legal hands from the cards the worked example leaves, for 3- and 4-seat deals.
LEGAL_C = Arrangement.parse("4c 4h 5d", "8c 8d 8h Jd Js", "Kd Kh Ks Qd Qh")
LEGAL_D = Arrangement.parse("Qs Jh 9h", "6h 6s 2c 3c 4s", "7h 7s Ah Td 5s")
FOULED = Arrangement.parse("Kd Kh Ks", "8c 8d 8h Jd Js", "4c 4h 5d Qd Qh")  # full house over 2 pair


def check(arrangement: Arrangement) -> ArrangementCheck:
    return check_arrangement(arrangement)


def test_worked_example_exactly() -> None:
    score = score_deal(DEFAULT_RULE_SET, [check(WORKED_A), check(WORKED_B)])
    assert score.pairs == (PairResult(seat_a=0, seat_b=1, rows=(-1, 1, 1), delta=1),)
    assert score.totals == (1, -1)
    # The same deal with the seats swapped, from B's side.
    swapped = score_deal(DEFAULT_RULE_SET, [check(WORKED_B), check(WORKED_A)])
    assert swapped.pairs == (PairResult(seat_a=0, seat_b=1, rows=(1, -1, -1), delta=-1),)
    assert swapped.totals == (-1, 1)


def test_a_legal_hand_wins_all_rows_against_a_foul_whatever_the_cards() -> None:
    fouled = check(FOULED)
    assert fouled.foul
    # The fouled hand's trips and full house would beat B's front and middle: it still loses.
    score = score_deal(DEFAULT_RULE_SET, [fouled, check(WORKED_B)])
    assert score.pairs[0].rows == (-1, -1, -1)
    assert score.totals == (-3, 3)


def test_two_fouls_score_nothing_between_them() -> None:
    other_foul = check(Arrangement.parse("As Ah Ad", "2c 3d 4h 5s 7c", "Kc Qd Jh 9s 8c"))
    assert other_foul.foul
    score = score_deal(DEFAULT_RULE_SET, [check(FOULED), other_foul])
    assert score.pairs == (PairResult(0, 1, (0, 0, 0), 0),)
    assert score.totals == (0, 0)


def test_three_seats_with_a_foul() -> None:
    score = score_deal(DEFAULT_RULE_SET, [check(WORKED_A), check(WORKED_B), check(FOULED)])
    assert [(pair.seat_a, pair.seat_b, pair.rows, pair.delta) for pair in score.pairs] == [
        (0, 1, (-1, 1, 1), 1),
        (0, 2, (1, 1, 1), 3),
        (1, 2, (1, 1, 1), 3),
    ]
    assert score.totals == (4, 2, -6)


def test_four_seats() -> None:
    hands = [WORKED_A, WORKED_B, LEGAL_C, LEGAL_D]
    assert len({card for hand in hands for card in hand.cards}) == 52
    checks = [check(hand) for hand in hands]
    assert not any(c.foul for c in checks)
    score = score_deal(DEFAULT_RULE_SET, checks)
    assert [(pair.seat_a, pair.seat_b, pair.rows, pair.delta) for pair in score.pairs] == [
        (0, 1, (-1, 1, 1), 1),  # the worked example
        (0, 2, (-1, -1, 1), -1),  # 2s < 4s; pair of 7s < full house; straight flush > full house
        (0, 3, (1, 1, 1), 3),  # pair of 2s > queen high; 7s > 6s; straight flush > pair
        (1, 2, (-1, -1, -1), -3),
        (1, 3, (1, 1, 1), 3),  # middle 6-6-8-5-2 beats 6-6-4-3-2 on the first kicker
        (2, 3, (1, 1, 1), 3),
    ]
    assert score.totals == (3, -1, 7, -9)
    two_four = score_deal(PRESETS["pagat_two_four"], checks)
    assert two_four.totals == (1 + 1 - 2 + 4, -2 - 4 + 4, 2 + 4 + 4, -4 - 4 - 4)


@pytest.mark.parametrize(
    ("method", "rows", "units"),
    [
        (ScoringMethod.PER_ROW, (1, 1, -1), 1),
        (ScoringMethod.PER_ROW, (1, 1, 1), 3),
        (ScoringMethod.PER_ROW, (1, 0, -1), 0),
        (ScoringMethod.PER_ROW, (0, 0, 0), 0),
        (ScoringMethod.TWO_FOUR, (1, 1, -1), 2),
        (ScoringMethod.TWO_FOUR, (1, 1, 1), 4),
        (ScoringMethod.TWO_FOUR, (-1, -1, -1), -4),
        # 002: an extra unit «dacă câștigă în două sau trei dintre mâini» (two or three won)
        (ScoringMethod.TWO_FOUR, (1, 0, 0), 1),  # one won, two tied: no majority
        (ScoringMethod.TWO_FOUR, (1, 1, 0), 3),
        (ScoringMethod.TWO_FOUR, (1, -1, 0), 0),
        (ScoringMethod.ONE_SIX, (1, 1, -1), 1),
        (ScoringMethod.ONE_SIX, (-1, 1, -1), -1),
        (ScoringMethod.ONE_SIX, (1, 1, 1), 6),
        (ScoringMethod.ONE_SIX, (-1, -1, -1), -6),
        # 003: a point «pentru o victorie în două din cele trei rânduri» (two of three won)
        (ScoringMethod.ONE_SIX, (1, 0, 0), 0),  # one won, two tied: no 2-of-3 point
        (ScoringMethod.ONE_SIX, (1, 1, 0), 1),  # two won, one tied: not a scoop
        (ScoringMethod.ONE_SIX, (1, -1, 0), 0),
        (ScoringMethod.ONE_SIX, (0, 0, 0), 0),
        (ScoringMethod.PER_ROW_SCOOP_BONUS, (1, 1, 1), 4),
        (ScoringMethod.PER_ROW_SCOOP_BONUS, (-1, -1, -1), -4),
        (ScoringMethod.PER_ROW_SCOOP_BONUS, (1, 1, 0), 2),
        (ScoringMethod.PER_ROW_SCOOP_BONUS, (1, 1, -1), 1),
    ],
)
def test_each_method_settles_rows(
    method: ScoringMethod, rows: tuple[int, int, int], units: int
) -> None:
    rule_set = RuleSet(name="test", scoring=method)
    assert settle(rule_set, rows) == units
    assert settle(rule_set, (-rows[0], -rows[1], -rows[2])) == -units
    assert settle(rule_set.with_changes(row_unit=5), rows) == 5 * units


@pytest.mark.parametrize(
    ("method", "rows", "units"),
    [
        (ScoringMethod.TWO_FOUR, (1, 0, 0), 2),  # one won, two tied: more won than lost
        (ScoringMethod.TWO_FOUR, (0, -1, 0), -2),
        (ScoringMethod.TWO_FOUR, (1, 1, 0), 3),
        (ScoringMethod.TWO_FOUR, (1, -1, 0), 0),
        (ScoringMethod.ONE_SIX, (0, 0, 1), 1),
        (ScoringMethod.ONE_SIX, (1, -1, 0), 0),
        (ScoringMethod.ONE_SIX, (1, 1, 1), 6),
        (ScoringMethod.PER_ROW, (1, 0, 0), 1),
        (ScoringMethod.PER_ROW_SCOOP_BONUS, (1, 0, 0), 1),
    ],
)
def test_more_rows_won_and_rules_version_1_give_the_majority_to_more_rows_won(
    method: ScoringMethod, rows: tuple[int, int, int], units: int
) -> None:
    chosen = RuleSet(scoring=method, majority=MajorityRule.MORE_ROWS_WON)
    version_1 = RuleSet.from_dict({"scoring": method.value, "rules_version": 1})
    for rule_set in (chosen, version_1):
        assert settle(rule_set, rows) == units
        assert settle(rule_set, (-rows[0], -rows[1], -rows[2])) == -units


def test_amounts_come_from_the_rule_set() -> None:
    one_six = PRESETS["pagat_one_six"].with_changes(one_six_two_of_three=2, one_six_scoop=9)
    assert settle(one_six, (1, 1, -1)) == 2
    assert settle(one_six, (1, 1, 1)) == 9
    scoop = PRESETS["pagat_scoop_bonus"].with_changes(scoop_bonus=3, row_unit=2)
    assert settle(scoop, (1, 1, 1)) == 2 * (3 + 3)


def test_foul_against_legal_is_a_scoop_under_every_method() -> None:
    checks = [check(FOULED), check(WORKED_A)]
    expected = {
        "pagat": -3,
        "pagat_two_four": -4,
        "pagat_one_six": -6,
        "pagat_one_six_two": -6,
        "pagat_scoop_bonus": -4,
        "four_player": -3,  # per row; scored here as one pair of its four seats
        "four_player_royalties": -8,  # 3 rows + the royal back's straight-flush royalty (5)
        "four_player_bonus": -8,  # the same: no natural declared, the rows score
        "capsa_susun": -5,  # 2-4's scoop (4) + the back straight flush, 1 unit
        "capsa_susun_graded": -6,  # ... graded: a straight flush 2
        "capsa_susun_both_paid": -5,
        "capsa_susun_one_royalty": -5,
        "capsa_susun_broken": -5,
        "capsa_susun_one_six": -7,  # 1-6's scoop (6) + 1
        "capsa_susun_scoop_bonus": -5,  # 3 rows + the scoop bonus + 1
        "closed_american": -31,  # 1-6's 6 + the American royal back (25); 22 and 77 pay none
        "closed_russian": -21,  # 6 + the Russian royal back (15)
        "thirteen_waters": -8,  # per row, 004's royalties as four_player_royalties: 3 + 5
    }
    assert set(expected) == set(PRESETS)
    for name, total in expected.items():
        rule_set = PRESETS[name].with_changes(min_seats=2)
        assert score_deal(rule_set, checks).totals == (total, -total)


def test_seat_count_outside_the_rule_set_is_refused() -> None:
    with pytest.raises(ValueError, match="2 to 4 seats, not 1"):
        score_deal(DEFAULT_RULE_SET, [check(WORKED_A)])
    with pytest.raises(ValueError, match="not 5"):
        score_deal(DEFAULT_RULE_SET, [check(WORKED_A)] * 5)


def test_standings_share_places_for_equal_totals() -> None:
    assert standings([3, 5, 3, -11]) == (
        Standing(seat=1, total=5, place=1),
        Standing(seat=0, total=3, place=2),
        Standing(seat=2, total=3, place=2),
        Standing(seat=3, total=-11, place=4),
    )
    assert [s.place for s in standings([2, 2, -4])] == [1, 1, 3]
    assert [s.place for s in standings([0, 0, 0, 0])] == [1, 1, 1, 1]
    assert standings([]) == ()


def test_series_totals_add_up_deals_from_zero() -> None:
    first = DealScore(pairs=(), totals=(1, -1, 0))
    second = DealScore(pairs=(), totals=(-3, 2, 1))
    assert series_totals([], 3) == (0, 0, 0)
    assert series_totals([first, second], 3) == (-2, 1, 1)
    with pytest.raises(ValueError, match="deal 1 has 3 seats"):
        series_totals([first], 2)


# --- properties over random deals ----------------------------------------------------------


@st.composite
def random_deals(draw: st.DrawFn, min_seats: int = 2, max_seats: int = 4) -> list[Arrangement]:
    """2-4 seats, each dealt 13 cards from one deck and split in a random order (fouls happen)."""
    seats = draw(st.integers(min_seats, max_seats))
    deck = draw(st.permutations(DECK))
    return [
        Arrangement.of(
            deck[13 * seat : 13 * seat + 3],
            deck[13 * seat + 3 : 13 * seat + 8],
            deck[13 * seat + 8 : 13 * seat + 13],
        )
        for seat in range(seats)
    ]


@st.composite
def preset_deals(draw: st.DrawFn) -> tuple[RuleSet, list[Arrangement]]:
    """A preset and a deal with a number of seats it plays."""
    rule_set = PRESETS[draw(st.sampled_from(sorted(PRESETS)))]
    return rule_set, draw(random_deals(rule_set.min_seats, rule_set.max_seats))


def judge(rule_set: RuleSet, arrangement: Arrangement) -> ArrangementCheck:
    return check_arrangement(arrangement, strict_order=rule_set.strict_row_order)


@given(preset_deals())
def test_every_deal_is_zero_sum(preset_deal: tuple[RuleSet, list[Arrangement]]) -> None:
    rule_set, deal = preset_deal
    score = score_deal(rule_set, [judge(rule_set, hand) for hand in deal])
    assert sum(score.totals) == 0
    assert len(score.pairs) == len(deal) * (len(deal) - 1) // 2


@given(preset_deals())
def test_swapping_two_players_negates_their_result(
    preset_deal: tuple[RuleSet, list[Arrangement]],
) -> None:
    rule_set, deal = preset_deal
    pair_rules = rule_set.with_changes(min_seats=2)  # one pair of the deal's seats
    first, second = judge(rule_set, deal[0]), judge(rule_set, deal[1])
    score = score_deal(pair_rules, [first, second])
    swapped = score_deal(pair_rules, [second, first])
    pair, swapped_pair = score.pairs[0], swapped.pairs[0]
    assert swapped_pair.rows == (-pair.rows[0], -pair.rows[1], -pair.rows[2])
    assert swapped_pair.delta == -pair.delta
    assert compare_rows(second, first) == swapped_pair.rows


@given(preset_deals())
def test_a_fouled_player_never_gains_against_a_legal_one(
    preset_deal: tuple[RuleSet, list[Arrangement]],
) -> None:
    rule_set, deal = preset_deal
    checks = [judge(rule_set, hand) for hand in deal]
    score = score_deal(rule_set, checks)
    for pair in score.pairs:
        foul_a, foul_b = checks[pair.seat_a].foul, checks[pair.seat_b].foul
        if foul_a and not foul_b:
            assert pair.delta < 0
            assert pair.rows == (-1, -1, -1)
        elif foul_b and not foul_a:
            assert pair.delta > 0
            assert pair.rows == (1, 1, 1)
        elif foul_a and foul_b:
            assert pair.delta == 0


@given(preset_deals(), st.randoms(use_true_random=False))
def test_totals_do_not_depend_on_how_the_seats_are_numbered(
    preset_deal: tuple[RuleSet, list[Arrangement]], shuffler: random.Random
) -> None:
    rule_set, deal = preset_deal
    order = list(range(len(deal)))
    shuffler.shuffle(order)  # seat i of the relabelled deal is seat order[i] of the original
    totals = score_deal(rule_set, [judge(rule_set, hand) for hand in deal]).totals
    relabelled = score_deal(rule_set, [judge(rule_set, deal[seat]) for seat in order]).totals
    assert list(relabelled) == [totals[seat] for seat in order]


@pytest.mark.parametrize("method", list(ScoringMethod))
@pytest.mark.parametrize("majority", list(MajorityRule))
def test_looked_up_row_counts_settle_as_counted_ones(
    method: ScoringMethod, majority: MajorityRule
) -> None:
    """``settle`` looks a tuple of row results up in a table of the 27 outcomes; a list of the
    same results is counted. Both give the same amount for every outcome, method and majority."""
    rule_set = DEFAULT_RULE_SET.with_changes(
        scoring=method,
        majority=majority,
        row_unit=3,
        scoop_bonus=2,
        one_six_two_of_three=1,
        one_six_scoop=6,
    )
    outcomes = [(f, m, b) for f in (1, 0, -1) for m in (1, 0, -1) for b in (1, 0, -1)]
    for rows in outcomes:
        counted = settle(rule_set, list(rows))  # type: ignore[arg-type]
        assert settle(rule_set, rows) == counted
        assert settle(rule_set, rows, 5) == settle(rule_set, list(rows), 5)  # type: ignore[arg-type]

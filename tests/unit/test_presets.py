"""Every preset against hand-computed deals, 003's 12-point example, broken hands, per-pair stakes,
and the properties every method keeps: zero-sum, and totals that follow the seats when they are
relabelled.

Sources behind the expected numbers (docs/rules.md §2.2, §2.3, §2.7, §2.10):

* 002 (Capsa Susun): «un jucător colectează o unitate de la fiecare adversar a cărui mână […] este
  bătută» (a unit a row); «o unitate suplimentară dacă câștigă în două sau trei dintre mâini»
  (2-4); «doar dacă câștigă toate cele trei mâini» (scoop bonus); «toate redevențele valorează
  aceeași sumă (de exemplu, 1 unitate pe redevență)» (flat royalties); «1 unitate pentru patru de
  un fel în spate și 2 unități pentru o spălare dreaptă în spate» (graded); «doar câștigătorul i se
  poate acorda o redevență» (won row); «doar o redevență pe mână» (one royalty); «au voie să se
  despartă de flash -uri drepte sau patru de un fel și mai primesc redevențe» (broken hands);
  «A și B ar putea juca cu 100 de dolari pe unitate […] celelalte perechi […] 10 USD» (stakes).
* 003: «Pentru o victorie în două din cele trei rânduri […] un punct. […] „Scoop” […] 6 puncte»
  (1-6); the American and Russian tables; «În total, jucătorul B trebuie să plătească jucătorului A
  12 puncte» (the example); a dead hand pays 6 and the opponent's royalties.
* 004: «Za wygraną przednią rękę z 3 takimi samymi gracz otrzymuje 3 jednostki […]» (royalties
  for won rows: front trips 3, middle full house 2, quads 4, straight flush 5).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sapsam.rules.arrangement import Arrangement, ArrangementCheck, check_arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.naturals import Natural, judge_seat, naturals_held, playable_naturals
from sapsam.rules.presets import PRESETS
from sapsam.rules.royalties import broken_royalties, table_fields
from sapsam.rules.rule_options import SurrenderRule
from sapsam.rules.ruleset import RuleSet, RuleSetError
from sapsam.rules.scoring import pair_units, score_deal, unit_totals
from sapsam.rules.surrender import score_with_surrender

# Each deal: seat A's and seat B's rows (front / middle / back).
DEALS: dict[str, tuple[str, str]] = {
    # 003's example: A scoops B with quads in the back (10) against B's back flush (4); the
    # fronts (55, 44) and middles (two pair) earn nothing in any table.
    "003-example": (
        "5c 5d 2h / Kc Kd 8h 8s 3d / 9c 9d 9h 9s 3c",
        "4c 4d 2s / Qc Qd 7h 7s 2d / 2c 6c 8c Tc Jc",
    ),
    # Royalties won and lost: A front trips Q (wins), middle full house, back quads; B front
    # pair of aces, straight flushes in the middle and the back (both win). Rows (+1, -1, -1).
    "won-and-lost": (
        "Qc Qd Qh / 5c 5d 5h 9c 9d / 8c 8d 8h 8s 2c",
        "Ac Ad 3c / 4s 5s 6s 7s 3s / 9s Ts Js Qs Ks",
    ),
    # A fouls (a middle full house over a back pair); B's legal hand wins all three rows and
    # collects its royalties: front trips 6, middle straight, back flush.
    "foul": (
        "2c 3d 4h / Kc Kd Kh 5c 5d / Ac Ad 7h 8s 9d",
        "6c 6d 6h / 7d 8d 9c Tc Jd / 2h 5h 9h Jh Qh",
    ),
    # Every row tied (the same ranks in other suits): no row, no majority, and held royalties
    # cancel (front 77, middle straight, back flush each side).
    "all-tied": (
        "7c 7d 3h / Tc Jd Qh Ks 9s / 2c 5c 8c Jc Kc",
        "7h 7s 3s / Td Js Qd Kd 9d / 2h 5h 8h Jh Kh",
    ),
    # One row won, two tied: A's front trips aces beat B's trips kings; the straights tie. No
    # majority under two_rows_won (2-4 pays the row only, 1-6 nothing).
    "one-won-two-tied": (
        "Ac Ad Ah / 2c 3d 4c 5c 6d / 5s 6s 7c 8d 9h",
        "Kc Kd Kh / 2d 3c 4h 5h 6c / 5d 6h 7d 8c 9c",
    ),
    # A is dealt four sevens and breaks them: trips in the front, one in a middle straight (002's
    # own example); a back flush. A scoops B, who holds nothing.
    "broken-quads": (
        "7c 7d 7h / 7s 8d 9c Th Jh / 2s 5s 8s Ts Ks",
        "2c 3d 4h / Ac Ad 4c 5d 6h / Kc Kd Qc Qd 3s",
    ),
}

# What A gains from B in units, per preset and deal (scored as one pair, so the four-seat presets
# too). Worked by hand from the tables of docs/rules.md; the comments give the parts.
EXPECTED: dict[str, dict[str, int]] = {
    # per row: scoop 3; won-and-lost -1; foul -3; tie 0; +1; scoop 3.
    "pagat": {
        "003-example": 3,
        "won-and-lost": -1,
        "foul": -3,
        "all-tied": 0,
        "one-won-two-tied": 1,
        "broken-quads": 3,
    },
    # 2-4: scoop 4; 1-2 loses the majority too: -2; one won two tied: the row only.
    "pagat_two_four": {
        "003-example": 4,
        "won-and-lost": -2,
        "foul": -4,
        "all-tied": 0,
        "one-won-two-tied": 1,
        "broken-quads": 4,
    },
    "pagat_one_six": {
        "003-example": 6,
        "won-and-lost": -1,
        "foul": -6,
        "all-tied": 0,
        "one-won-two-tied": 0,
        "broken-quads": 6,
    },
    "pagat_one_six_two": {
        "003-example": 6,
        "won-and-lost": -2,
        "foul": -6,
        "all-tied": 0,
        "one-won-two-tied": 0,
        "broken-quads": 6,
    },
    "pagat_scoop_bonus": {
        "003-example": 4,
        "won-and-lost": -1,
        "foul": -4,
        "all-tied": 0,
        "one-won-two-tied": 1,
        "broken-quads": 4,
    },
    "four_player": {
        "003-example": 3,
        "won-and-lost": -1,
        "foul": -3,
        "all-tied": 0,
        "one-won-two-tied": 1,
        "broken-quads": 3,
    },
    # 004's royalties for won rows: back quads 4; -1 + front trips 3 - straight flushes 5 + 5;
    # B's won front trips 3; A's won front trips 3 (aces, sevens).
    "four_player_royalties": {
        "003-example": 3 + 4,
        "won-and-lost": -1 + 3 - 10,
        "foul": -3 - 3,
        "all-tied": 0,
        "one-won-two-tied": 1 + 3,
        "broken-quads": 3 + 3,
    },
    "four_player_bonus": {  # no natural among these hands: as four_player_royalties
        "003-example": 7,
        "won-and-lost": -8,
        "foul": -6,
        "all-tied": 0,
        "one-won-two-tied": 4,
        "broken-quads": 6,
    },
    # 2-4 and 002's flat royalties (1 each) for won rows.
    "capsa_susun": {
        "003-example": 4 + 1,
        "won-and-lost": -2 + 1 - 2,
        "foul": -4 - 1,
        "all-tied": 0,
        "one-won-two-tied": 1 + 1,
        "broken-quads": 4 + 1,
    },
    # Graded: straight flushes 2.
    "capsa_susun_graded": {
        "003-example": 5,
        "won-and-lost": -2 + 1 - 4,
        "foul": -5,
        "all-tied": 0,
        "one-won-two-tied": 2,
        "broken-quads": 5,
    },
    # Both paid (held): won-and-lost A 3 held, B 2; one-won-two-tied both hold front trips.
    "capsa_susun_both_paid": {
        "003-example": 5,
        "won-and-lost": -2 + 3 - 2,
        "foul": -5,
        "all-tied": 0,
        "one-won-two-tied": 1 + 1 - 1,
        "broken-quads": 5,
    },
    # One royalty per hand: won-and-lost A's largest 1 against B's largest 1.
    "capsa_susun_one_royalty": {
        "003-example": 5,
        "won-and-lost": -2,
        "foul": -5,
        "all-tied": 0,
        "one-won-two-tied": 2,
        "broken-quads": 5,
    },
    # Broken hands claimed: A's four sevens split across rows earn the back quads' 1 besides the
    # front trips' 1; kept quads and kept straight flushes claim nothing more.
    "capsa_susun_broken": {
        "003-example": 5,
        "won-and-lost": -3,
        "foul": -5,
        "all-tied": 0,
        "one-won-two-tied": 2,
        "broken-quads": 4 + 1 + 1,
    },
    "capsa_susun_one_six": {
        "003-example": 6 + 1,
        "won-and-lost": -1 + 1 - 2,
        "foul": -6 - 1,
        "all-tied": 0,
        "one-won-two-tied": 0 + 1,
        "broken-quads": 6 + 1,
    },
    "capsa_susun_scoop_bonus": {
        "003-example": 3 + 1 + 1,
        "won-and-lost": -1 + 1 - 2,
        "foul": -3 - 1 - 1,
        "all-tied": 0,
        "one-won-two-tied": 1 + 1,
        "broken-quads": 3 + 1 + 1,
    },
    # 1-6 with the American royalties held: 6 + 10 - 4 = 12 (003); won-and-lost A QQQ 20 + full
    # house 12 + quads 10 = 42, B AA 9 + straight flushes 30 + 15 = 54; the foul: B's 666 14 +
    # straight 4 + flush 4; one-won-two-tied AAA 22 against KKK 21 (the straights 4 + 2 each);
    # broken-quads A 777 15 + straight 4 + flush 4.
    "closed_american": {
        "003-example": 6 + 10 - 4,
        "won-and-lost": -1 + 42 - 54,
        "foul": -6 - 22,
        "all-tied": 0,
        "one-won-two-tied": 0 + 22 - 21,
        "broken-quads": 6 + 23,
    },
    # Russian: back quads 8, straight flushes 20 (middle) and 10 (back).
    "closed_russian": {
        "003-example": 6 + 8 - 4,
        "won-and-lost": -1 + (20 + 12 + 8) - (9 + 20 + 10),
        "foul": -28,
        "all-tied": 0,
        "one-won-two-tied": 1,
        "broken-quads": 29,
    },
    "thirteen_waters": {  # per row, 004's royalties; no natural among these hands
        "003-example": 7,
        "won-and-lost": -8,
        "foul": -6,
        "all-tied": 0,
        "one-won-two-tied": 4,
        "broken-quads": 6,
    },
}


def _check(rows: str, rule_set: RuleSet) -> ArrangementCheck:
    front, middle, back = rows.split(" / ")
    return check_arrangement(
        Arrangement.parse(front, middle, back), None, rule_set.strict_row_order
    )


def pair_result(rule_set: RuleSet, deal: str) -> int:
    pair = rule_set.with_changes(min_seats=2)
    first, second = (_check(rows, pair) for rows in DEALS[deal])
    score = score_deal(pair, [first, second])
    reverse = score_deal(pair, [second, first])
    assert reverse.totals == (score.totals[1], score.totals[0])  # either seat order
    assert sum(score.totals) == 0
    return score.totals[0]


def test_every_preset_has_its_deals() -> None:
    assert set(EXPECTED) == set(PRESETS)
    for deals in EXPECTED.values():
        assert set(deals) == set(DEALS)


@pytest.mark.parametrize(("name", "deal"), [(name, deal) for name in EXPECTED for deal in DEALS])
def test_each_preset_scores_each_deal_as_worked_by_hand(name: str, deal: str) -> None:
    assert pair_result(PRESETS[name], deal) == EXPECTED[name][deal]


def test_the_003_example_pays_12_under_the_american_table() -> None:
    # «În total, jucătorul B trebuie să plătească jucătorului A 12 puncte.»
    rules = PRESETS["closed_american"]
    assert (rules.scoring, rules.royalties) == ("one_six", "held_row")
    assert pair_result(rules, "003-example") == 12
    # The same hands, royalties as 004 or 002 pay them, are no 12: the table is what makes it.
    assert pair_result(PRESETS["capsa_susun"], "003-example") == 5


def test_a_broken_straight_flush_is_claimed_at_the_backs_amount() -> None:
    # Dealt 5h 6h 7h 8h 9h; the nine goes to the back's quads, the rest to a middle straight.
    arrangement = Arrangement.parse("2c 2d 3c", "4c 5h 6h 7h 8h", "9h 9c 9d 9s Ac")
    check = check_arrangement(arrangement)
    assert not check.foul
    assert broken_royalties(PRESETS["capsa_susun_broken"], check) == (1,)
    graded = PRESETS["capsa_susun_broken"].with_changes(**table_fields("capsa_susun_graded"))
    assert broken_royalties(graded, check) == (2,)
    american = PRESETS["capsa_susun_broken"].with_changes(**table_fields("american"))
    assert broken_royalties(american, check) == (15,)
    # Not claimed, or kept whole in a row: nothing.
    assert broken_royalties(PRESETS["capsa_susun"], check) == ()
    kept = check_arrangement(Arrangement.parse("2c 2d 3c", "Kc Kd Ks Ac 4c", "5h 6h 7h 8h 9h"))
    assert broken_royalties(PRESETS["capsa_susun_broken"], kept) == ()
    assert (
        broken_royalties(
            PRESETS["capsa_susun_broken"],
            check_arrangement(Arrangement.parse("9h 9c 9d", "4c 5h 6h 7h 8h", "2c 2d 3c 9s Ac")),
        )
        == ()
    )  # a foul claims nothing


# docs/rules.md §2.10: seat 1 has the best front, seat 0 the best middle and back, seat 2 loses
# every row to seat 1.
STAKES_SEATS = (
    "2c 3d 5h / Ac Ad Ah 4c 4d / Kc Kd Ks Kh 2d",
    "Qc Qd 3c / Jc Jd Jh 6c 7d / Tc Td Th 8c 8d",
    "9c 9d 2h / 6d 6h 7c 7h 3h / 5c 5d 5s 2s 3s",
)


def test_per_pair_stakes_pay_each_pair_its_own_unit() -> None:
    rules = PRESETS["pagat"].with_changes(row_unit=10, pair_units={"0-1": 100})
    score = score_deal(rules, [_check(rows, rules) for rows in STAKES_SEATS])
    assert [(pair.seat_a, pair.seat_b, pair.delta) for pair in score.pairs] == [
        (0, 1, 100),
        (0, 2, 10),
        (1, 2, 30),
    ]
    assert [pair_units(rules, pair) for pair in score.pairs] == [1, 1, 3]
    assert score.totals == (110, -70, -40)
    assert unit_totals(rules, score) == (2, 2, -4)
    # Without stakes the units are the same and every amount is units x row_unit.
    flat = rules.with_changes(pair_units={})
    plain = score_deal(flat, [_check(rows, flat) for rows in STAKES_SEATS])
    assert plain.totals == (20, 20, -40)
    assert unit_totals(flat, plain) == unit_totals(rules, score)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"pair_units": {"1-0": 5}}, "not a pair of seats"),
        ({"pair_units": {"0-4": 5}}, "not a pair of seats"),
        ({"pair_units": {"0-1": 0}}, "pair_units"),
        ({"pair_units": {"0-1": 1_000_001}}, "pair_units"),
        ({"royalty_amounts": {"back_flush": 1001}}, "royalty_amounts"),
        ({"royalty_amounts": {"back_pair": 1}}, "unknown royalty key"),
        ({"royalty_amounts": {"back_four_of_a_kind": 1}}, "its own field"),
        ({"royalty_broken_hands": "sometimes"}, "royalty_broken_hands"),
    ],
)
def test_bad_stakes_and_amounts_are_refused_by_name(
    changes: dict[str, object], message: str
) -> None:
    with pytest.raises(RuleSetError, match=message):
        RuleSet(**changes).check_limits()  # type: ignore[arg-type]


def test_version_6_fields_round_trip_and_older_versions_refuse_them() -> None:
    rules = PRESETS["closed_american"].with_changes(
        pair_units={"0-1": 100}, royalty_broken_hands="claimed"
    )
    again = RuleSet.from_json(rules.to_json())
    assert again == rules and hash(again) == hash(rules)
    assert again.to_dict()["royalty_amounts"]["front_pair_Q"] == 7
    for key, value in (
        ("pair_units", {}),
        ("royalty_amounts", {}),
        ("royalty_broken_hands", "claimed"),
    ):
        with pytest.raises(RuleSetError, match="does not exist in rules version 5"):
            RuleSet.from_dict({"rules_version": 5, key: value})
    old = RuleSet.from_dict({"rules_version": 5})
    assert "pair_units" not in old.to_dict() and "royalty_amounts" not in old.to_dict()


# Property tests: four seats of random rows (legal or not), every preset.


def _seats(deck: list[int], seats: int) -> list[Arrangement]:
    return [
        Arrangement.of(
            deck[13 * s : 13 * s + 3], deck[13 * s + 3 : 13 * s + 8], deck[13 * s + 8 : 13 * s + 13]
        )
        for s in range(seats)
    ]


def _legal_or_not(deck: list[int], rng: random.Random, rule_set: RuleSet) -> list[ArrangementCheck]:
    checks = []
    for arrangement in _seats(deck, 4):
        front, middle, back = arrangement.rows
        if rng.random() < 0.7 and check_arrangement(arrangement).values is not None:
            # Put the stronger five-card row at the back, as a player would, most of the time.
            check = check_arrangement(Arrangement.of(front, back, middle))
            if not check.foul:
                arrangement = Arrangement.of(front, back, middle)
        checks.append(check_arrangement(arrangement, None, rule_set.strict_row_order))
    return checks


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.permutations(range(4)))
def test_every_preset_is_zero_sum_and_follows_the_seats(seed: int, order: list[int]) -> None:
    rng = random.Random(seed)
    deck = rng.sample(range(52), 52)
    for rule_set in PRESETS.values():
        rules = rule_set.with_changes(min_seats=2, max_seats=4)
        checks = _legal_or_not(deck, rng, rules)
        score = score_deal(rules, checks)
        assert sum(score.totals) == 0
        relabelled = score_deal(rules, [checks[seat] for seat in order])
        assert relabelled.totals == tuple(score.totals[seat] for seat in order), rule_set.name


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32), st.permutations(range(4)), st.integers(1, 50), st.integers(1, 50))
def test_stakes_follow_the_seats_they_name(
    seed: int, order: list[int], first: int, second: int
) -> None:
    rng = random.Random(seed)
    deck = rng.sample(range(52), 52)
    rules = PRESETS["capsa_susun"].with_changes(pair_units={"0-1": first, "2-3": second})
    checks = _legal_or_not(deck, rng, rules)
    score = score_deal(rules, checks)
    assert sum(score.totals) == 0
    # Seat order[i] now sits at i: its stakes move with it.
    moved = {
        f"{min(order.index(a), order.index(b))}-{max(order.index(a), order.index(b))}": unit
        for (a, b), unit in (((0, 1), first), ((2, 3), second))
    }
    relabelled = score_deal(rules.with_changes(pair_units=moved), [checks[s] for s in order])
    assert relabelled.totals == tuple(score.totals[seat] for seat in order)


# Hands holding naturals (docs/rules.md §2.9; tests/unit/test_naturals.py works each by hand).
NATURAL_HANDS = (
    "Kc Kd Qc Qd Jc Jd Tc Td 9c 9d 8c 8d 2s",  # six pairs
    "Ah Kh Qh Jh 9h 8h 7h 2h Ks 9s 7s 5s 3s",  # three flushes
    "Ac 2d 3h 4s 5c 6d 7h 8s 9c Td Jh Qs Kc",  # a dragon, three straights
    "Ah Kh Qh Jh Th 9s 8s 7s 6s 5s 4d 3d 2d",  # three straight flushes, a dragon
    "Jc Jd Jh Js Qc Qd Qh Kc Kd Kh Ac Ad Ah",  # twelve royals, four trips
    "2c 2d 2h 3c 3d 3h 4c 4d 5c 6c 7c 8c 8d",  # all low, five pairs and trips
)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.permutations(range(4)))
def test_every_preset_with_its_naturals_and_surrender_is_zero_sum_and_follows_the_seats(
    seed: int, order: list[int]
) -> None:
    """As above, with what each preset adds to the rows: each seat may hold one of the naturals
    the preset plays (a real one, from a hand that holds it) and, where the preset has
    surrender, may surrender. The totals sum to zero and follow the seats when relabelled."""
    rng = random.Random(seed)
    deck = rng.sample(range(52), 52)
    for rule_set in PRESETS.values():
        rules = rule_set.with_changes(min_seats=2, max_seats=4)
        checks = _legal_or_not(deck, rng, rules)
        held = [
            found for text in NATURAL_HANDS for found in naturals_held(rules, parse_cards(text))
        ]
        naturals = [rng.choice(held) if held and rng.random() < 0.3 else None for _ in range(4)]
        surrender = rules.surrender is not SurrenderRule.OFF
        surrendered = [surrender and rng.random() < 0.3 for _ in range(4)]
        score = score_with_surrender(rules, checks, surrendered, naturals)
        assert sum(score.totals) == 0
        relabelled = score_with_surrender(
            rules,
            [checks[seat] for seat in order],
            [surrendered[seat] for seat in order],
            [naturals[seat] for seat in order],
        )
        assert relabelled.totals == tuple(score.totals[seat] for seat in order), rule_set.name


# Naturals and surrender, per preset that plays them (worked by hand; docs/rules.md §2.8, §2.9).
# A and B are two seats: rows as in DEALS, or a natural declared from the 13 cards dealt.
SIX_PAIRS_HAND = "Kc Kd Qc Qd Jc Jd Tc Td 9c 9d 8c 8d 2s"
THREE_FLUSHES_HAND = "Ah Kh Qh Jh 9h 8h 7h 2h Ks 9s 7s 5s 3s"
SPECIAL_DEALS = ("natural-against-natural", "surrender", "natural-against-a-surrender")
# What A gains from B in units:
# * natural-against-natural: A declares six pairs, B three flushes. 002: the player «cu
#   câștigurile naturale mai puternice și ia bonusul», the stronger natural takes its bonus; 004
#   prices three flushes at «3 jednostki»: A -3.
# * surrender: A surrenders won-and-lost's A hand, B plays its hand: 002's announcement, at
#   sapsam's price (surrender_price 2, docs/rules.md §2.8): A -2, whatever the rows.
# * natural-against-a-surrender: A declares six pairs, B surrenders: 002 pays a natural
#   «înainte de a se preda oricine», before anyone surrenders: A +3, not the price.
SPECIAL_EXPECTED: dict[str, dict[str, int]] = {
    "four_player_bonus": {"natural-against-natural": -3},
    "thirteen_waters": {"natural-against-natural": -3},
    **{
        name: {"natural-against-natural": -3, "surrender": -2, "natural-against-a-surrender": 3}
        for name in PRESETS
        if name.startswith("capsa_susun")
    },
}


def special_result(rule_set: RuleSet, deal: str) -> int:
    pair = rule_set.with_changes(min_seats=2)
    six_pairs, flushes = parse_cards(SIX_PAIRS_HAND), parse_cards(THREE_FLUSHES_HAND)
    as_dealt = Arrangement.of(six_pairs[:3], six_pairs[3:8], six_pairs[8:])
    flushes_as_dealt = Arrangement.of(flushes[:3], flushes[3:8], flushes[8:])
    a_rows, b_rows = DEALS["won-and-lost"]
    seats = {
        "natural-against-natural": [
            (as_dealt, Natural.SIX_PAIRS, False),
            (flushes_as_dealt, Natural.THREE_FLUSHES, False),
        ],
        "surrender": [
            (Arrangement.parse(*a_rows.split(" / ")), Natural.NONE, True),
            (Arrangement.parse(*b_rows.split(" / ")), Natural.NONE, False),
        ],
        "natural-against-a-surrender": [
            (as_dealt, Natural.SIX_PAIRS, False),
            (Arrangement.parse(*b_rows.split(" / ")), Natural.NONE, True),
        ],
    }[deal]
    judged = [judge_seat(pair, rows, rows.cards, natural) for rows, natural, _ in seats]
    checks = [check for check, _ in judged]
    naturals = [hand for _, hand in judged]
    surrendered = [surrender for *_, surrender in seats]
    score = score_with_surrender(pair, checks, surrendered, naturals)
    reverse = score_with_surrender(pair, checks[::-1], surrendered[::-1], naturals[::-1])
    assert reverse.totals == score.totals[::-1] and sum(score.totals) == 0
    return score.totals[0]


def test_every_preset_with_naturals_or_surrender_has_its_special_deals() -> None:
    plays = {
        name
        for name, rules in PRESETS.items()
        if playable_naturals(rules) or rules.surrender is not SurrenderRule.OFF
    }
    assert set(SPECIAL_EXPECTED) == plays
    for name, deals in SPECIAL_EXPECTED.items():
        rules = PRESETS[name]
        wanted = {"natural-against-natural"} if playable_naturals(rules) else set()
        if rules.surrender is not SurrenderRule.OFF:
            wanted |= {"surrender", "natural-against-a-surrender"}
        assert set(deals) == wanted, name
        # With DEALS, at least five hand-computed deals a preset, and more where it plays more.
        assert len(DEALS) + len(deals) >= 7


@pytest.mark.parametrize(
    ("name", "deal"), [(name, deal) for name, deals in SPECIAL_EXPECTED.items() for deal in deals]
)
def test_each_preset_scores_its_naturals_and_surrender_as_worked_by_hand(
    name: str, deal: str
) -> None:
    assert special_result(PRESETS[name], deal) == SPECIAL_EXPECTED[name][deal]

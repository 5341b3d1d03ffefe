"""Naturals (docs/rules.md §2.9): detection exhaustive over what decides each natural, natural
against natural, against ordinary hands and fouls, zero-sum.

004: «Poniżej, te 13-kartowe układy wygrywają z każdym innym "zwykłym" układem […] Sześć par.
6 par + 1 karta nieparzysta. 3 jednostki. Trzy strita. 2 pięciokartowe strita i 1 trzykartowy
strit. 3 jednostki. Trzy kolory. Środkowa i tylna ręka to kolor. Przednia ręka to kolor trzech
kart. 3 jednostki. Kompletny strit. […] 13 jednostek.»
002: «Dacă doi jucători au șase perechi, jucătorul cu cele mai mari șase perechi câștigă,
altfel este o egalitate și nu se acordă niciun bonus. Cu Flushes și dreptul jucătorului cu cea
mai mare mână din spate, dacă asta se leagă, atunci mâna de mijloc este comparată. Dacă acest
lucru se leagă, atunci este comparată partea din față.»
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from sapsam.rules.arrangement import Arrangement, FoulReason, check_arrangement
from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.naturals import (
    EXTENDED_AMOUNTS,
    NATURAL_ORDER,
    NATURAL_SINCE_VERSION,
    Natural,
    NaturalHand,
    NaturalsTable,
    SixPairsCounting,
    compare_naturals,
    judge_seat,
    natural_hand,
    natural_settlement,
    naturals_held,
    playable_naturals,
)
from sapsam.rules.royalties import RoyaltyPayment
from sapsam.rules.ruleset import RuleSet, RuleSetError, ScoringMethod
from sapsam.rules.scoring import score_deal, worst_pair_units

CLASSIC = RuleSet(naturals=NaturalsTable.CLASSIC)
EXTENDED = RuleSet(naturals=NaturalsTable.EXTENDED)


def hand_of_ranks(ranks: list[int], offset: int = 0) -> list[Card]:
    """Cards of the given ranks (each at most four times), suits dealt round so that no suit
    holds five cards of one straight by accident only when the ranks allow it."""
    used: Counter[int] = Counter()
    cards = []
    for index, rank in enumerate(ranks):
        suit = (used[rank] + offset + index) % 4
        while Card.of(rank, suit) in cards:
            suit = (suit + 1) % 4
        used[rank] += 1
        cards.append(Card.of(rank, suit))
    return cards


def count_profiles(total: int, parts: int, most: int) -> list[tuple[int, ...]]:
    """Every non-increasing tuple of ``parts`` counts in 0..most summing to ``total``."""
    return [
        combo
        for combo in itertools.combinations_with_replacement(range(most, -1, -1), parts)
        if sum(combo) == total
    ]


# --- detection -------------------------------------------------------------------------------


@pytest.mark.parametrize("counting", list(SixPairsCounting))
def test_six_pairs_exhaustive_over_rank_count_profiles(counting: SixPairsCounting) -> None:
    """Six pairs depends only on how many cards of each rank are held: every profile of 13 cards
    over 13 ranks (at most four of a rank) is judged, and the key is the pairs high to low."""
    rules = CLASSIC.with_changes(natural_six_pairs_counting=counting)
    profiles = count_profiles(13, 13, 4)
    assert len(profiles) == 39  # partitions of 13 into at most 13 parts of at most 4
    held = 0
    for profile in profiles:
        ranks = [
            rank
            for rank, count in zip(range(12, -1, -1), profile, strict=True)
            for _ in range(count)
        ]
        pairs = sum(count // 2 for count in profile)
        expected = (
            pairs == 6
            if counting is SixPairsCounting.ANY_GROUP
            else sorted((c for c in profile if c), reverse=True) == [2, 2, 2, 2, 2, 2, 1]
        )
        found = natural_hand(rules, Natural.SIX_PAIRS, hand_of_ranks(ranks))
        assert (found is not None) == expected, profile
        if found is not None:
            held += 1
            by_rank = Counter(ranks)
            assert found.key == tuple(
                sorted((r for r, c in by_rank.items() for _ in range(c // 2)), reverse=True)
            )
    # any_group: exactly one odd count, 1 or 3, the rest pairs or quads: 2x6+1, 4+2x4+1,
    # 4+4+2+2+1, 4x3+1, 3+2x5, 4+3+2x3, 4+4+3+2; distinct_ranks only 2x6+1.
    assert held == (1 if counting is SixPairsCounting.DISTINCT_RANKS else 7)


def test_six_pairs_any_group_counts_quads_as_two_pairs() -> None:
    quads = parse_cards("Ac Ad Ah As Kc Kd Qc Qd Jc Jd Tc Td 2c")
    assert natural_hand(CLASSIC, Natural.SIX_PAIRS, quads) == NaturalHand(
        Natural.SIX_PAIRS, (12, 12, 11, 10, 9, 8)
    )
    strict = CLASSIC.with_changes(natural_six_pairs_counting=SixPairsCounting.DISTINCT_RANKS)
    assert natural_hand(strict, Natural.SIX_PAIRS, quads) is None


def three_flushes_possible(suit_counts: tuple[int, ...]) -> bool:
    """Independently: the suits' counts must split into rows of 3, 5 and 5 of one suit each."""
    counts = sorted((count for count in suit_counts if count), reverse=True)
    return counts in ([13], [10, 3], [8, 5], [5, 5, 3])


def test_three_flushes_exhaustive_over_suit_counts() -> None:
    """Three flushes depends only on how many cards of each suit: every way to hold 13 cards
    in four suits (at most 13 of one) is judged."""
    checked = 0
    for counts in itertools.product(range(14), repeat=4):
        if sum(counts) != 13:
            continue
        cards = [
            Card.of(12 - index, suit) for suit, count in enumerate(counts) for index in range(count)
        ]
        found = natural_hand(CLASSIC, Natural.THREE_FLUSHES, cards)
        assert (found is not None) == three_flushes_possible(counts), counts
        checked += 1
    assert checked == 560


def test_three_flushes_key_is_the_best_back_then_middle_then_front() -> None:
    # Eight hearts and five spades: the spades are a row (back or middle), the hearts fill the
    # other row and the front. Hearts A K Q J 9 8 7 2 make the back A K Q J 9, spades K 9 7 5 3
    # the middle, hearts 8 7 2 the front: that back beats spades K... as back.
    cards = parse_cards("Ah Kh Qh Jh 9h 8h 7h 2h Ks 9s 7s 5s 3s")
    found = natural_hand(CLASSIC, Natural.THREE_FLUSHES, cards)
    assert found == NaturalHand(Natural.THREE_FLUSHES, (12, 11, 10, 9, 7, 11, 7, 5, 3, 1, 6, 5, 0))


def three_straight_multisets() -> set[tuple[int, ...]]:
    """Independently: the rank multiset of every choice of a 5-card straight, another one and a
    3-card straight (ace high or low, no wrap-around) holding at most four cards of a rank."""
    fives = [tuple(range(top - 4, top + 1)) for top in range(4, 13)] + [(12, 0, 1, 2, 3)]
    threes = [tuple(range(top - 2, top + 1)) for top in range(2, 13)] + [(12, 0, 1)]
    result = set()
    for back, middle, front in itertools.product(fives, fives, threes):
        counts = Counter(back + middle + front)
        if max(counts.values()) <= 4:
            result.add(tuple(sorted(counts.elements())))
    return result


def test_three_straights_exhaustive_over_rank_multisets() -> None:
    """Three straights depends only on the ranks held: every rank multiset that makes three
    straights is found, and no other multiset of those ranks' neighbourhood is."""
    positives = three_straight_multisets()
    assert len(positives) > 300
    for ranks in positives:
        assert natural_hand(CLASSIC, Natural.THREE_STRAIGHTS, hand_of_ranks(list(ranks))), ranks
    # Every multiset one card away from a positive (one card's rank changed) is judged against
    # the positives' set: a thorough negative sample near the boundary.
    negatives = 0
    for ranks in sorted(positives)[::7]:
        for index, new_rank in itertools.product(range(13), range(13)):
            changed = tuple(sorted((*ranks[:index], new_rank, *ranks[index + 1 :])))
            if max(Counter(changed).values()) > 4:
                continue
            found = natural_hand(CLASSIC, Natural.THREE_STRAIGHTS, hand_of_ranks(list(changed)))
            assert (found is not None) == (changed in positives), changed
            negatives += found is None
    assert negatives > 1000


def test_three_straights_key_and_the_wheel() -> None:
    # Ranks A 2 .. K: the back takes T-J-Q-K-A (its top the ace), the middle 5-9, the front
    # 2-3-4, the largest key; A-2-3 / 4-8 / 9-K would give (11, 6, 1).
    cards = parse_cards("Ac 2d 3h 4s 5c 6d 7h 8s 9c Td Jh Qs Kc")
    assert natural_hand(CLASSIC, Natural.THREE_STRAIGHTS, cards) == NaturalHand(
        Natural.THREE_STRAIGHTS, (12, 7, 2)
    )
    # The same cards are also a dragon; the dragon is the stronger natural and is offered first.
    held = naturals_held(CLASSIC, cards)
    assert [hand.natural for hand in held] == [Natural.DRAGON, Natural.THREE_STRAIGHTS]


def test_dragon_exhaustive_over_repeats() -> None:
    dragon = [Card.of(rank, rank % 4) for rank in range(13)]
    assert natural_hand(CLASSIC, Natural.DRAGON, dragon) == NaturalHand(Natural.DRAGON, ())
    # Any one rank replaced by another repeats a rank: never a dragon.
    replaced = 0
    for index, rank in itertools.product(range(13), range(13)):
        if rank == index:
            continue
        others = [*dragon[:index], *dragon[index + 1 :]]
        card = next(Card.of(rank, suit) for suit in range(4) if Card.of(rank, suit) not in others)
        assert natural_hand(CLASSIC, Natural.DRAGON, [*others, card]) is None
        replaced += 1
    assert replaced == 13 * 12


def test_a_wrong_hand_size_or_a_natural_not_played_is_never_held() -> None:
    dragon = [Card.of(rank, rank % 4) for rank in range(13)]
    assert natural_hand(RuleSet(), Natural.DRAGON, dragon) is None  # naturals none
    assert natural_hand(CLASSIC, Natural.NONE, dragon) is None
    assert natural_hand(CLASSIC, Natural.DRAGON, dragon[:12]) is None
    assert (
        natural_hand(
            CLASSIC, Natural.ALL_LOW, parse_cards("2c 2d 2h 3c 3d 3h 4c 4d 5c 6c 7c 8c 8d")
        )
        is None
    )  # extended only
    assert playable_naturals(RuleSet()) == ()
    assert len(playable_naturals(CLASSIC)) == 4
    assert playable_naturals(EXTENDED) == NATURAL_ORDER  # the latest rules version


@pytest.mark.parametrize(
    ("natural", "text"),
    [
        (Natural.ALL_LOW, "2c 2d 2h 3c 3d 3h 4c 4d 5c 6c 7c 8c 8d"),
        (Natural.ALL_HIGH, "8c 8d 9h 9c Td Jh Qc Qd Kc Ac Ad Ah As"),
        (Natural.TWELVE_ROYALS, "Jc Jd Jh Js Qc Qd Qh Kc Kd Kh Ac Ad Ah"),
        (Natural.THREE_QUADS, "Jc Jd Jh Js 4c 4d 4h 4s 2c 2d 2h 2s 9d"),
        (Natural.FOUR_TRIPS, "Jc Jd Jh 4c 4d 4h 2c 2d 2h 9d 9s 9h Ac"),
        (Natural.FIVE_PAIRS_AND_TRIPS, "Jc Jd 4c 4d 2c 2d 9d 9s Ah Ac 7c 7d 7h"),
        (Natural.ONE_COLOUR, "2d 3d 4h 5h 6h 7d 8d 9h Th Jd Qd Kh Ad"),
        (Natural.SUPREME_DRAGON, "2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks As"),
    ],
)
def test_extended_specials(natural: Natural, text: str) -> None:
    cards = parse_cards(text)
    assert natural_hand(EXTENDED, natural, cards) is not None
    assert natural_hand(CLASSIC, natural, cards) is None
    assert EXTENDED_AMOUNTS[natural] > 0


# --- natural against natural, against ordinary hands -----------------------------------------

SIX_PAIRS_KINGS = parse_cards("Kc Kd Qc Qd Jc Jd Tc Td 9c 9d 8c 8d 2s")
SIX_PAIRS_ACES_LOW = parse_cards("Ac Ad 7c 7d 6c 6d 5c 5d 4c 4d 3c 3d 2h")
SIX_PAIRS_KINGS_OTHER_ODD = parse_cards("Kh Ks Qh Qs Jh Js Th Ts 9h 9s 8h 8s Ah")
THREE_FLUSHES = parse_cards("Ah Kh Qh Jh 9h 8h 7h 2h Ks 9s 7s 5s 3s")
DRAGON = parse_cards("Ac 2d 3h 4s 5c 6d 7h 8s 9c Td Jh Qs Kc")


def held(cards: list[Card] | tuple[Card, ...], natural: Natural) -> NaturalHand:
    found = natural_hand(CLASSIC, natural, cards)
    assert found is not None
    return found


def test_higher_six_pairs_win_equal_ones_tie() -> None:
    kings = held(SIX_PAIRS_KINGS, Natural.SIX_PAIRS)
    aces = held(SIX_PAIRS_ACES_LOW, Natural.SIX_PAIRS)
    other = held(SIX_PAIRS_KINGS_OTHER_ODD, Natural.SIX_PAIRS)
    # 002: the higher six pairs win: aces first, whatever the lower pairs.
    assert compare_naturals(aces, kings) == 1
    assert natural_settlement(CLASSIC, kings, aces).units == -3  # type: ignore[union-attr]
    # Equal pairs: a tie and no bonus, whatever the odd card (an ace against a deuce).
    settled = natural_settlement(CLASSIC, kings, other)
    assert settled is not None and (settled.outcome, settled.units) == (0, 0)


def test_the_stronger_kind_collects_its_own_amount() -> None:
    pairs = held(SIX_PAIRS_ACES_LOW, Natural.SIX_PAIRS)
    flushes = held(THREE_FLUSHES, Natural.THREE_FLUSHES)
    dragon = held(DRAGON, Natural.DRAGON)
    assert natural_settlement(CLASSIC, flushes, pairs).units == 3  # type: ignore[union-attr]
    assert natural_settlement(CLASSIC, pairs, dragon).units == -13  # type: ignore[union-attr]
    assert natural_settlement(CLASSIC, None, None) is None
    assert natural_settlement(CLASSIC, dragon, None).units == 13  # type: ignore[union-attr]


def test_natural_comparison_is_antisymmetric_and_total() -> None:
    rng = random.Random(17)
    hands = [
        held(SIX_PAIRS_KINGS, Natural.SIX_PAIRS),
        held(SIX_PAIRS_ACES_LOW, Natural.SIX_PAIRS),
        held(SIX_PAIRS_KINGS_OTHER_ODD, Natural.SIX_PAIRS),
        held(THREE_FLUSHES, Natural.THREE_FLUSHES),
        held(DRAGON, Natural.DRAGON),
        held(DRAGON, Natural.THREE_STRAIGHTS),
    ]
    for first, second in itertools.product([*hands, None], repeat=2):
        forward = natural_settlement(CLASSIC, first, second)
        backward = natural_settlement(CLASSIC, second, first)
        if forward is None:
            assert backward is None and first is None and second is None
            continue
        assert backward is not None
        assert (forward.outcome, forward.units) == (-backward.outcome, -backward.units)
    rng.shuffle(hands)
    ordered = sorted(hands, key=lambda hand: (NATURAL_ORDER.index(hand.natural), hand.key))
    for weaker, stronger in itertools.pairwise(ordered):
        assert compare_naturals(stronger, weaker) >= 0


# Ordinary arrangements for the deals below.
ORDINARY_SCOOPER = Arrangement.parse("Ac Ad Ah", "Kc Kd Kh 2c 2d", "Ts Js Qs Ks As")
ORDINARY_WEAK = Arrangement.parse("2d 3h 5s", "4c 6d 8h 9c Jd", "3c 5d 7h 9d Qh")


def test_deal_a_natural_beats_a_royal_scoop_and_a_foul() -> None:
    """Hand-computed, 004: six pairs (3 units) «wygrywają z każdym innym "zwykłym" układem»:
    seat 0 holds six pairs, seat 1 an arrangement that would scoop it, seat 2 a foul. Seat 0
    collects 3 from each: +6; seat 1 against seat 2 is an ordinary pair (seat 1 scoops the
    foul, per_row 3)."""
    pairs = Arrangement.of(SIX_PAIRS_KINGS[:3], SIX_PAIRS_KINGS[3:8], SIX_PAIRS_KINGS[8:])
    foul = Arrangement.parse("Ac Ad 2h", "3c 4d 6h 8c Td", "2c 5d 7h 9d Jh")
    checks = [
        check_arrangement(pairs),
        check_arrangement(ORDINARY_SCOOPER),
        check_arrangement(foul),
    ]
    assert checks[2].foul
    naturals = [held(SIX_PAIRS_KINGS, Natural.SIX_PAIRS), None, None]
    score = score_deal(CLASSIC, checks, naturals)
    assert [(p.seat_a, p.seat_b, p.rows, p.delta) for p in score.pairs] == [
        (0, 1, (1, 1, 1), 3),
        (0, 2, (1, 1, 1), 3),
        (1, 2, (1, 1, 1), 3),
    ]
    assert score.totals == (6, 0, -6)
    assert sum(score.totals) == 0


def test_deal_two_naturals_and_the_row_unit() -> None:
    """Hand-computed, 002: the stronger natural «câștigă și ia bonusul». Seat 0 three flushes
    (3), seat 1 a dragon (13), at 10 a unit: seat 1 collects 130 from seat 0 and 130 from seat
    2 (ordinary); seat 0 collects 30 from seat 2."""
    rules = CLASSIC.with_changes(row_unit=10)
    checks = [check_arrangement(ORDINARY_WEAK)] * 3
    naturals = [held(THREE_FLUSHES, Natural.THREE_FLUSHES), held(DRAGON, Natural.DRAGON), None]
    score = score_deal(rules, checks, naturals)
    assert [p.delta for p in score.pairs] == [-130, 30, 130]
    assert score.totals == (-100, 260, -160)


def test_without_naturals_the_score_is_unchanged() -> None:
    checks = [check_arrangement(ORDINARY_SCOOPER), check_arrangement(ORDINARY_WEAK)]
    assert score_deal(CLASSIC, checks, [None, None]) == score_deal(CLASSIC, checks)


def test_amounts_are_bounded_rule_set_fields_of_version_5() -> None:
    assert CLASSIC.rules_version >= 5  # naturals exist from version 5
    assert CLASSIC.natural_dragon == 13
    with pytest.raises(RuleSetError, match="natural_dragon"):
        RuleSet(naturals=NaturalsTable.CLASSIC, natural_dragon=1001)
    with pytest.raises(RuleSetError, match="does not exist in rules version 4"):
        RuleSet.from_dict({"rules_version": 4, "naturals": "classic"})
    old = RuleSet.from_dict({"rules_version": 4})
    assert old.naturals is NaturalsTable.NONE and "naturals" not in old.to_dict()
    assert worst_pair_units(RuleSet(naturals=NaturalsTable.EXTENDED)) == 52  # supreme dragon
    assert worst_pair_units(CLASSIC.with_changes(natural_dragon=2)) == 3  # the scoop's 3 rows


@pytest.mark.parametrize("seed", range(5))
def test_totals_are_zero_sum_and_follow_the_seats_when_relabelled(seed: int) -> None:
    """Random deals with random naturals (real ones, from hands that hold them) under every
    scoring method with royalties: the totals sum to zero, and permuting the seats permutes the
    totals."""
    rng = random.Random(seed)
    hands = [
        (SIX_PAIRS_KINGS, Natural.SIX_PAIRS),
        (SIX_PAIRS_ACES_LOW, Natural.SIX_PAIRS),
        (THREE_FLUSHES, Natural.THREE_FLUSHES),
        (DRAGON, Natural.DRAGON),
        (DRAGON, Natural.THREE_STRAIGHTS),
    ]
    rows = [
        ORDINARY_SCOOPER,
        ORDINARY_WEAK,
        Arrangement.parse("Ac Ad 2h", "3c 4d 6h 8c Td", "2c 5d 7h 9d Jh"),
    ]
    for method in ScoringMethod:
        rules = EXTENDED.with_changes(scoring=method, royalties=RoyaltyPayment.WON_ROW)
        for _ in range(20):
            seats = rng.randint(2, 4)
            checks = [check_arrangement(rng.choice(rows)) for _ in range(seats)]
            naturals = [
                held(*rng.choice(hands)) if rng.random() < 0.4 else None for _ in range(seats)
            ]
            score = score_deal(rules, checks, naturals)
            assert sum(score.totals) == 0
            order = list(range(seats))
            rng.shuffle(order)
            permuted = score_deal(rules, [checks[i] for i in order], [naturals[i] for i in order])
            assert permuted.totals == tuple(score.totals[i] for i in order)


# --- three straight flushes (三同花顺; rules version 7) ----------------------------------------

EXTENDED_V6 = RuleSet(rules_version=6, naturals=NaturalsTable.EXTENDED)
# Back A K Q J T of hearts, middle 9 8 7 6 5 of spades, front 4 3 2 of diamonds: every rank once,
# so a dragon, three straights and three flushes too (docs/rules.md §2.9.2, worked).
STRAIGHT_FLUSHES = parse_cards("Ah Kh Qh Jh Th 9s 8s 7s 6s 5s 4d 3d 2d")


def _every_straight_flush(size: int) -> list[tuple[int, frozenset[int]]]:
    """(top rank, cards) of every straight flush of ``size`` cards, written out by hand: ranks
    top-size+1..top, and the ace below the 2 (A 2 3, A 2 3 4 5)."""
    flushes = []
    for suit in range(4):
        for top in range(size - 1, 13):
            flushes.append(
                (top, frozenset(int(Card.of(r, suit)) for r in range(top - size + 1, top + 1)))
            )
        low = [12, *range(size - 1)]
        flushes.append((size - 2, frozenset(int(Card.of(r, suit)) for r in low)))
    return flushes


def test_three_straight_flushes_exhaustive() -> None:
    """Every hand of two 5-card straight flushes and a 3-card one (22,060 of them) is found, with
    the largest (back, middle, front) key of its splits; three flushes or three straights that
    are not both at once, row by row, are not."""
    best: dict[frozenset[int], tuple[int, int, int]] = {}
    fives, threes = _every_straight_flush(5), _every_straight_flush(3)
    for (top_a, a), (top_b, b) in itertools.product(fives, repeat=2):
        if top_b > top_a or a & b:
            continue
        for top_c, c in threes:
            if c & (a | b):
                continue
            key = (top_a, top_b, top_c)
            hand = a | b | c
            best[hand] = max(best.get(hand, key), key)
    assert len(best) == 22_060
    for hand, key in best.items():
        found = natural_hand(
            RuleSet(naturals=NaturalsTable.EXTENDED),
            Natural.THREE_STRAIGHT_FLUSHES,
            [Card(c) for c in hand],
        )
        assert found is not None and found.key == key, (sorted(hand), key)
    # One card changed: three flushes or three straights at most, never this natural.
    rng = random.Random(7)
    for hand in rng.sample(sorted(best, key=sorted), 300):
        out = rng.choice(sorted(hand))
        for card in range(52):
            if card in hand:
                continue
            changed = (hand - {out}) | {card}
            if changed not in best:
                cards = [Card(c) for c in changed]
                assert natural_hand(EXTENDED, Natural.THREE_STRAIGHT_FLUSHES, cards) is None


def test_three_straight_flushes_worked_and_its_rules_version() -> None:
    """docs/rules.md §2.9.2's worked hand: key back A, middle 9, front 4; 18 units, stronger than
    the dragon it also holds; under rules version 6's ``extended`` it is no natural, and a seat
    declaring it is a foul (FALSE_NATURAL), as version 6 scored."""
    found = natural_hand(EXTENDED, Natural.THREE_STRAIGHT_FLUSHES, STRAIGHT_FLUSHES)
    assert found == NaturalHand(Natural.THREE_STRAIGHT_FLUSHES, (12, 7, 2))
    assert EXTENDED_AMOUNTS[Natural.THREE_STRAIGHT_FLUSHES] == 18
    assert [hand.natural for hand in naturals_held(EXTENDED, STRAIGHT_FLUSHES)] == [
        Natural.THREE_STRAIGHT_FLUSHES,
        Natural.DRAGON,
        Natural.THREE_FLUSHES,
        Natural.THREE_STRAIGHTS,
    ]
    dragon = natural_hand(EXTENDED, Natural.DRAGON, DRAGON)
    quads = natural_hand(
        EXTENDED, Natural.THREE_QUADS, parse_cards("Jc Jd Jh Js 4c 4d 4h 4s 2c 2d 2h 2s 9d")
    )
    settled = natural_settlement(EXTENDED, found, dragon)
    assert settled is not None and (settled.outcome, settled.units) == (1, 18)
    settled = natural_settlement(EXTENDED, found, quads)
    assert settled is not None and (settled.outcome, settled.units) == (-1, -20)
    # Two of the kind compare as three straights: the higher back wins (A-high against K-high).
    lower = natural_hand(
        EXTENDED,
        Natural.THREE_STRAIGHT_FLUSHES,
        parse_cards("Kc Qc Jc Tc 9c 8s 7s 6s 5s 4s 4d 3d 2d"),
    )
    assert lower is not None and lower.key == (11, 6, 2)
    settled = natural_settlement(EXTENDED, lower, found)
    assert settled is not None and (settled.outcome, settled.units) == (-1, -18)
    # Rules version 6: the extended table without it; the declaration is false.
    assert Natural.THREE_STRAIGHT_FLUSHES not in playable_naturals(EXTENDED_V6)
    assert Natural.THREE_STRAIGHT_FLUSHES in playable_naturals(EXTENDED)
    for version in (5, 6, 7):
        rules = RuleSet(rules_version=version, naturals=NaturalsTable.EXTENDED)
        since = NATURAL_SINCE_VERSION
        assert playable_naturals(rules) == tuple(
            natural for natural in NATURAL_ORDER if since.get(natural, 5) <= version
        )
    assert natural_hand(EXTENDED_V6, Natural.THREE_STRAIGHT_FLUSHES, STRAIGHT_FLUSHES) is None
    assert natural_hand(CLASSIC, Natural.THREE_STRAIGHT_FLUSHES, STRAIGHT_FLUSHES) is None
    rows = Arrangement.of(STRAIGHT_FLUSHES[10:], STRAIGHT_FLUSHES[5:10], STRAIGHT_FLUSHES[:5])
    check, hand = judge_seat(EXTENDED_V6, rows, STRAIGHT_FLUSHES, Natural.THREE_STRAIGHT_FLUSHES)
    assert check.foul and check.reason is FoulReason.FALSE_NATURAL and hand is None
    check, hand = judge_seat(EXTENDED, rows, STRAIGHT_FLUSHES, Natural.THREE_STRAIGHT_FLUSHES)
    assert not check.foul and hand == found
    # Version 6 played the dragon it holds (13) as the strongest.
    assert naturals_held(EXTENDED_V6, STRAIGHT_FLUSHES)[0].natural is Natural.DRAGON


def test_deal_three_straight_flushes_under_thirteen_waters() -> None:
    """Hand-computed, thirteen_waters (per_row, royalties won_row, naturals extended, version
    7): seat 0 declares three straight flushes (18), seat 1 holds a dragon (13), seat 2 plays
    ORDINARY_WEAK's rows. Seat 0 collects 18 from each (+36); seat 1 collects 13 from seat 2:
    totals +36, -5, -31. Under the same rule set of rules version 6 seat 0's declaration is a
    foul: seat 1's dragon collects 13 from each, and seat 2's legal rows scoop seat 0's foul
    (per_row 3, plus royalties: ORDINARY_WEAK earns none): totals -16, +26, -10."""
    from sapsam.rules.presets import PRESETS

    today = PRESETS["thirteen_waters"]
    assert today.rules_version == 7
    rows = Arrangement.of(STRAIGHT_FLUSHES[10:], STRAIGHT_FLUSHES[5:10], STRAIGHT_FLUSHES[:5])
    dragon_rows = Arrangement.of(DRAGON[:3], DRAGON[3:8], DRAGON[8:])
    seats = [
        (rows, STRAIGHT_FLUSHES, Natural.THREE_STRAIGHT_FLUSHES),
        (dragon_rows, DRAGON, Natural.DRAGON),
        (ORDINARY_WEAK, ORDINARY_WEAK.cards, Natural.NONE),
    ]
    judged = [judge_seat(today, *seat) for seat in seats]
    score = score_deal(today, [check for check, _ in judged], [hand for _, hand in judged])
    assert [p.delta for p in score.pairs] == [18, 18, 13]
    assert score.totals == (36, -5, -31)
    recorded_v6 = RuleSet.from_dict({**today.to_dict(), "rules_version": 6})
    judged = [judge_seat(recorded_v6, *seat) for seat in seats]
    assert judged[0][0].reason is FoulReason.FALSE_NATURAL
    score = score_deal(recorded_v6, [check for check, _ in judged], [hand for _, hand in judged])
    assert [p.delta for p in score.pairs] == [-13, -3, 13]
    assert score.totals == (-16, 26, -10)

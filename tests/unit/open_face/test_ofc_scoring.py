"""Open-face scoring: 1-6, royalties won or lost and netted, dead hands; 003's example."""

from __future__ import annotations

import random
from itertools import permutations

from hypothesis import given, settings
from hypothesis import strategies as st

from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import Board
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.scoring import judge_hand, score_open_face_deal

CLASSIC = open_face_preset("ofc_classic")
RUSSIAN = open_face_preset("ofc_russian")

# 003's example: A wins all three rows with back quads (10), B has a back flush (4); no other
# row earns a royalty (pairs below sixes in front, middle pairs).
A = Board.parse("5c 5d 2h", "Ac Ad 7h 8s 9c", "Jc Jd Jh Js 3c")
B = Board.parse("4s 4h 3h", "Kc Kd 7c 8d 2d", "2s 6s 9s Ts Qs")


def test_003s_example_scoop_and_quads_against_a_flush_pays_12() -> None:
    score = score_open_face_deal(CLASSIC, [A, B])
    (pair,) = score.pairs
    assert pair.rows == (1, 1, 1)
    assert (pair.points, pair.royalties, pair.delta) == (6, 10 - 4, 12)
    assert score.totals == (12, -12)
    # Under the Russian table back quads earn 8: 6 + 8 - 4.
    assert score_open_face_deal(RUSSIAN, [A, B]).totals == (10, -10)


def test_royalties_count_for_a_lost_row() -> None:
    # B's back flush loses to A's quads, yet earns B its 4: A's delta is 10 - 4, not 10.
    hands = [judge_hand(CLASSIC, A), judge_hand(CLASSIC, B)]
    assert [hand.royalties for hand in hands] == [(0, 0, 10), (0, 0, 4)]


def test_middle_trips_earn_what_the_rule_set_says() -> None:
    board = Board.parse("2c 3d 4h", "9c 9d 9h Ks 2s", "Ac Kc Qc Jc Tc")  # royal flush behind
    assert judge_hand(CLASSIC, board).royalties == (0, 2, 25)
    assert judge_hand(open_face_preset("ofc_mercier_deeb"), board).royalties == (0, 0, 25)
    assert judge_hand(RUSSIAN, board).royalties == (0, 2, 15)


def test_two_of_three_pays_one_or_two() -> None:
    # B now wins the front with a pair of sevens (2 in royalties); A the middle and the back.
    b = Board.parse("7s 7d 3h", "Kc Kd 7c 8d 2d", "2s 6s 9s Ts Qs")
    (pair,) = score_open_face_deal(CLASSIC, [A, b]).pairs
    assert pair.rows == (-1, 1, 1)
    assert (pair.points, pair.royalties) == (1, 10 - 2 - 4)
    two = OpenFaceRules(two_of_three_points=2)
    assert score_open_face_deal(two, [A, b]).totals == (2 + 4, -6)


def test_a_dead_hand_pays_six_and_the_opponents_royalties_and_keeps_none() -> None:
    # B's front pair of aces (9) over its middle kings: dead, its flush and aces earn nothing.
    dead_b = Board.parse("As Ah 3h", "Kc Kd 7c 8d 2d", "2s 6s 9s Ts Qs")
    score = score_open_face_deal(CLASSIC, [A, dead_b])
    assert score.hands[1].fouled and score.hands[1].royalties == (0, 0, 0)
    assert score.pairs[0].rows == (1, 1, 1)
    assert score.totals == (6 + 10, -16)


def test_a_hand_declared_dead_scores_as_a_foul() -> None:
    score = score_open_face_deal(CLASSIC, [A, B], declared_dead=[0])
    assert score.hands[0].dead and not score.hands[0].fouled
    assert score.totals == (-(6 + 4), 6 + 4)


def test_all_dead_nobody_pays() -> None:
    score = score_open_face_deal(CLASSIC, [A, B], declared_dead=[0, 1])
    assert score.totals == (0, 0)
    assert score.pairs[0].rows == (0, 0, 0)


def test_three_seats_a_dead_hand_pays_each_opponent() -> None:
    c = Board.parse("6c 6d 4c", "Qc Qd Qh 5h 5s", "8h 8c 8d 8s 2d")  # 1 + 12 + 10
    dead = Board.parse("Ac Ah 2c", "3d 4d 6h 7d 9d", "Tc Th Td Ts 9h")  # aces over nothing
    e = Board.parse("2h 3s 4h", "5d 6s 7s 9s Jc", "Ks Kh 4s 7c Qs")  # no royalty
    score = score_open_face_deal(CLASSIC, [c, dead, e])
    assert [hand.dead for hand in score.hands] == [False, True, False]
    assert [pair.delta for pair in score.pairs] == [6 + 23, 6 + 23, -6]  # c-d, c-e, d-e
    assert score.totals == (58, -35, -23)


def random_deal(rng: random.Random, seats: int) -> list[Board]:
    cards = [Card(card) for card in rng.sample(range(52), 13 * seats)]
    return [
        Board(hand[:3], hand[3:8], hand[8:])
        for hand in (tuple(cards[13 * seat : 13 * seat + 13]) for seat in range(seats))
    ]


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.integers(2, 4),
    table=st.sampled_from(["ofc_classic", "ofc_russian", "ofc_mercier_deeb"]),
    declared=st.sets(st.integers(0, 3)),
    order=st.randoms(use_true_random=False),
)
def test_totals_are_zero_sum_and_follow_the_seats_when_relabelled(
    seed: int, seats: int, table: str, declared: set[int], order: random.Random
) -> None:
    rules = open_face_preset(table)
    boards = random_deal(random.Random(seed), seats)
    dead = {seat for seat in declared if seat < seats}
    score = score_open_face_deal(rules, boards, dead)
    assert sum(score.totals) == 0
    relabel = list(range(seats))
    order.shuffle(relabel)  # new seat i holds old seat relabel[i]
    moved = score_open_face_deal(
        rules,
        [boards[old] for old in relabel],
        {new for new, old in enumerate(relabel) if old in dead},
    )
    assert moved.totals == tuple(score.totals[old] for old in relabel)


def test_every_relabelling_of_a_four_seat_deal() -> None:
    boards = random_deal(random.Random(3), 4)
    base = score_open_face_deal(CLASSIC, boards).totals
    for relabel in permutations(range(4)):
        moved = score_open_face_deal(CLASSIC, [boards[old] for old in relabel]).totals
        assert moved == tuple(base[old] for old in relabel)

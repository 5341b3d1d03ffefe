"""Finnish 2♠ in won and lost rows (003's two examples), and Pineapple deals scored zero-sum and
independent of the seats' labels (docs/rules.md §8.12)."""

from __future__ import annotations

import dataclasses
import random
from itertools import permutations

from hypothesis import given, settings
from hypothesis import strategies as st

from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import Board, street_moves
from sapsam.rules.open_face.parameters import FinnishTwo, LowballOrder
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.scoring import judge_hand, score_open_face_deal

CLASSIC = open_face_preset("ofc_classic")
ROW = dataclasses.replace(CLASSIC, finnish_two_of_spades=FinnishTwo.ROW)
OWN = dataclasses.replace(CLASSIC, finnish_two_of_spades=FinnishTwo.OWN)

# 003's first example: a back flush of spades with the 2♠ earns twice its 4.
FLUSH_WITH_TWO = Board.parse("4c 4h 3h", "Kc Kd 7c 8d 3d", "2s 6s 9s Ts Qs")
PAIR_BACK = Board.parse("5c 5d 2h", "Ac Ad 7h 8s 9c", "Jc Jd 4d 6c 3c")


def test_003_a_won_row_with_the_two_of_spades_earns_double() -> None:
    plain = score_open_face_deal(CLASSIC, [FLUSH_WITH_TWO, PAIR_BACK])
    doubled = score_open_face_deal(ROW, [FLUSH_WITH_TWO, PAIR_BACK])
    (plain_pair,) = plain.pairs
    (pair,) = doubled.pairs
    assert pair.rows == plain_pair.rows
    assert plain_pair.royalties == 4 and pair.royalties == 8  # «de două ori … 8 puncte»
    assert score_open_face_deal(OWN, [FLUSH_WITH_TWO, PAIR_BACK]).pairs[0].royalties == 8


# 003's second example: the opponent's back full house (6) against a back pair with the 2♠.
FULL_HOUSE = Board.parse("5c 5d 4h", "Ac Ad 7h 8s 9c", "Jc Jd Js 6c 6d")
PAIR_WITH_TWO = Board.parse("4c 3h 6h", "Kc Qd 7c 8d 9d", "2s 2c Ts 8c 7s")


def test_003_a_lost_row_with_the_two_of_spades_pays_the_opponent_double() -> None:
    (pair,) = score_open_face_deal(ROW, [FULL_HOUSE, PAIR_WITH_TWO]).pairs
    assert pair.rows[2] == 1
    assert pair.royalties == 12  # «dublu bonusul full house (12 puncte)»
    # Own: only the holder's royalty doubles, and a pair earns none: the full house pays 6.
    assert score_open_face_deal(OWN, [FULL_HOUSE, PAIR_WITH_TWO]).pairs[0].royalties == 6
    assert score_open_face_deal(CLASSIC, [FULL_HOUSE, PAIR_WITH_TWO]).pairs[0].royalties == 6


def test_a_dead_hand_s_two_of_spades_doubles_nothing() -> None:
    dead = Board.parse("Qh Qc Qd", "Kc Kd 7c 8d 9d", "2s 2c As Ts 8c")
    assert judge_hand(ROW, dead).dead and judge_hand(ROW, dead).two_of_spades_row is None
    (pair,) = score_open_face_deal(ROW, [FULL_HOUSE, dead]).pairs
    assert (pair.points, pair.royalties) == (6, 6)


def test_the_two_of_spades_doubles_only_against_its_holder() -> None:
    third = Board.parse("Qc Qh 2d", "As Ah 5h 5s Kd", "Kh Qs Jh Th 9h")
    assert judge_hand(ROW, third).royalties == (7, 0, 2)
    score = score_open_face_deal(ROW, [FULL_HOUSE, PAIR_WITH_TWO, third])
    by_pair = {(pair.seat_a, pair.seat_b): pair.royalties for pair in score.pairs}
    # The full house against the third: no 2♠ in either hand, nothing doubled.
    assert by_pair[(0, 2)] == 6 - (7 + 2)
    # The 2♠'s holder against the third: the back row's royalties (0 and 2) doubled.
    assert by_pair[(1, 2)] == -(7 + 2 * 2)
    assert by_pair[(0, 1)] == 2 * 6


PRESETS = [
    open_face_preset("pineapple"),
    open_face_preset("pineapple_2_7"),
    dataclasses.replace(
        open_face_preset("pineapple_2_7"), lowball_order=LowballOrder.BACK_OVER_FRONT
    ),
    dataclasses.replace(open_face_preset("pineapple"), finnish_two_of_spades=FinnishTwo.ROW),
    dataclasses.replace(open_face_preset("pineapple_2_7"), finnish_two_of_spades=FinnishTwo.OWN),
]


def _random_pineapple_boards(rules_index: int, seats: int, seed: int) -> list[Board]:
    """Every seat plays a whole Pineapple hand of random legal moves from one shuffled deck."""
    rules = PRESETS[rules_index]
    rng = random.Random(seed)
    deck = [Card(card) for card in range(52)]
    rng.shuffle(deck)
    boards = [Board()] * seats
    for street, count in enumerate(rules.dealt_street_cards):
        for seat in range(seats):
            dealt, deck = deck[:count], deck[count:]
            discards = rules.street_discards if street else 0
            placement, _thrown = rng.choice(street_moves(boards[seat], dealt, discards))
            boards[seat] = boards[seat].with_placement(placement)
    return boards


@settings(max_examples=60, deadline=None)
@given(
    rules_index=st.integers(0, len(PRESETS) - 1),
    seats=st.integers(2, 3),
    seed=st.integers(0, 2**32),
)
def test_pineapple_deals_are_zero_sum_and_relabelling_permutes_the_totals(
    rules_index: int, seats: int, seed: int
) -> None:
    rules = PRESETS[rules_index]
    boards = _random_pineapple_boards(rules_index, seats, seed)
    assert all(board.complete for board in boards)
    totals = score_open_face_deal(rules, boards).totals
    assert sum(totals) == 0
    for order in permutations(range(seats)):
        relabelled = score_open_face_deal(rules, [boards[seat] for seat in order]).totals
        assert relabelled == tuple(totals[seat] for seat in order)

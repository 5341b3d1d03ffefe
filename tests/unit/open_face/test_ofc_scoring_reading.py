"""A second reading of docs/rules.md §8.3-§8.4, sharing nothing with ``rules.open_face``: the
royalty table typed in from the page, rows compared by ``hands.evaluate`` alone. Every seeded
deal (2 to 4 seats, dead hands included) must total the same under both."""

from __future__ import annotations

import random

import pytest

from sapsam.rules.cards import Card
from sapsam.rules.hands import Category, HandValue, evaluate
from sapsam.rules.open_face.board import Board
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.scoring import score_open_face_deal

# §8.3, row by row: (category, ace-high straight flush) -> points, American then Russian.
BACK = {
    Category.STRAIGHT: (2, 2),
    Category.FLUSH: (4, 4),
    Category.FULL_HOUSE: (6, 6),
    Category.FOUR_OF_A_KIND: (10, 8),
    Category.STRAIGHT_FLUSH: (15, 10),
    "royal": (25, 15),
}
MIDDLE = {
    Category.STRAIGHT: (4, 4),
    Category.FLUSH: (8, 8),
    Category.FULL_HOUSE: (12, 12),
    Category.FOUR_OF_A_KIND: (20, 16),
    Category.STRAIGHT_FLUSH: (30, 20),
    "royal": (50, 30),
}


def royalty(row: int, value: HandValue, russian: bool, middle_trips: int) -> int:
    category, top = value.category, value.ranks[0]
    if row == 0:
        if category == Category.PAIR:
            return max(0, top - 3)  # 66 (rank 4) is 1 ... AA (rank 12) is 9
        return 10 + top if category == Category.THREE_OF_A_KIND else 0
    if row == 1 and category == Category.THREE_OF_A_KIND:
        return middle_trips
    table = MIDDLE if row == 1 else BACK
    key = "royal" if category == Category.STRAIGHT_FLUSH and top == 12 else category
    return table.get(key, (0, 0))[russian]


def reading_totals(rules: OpenFaceRules, boards: list[Board], dead: set[int]) -> list[int]:
    russian = rules.royalty_table == "russian"
    seats = []
    for seat, board in enumerate(boards):
        values = [evaluate(board.front), evaluate(board.middle), evaluate(board.back)]
        is_dead = seat in dead or not values[0] <= values[1] <= values[2]
        earned = (
            0
            if is_dead
            else sum(
                royalty(row, value, russian, rules.middle_trips_royalty)
                for row, value in enumerate(values)
            )
        )
        seats.append((values, is_dead, earned))
    totals = [0] * len(boards)
    for a in range(len(boards)):
        for b in range(len(boards)):
            if a == b:
                continue
            (values_a, dead_a, royal_a), (values_b, dead_b, royal_b) = seats[a], seats[b]
            if dead_a and dead_b:
                continue
            if dead_b:
                won, lost = 3, 0
            elif dead_a:
                won, lost = 0, 3
            else:
                won = sum(x > y for x, y in zip(values_a, values_b, strict=True))
                lost = sum(x < y for x, y in zip(values_a, values_b, strict=True))
            points = 0
            if won == 3:
                points = rules.scoop_points
            elif lost == 3:
                points = -rules.scoop_points
            elif won >= 2:
                points = rules.two_of_three_points
            elif lost >= 2:
                points = -rules.two_of_three_points
            totals[a] += points + royal_a - royal_b
    return totals


@pytest.mark.parametrize(
    "rules",
    [
        OpenFaceRules(),
        OpenFaceRules(royalty_table="russian", two_of_three_points=2),
        OpenFaceRules(middle_trips_royalty=0, scoop_points=3, two_of_three_points=1),
    ],
)
def test_every_seeded_deal_totals_as_the_page_reads(rules: OpenFaceRules) -> None:
    rng = random.Random(31)
    with_royalties = 0
    for _ in range(300):
        seats = rng.randint(2, 4)
        cards = [Card(card) for card in rng.sample(range(52), 13 * seats)]
        # Some hands sorted by rank (legal ones) or by suit (flushes behind): royalties occur.
        boards = []
        for seat in range(seats):
            hand = cards[13 * seat : 13 * seat + 13]
            shape = rng.choice(("dealt", "rank", "suit"))
            if shape == "rank":
                hand.sort(key=lambda card: card >> 2)
            elif shape == "suit":
                hand.sort(key=lambda card: (card & 3, card >> 2))
            boards.append(Board(tuple(hand[:3]), tuple(hand[3:8]), tuple(hand[8:])))
        dead = {seat for seat in range(seats) if rng.random() < 0.1}
        score = score_open_face_deal(rules, boards, dead)
        assert list(score.totals) == reading_totals(rules, boards, dead)
        with_royalties += sum(hand.royalty_total > 0 for hand in score.hands)
    assert with_royalties > 40

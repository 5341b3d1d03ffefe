"""Dead hands: exact with few places left, never a false 'dead' (brute force on small pools)."""

from __future__ import annotations

import random
from itertools import permutations

from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.hands import evaluate
from sapsam.rules.open_face.board import ROW_CAPACITY, Board, Placement, Row, legal_placements
from sapsam.rules.open_face.dead import every_option_kills, is_dead, kills, unseen_cards


def brute_force_dead(board: Board, pool: list[Card]) -> bool:
    """No filling of the empty places from ``pool`` puts the rows in order (the definition)."""
    places = [row for row in Row for _ in range(board.free(row))]
    for filling in permutations(pool, len(places)):
        rows = [list(row) for row in board.rows]
        for row, card in zip(places, filling, strict=True):
            rows[row].append(card)
        front, middle, back = (evaluate(row) for row in rows)
        if front <= middle <= back:
            return False
    return True


def random_case(rng: random.Random, empty: int, pool_size: int) -> tuple[Board, list[Card]]:
    cards = [Card(card) for card in rng.sample(range(52), 13 - empty + pool_size)]
    rows: list[list[Card]] = [[], [], []]
    slots = [row for row in Row for _ in range(ROW_CAPACITY[row])]
    rng.shuffle(slots)
    for card, row in zip(cards[: 13 - empty], slots, strict=False):
        rows[row].append(card)
    board = Board(tuple(rows[0]), tuple(rows[1]), tuple(rows[2]))
    return board, cards[13 - empty :]


def test_with_two_places_left_the_answer_is_exact() -> None:
    rng = random.Random(7)
    dead_seen = 0
    for _ in range(400):
        empty = rng.choice((0, 1, 2))
        board, pool = random_case(rng, empty, rng.choice((2, 5, 12)))
        expected = brute_force_dead(board, pool)
        assert is_dead(board, pool) is expected, (str(board), pool)
        dead_seen += expected
    assert 50 < dead_seen < 350  # both answers were exercised


def test_dead_is_never_said_wrongly_with_more_places_left() -> None:
    rng = random.Random(8)
    said_dead = 0
    for _ in range(300):
        board, pool = random_case(rng, rng.choice((3, 4, 5)), 6)
        if is_dead(board, pool):
            said_dead += 1
            assert brute_force_dead(board, pool), (str(board), pool)
    assert said_dead > 10


def test_full_rows_out_of_order_are_already_dead() -> None:
    # A full middle of a pair of fives under a front pair of kings: nothing can save it.
    board = Board.parse("Kc Kd", "5c 5d 7h 8s 9c", "2c")
    assert is_dead(board)
    assert not is_dead(Board.parse("Kc Kd", "5c 5d 7h 8s", "2c"))  # a king can still come


def test_a_front_pair_over_a_middle_that_cannot_pair_up() -> None:
    # The middle must end at least as strong as kings: only a straight card (an eight) or a
    # king would do it, and the pool has neither.
    board = Board.parse("Kc Kd 2h", "5c 6d 7h 9s", "Ac Ad As Ah")
    pool = parse_cards("3c 3d Jh")
    assert is_dead(board, list(pool))
    assert not is_dead(board, [*pool, Card.parse("8c")])  # the straight five to nine


def test_every_option_kills_it_on_the_last_card() -> None:
    board = Board.parse("Qc Qd", "Jc Jd 2h 3s 4c", "Tc Td 5h 6s 7c")
    dealt = parse_cards("9h")
    options = legal_placements(board, dealt)
    assert len(options) == 1
    assert kills(board, options[0])
    assert every_option_kills(board, options)
    board = Board.parse("Qc Qd", "Kc Kd 2h 3s 4c", "Tc Td 5h 6s")
    options = legal_placements(board, parse_cards("9h"))
    assert [kills(board, option) for option in options] == [True, False]  # back, front
    assert not every_option_kills(board, options)


def test_unseen_cards_leave_out_the_board_and_what_was_seen() -> None:
    board = Board.parse("Qc", "", "As")
    pool = unseen_cards(board, parse_cards("2c 3c"))
    assert len(pool) == 48 and Card.parse("Qc") not in pool and Card.parse("2c") not in pool


def test_kills_uses_the_pool_without_the_placed_cards() -> None:
    board = Board.parse("Kc Kd 2h", "5c 6d 7h", "Ac Ad As Ah")
    placement = Placement(middle=parse_cards("8c"))
    # After 8c only a nine or a four can lift the middle to a straight; the pool has none.
    assert kills(board, placement, parse_cards("8c 3c 3d Jh"))
    assert not kills(board, placement, parse_cards("8c 9d 3d Jh"))

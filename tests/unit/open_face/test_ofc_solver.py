"""The Monte Carlo placement solver and the heuristic it plays out with."""

from __future__ import annotations

import random

import pytest

from sapsam.rules.cards import Card, parse_cards
from sapsam.rules.open_face.board import Board, legal_placements
from sapsam.rules.open_face.dead import kills
from sapsam.rules.open_face.heuristic import (
    board_score,
    finished_value,
    heuristic_placement,
    play_out,
)
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.solver import solve_placement

CLASSIC = open_face_preset("ofc_classic")


def late_position(rng: random.Random) -> tuple[Board, list[Card], list[Card]]:
    """A board two or three places short of full, one card dealt, and the cards left."""
    cards = [Card(card) for card in rng.sample(range(52), 52)]
    rows: list[list[Card]] = [[], [], []]
    places = [0] * 3 + [1] * 5 + [2] * 5
    rng.shuffle(places)
    placed = 13 - rng.choice((2, 3))
    for card, row in zip(cards[:placed], places, strict=False):
        rows[row].append(card)
    return (
        Board(tuple(rows[0]), tuple(rows[1]), tuple(rows[2])),
        [cards[placed]],
        cards[placed + 1 :],
    )


def test_the_same_seed_gives_the_same_choice() -> None:
    dealt = parse_cards("As Kd 7h 7c 2s")
    first = solve_placement(CLASSIC, Board(), dealt, seed=42)
    assert solve_placement(CLASSIC, Board(), dealt, seed=42) == first
    assert first.legal == 232 and first.played_out == 6
    assert first.placement in legal_placements(Board(), dealt)


def test_one_legal_placement_is_returned_without_playing_out() -> None:
    board = Board.parse("2c 3d 4h", "5c 6d 7h 8s 9c", "Tc Td Jh Js")
    choice = solve_placement(CLASSIC, board, parse_cards("Qd"))
    assert choice.expected is None and choice.played_out == 0 and choice.legal == 1


def test_the_solver_never_kills_a_hand_that_can_live() -> None:
    rng = random.Random(11)
    checked = 0
    for case in range(120):
        board, dealt, unseen = late_position(rng)
        options = legal_placements(board, dealt)
        pool = unseen
        if any(kills(board, option, pool) for option in options) and not all(
            kills(board, option, pool) for option in options
        ):
            choice = solve_placement(CLASSIC, board, dealt, seed=case, rollouts=4)
            assert not kills(board, choice.placement, pool), (str(board), dealt)
            checked += 1
    assert checked >= 10  # positions where one placement kills and another does not


def test_seen_cards_never_come_in_a_future() -> None:
    # Everything but the 9h and the 2s is seen, so both come: the 8h behind makes the back a
    # flush with the 9h (4 in royalties); in front it leaves the back ace high under the
    # middle's fives, dead.
    board = Board.parse("2c 3d", "5c 5d 7s Ks 9c", "Ah Kh Qh")
    dealt = parse_cards("8h")
    coming = {Card.parse("9h"), Card.parse("2s")}
    seen = [card for card in range(52) if card not in {*board.cards, *dealt, *coming}]
    choice = solve_placement(CLASSIC, board, dealt, seen=seen)
    assert choice.placement.back == dealt
    assert choice.expected is not None and choice.expected > 4


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match=r"rollouts must be in 1\.\.10000"):
        solve_placement(CLASSIC, Board(), parse_cards("As"), rollouts=0)


def test_play_out_places_by_the_score_and_ends_at_the_best_finish() -> None:
    rng = random.Random(4)
    for _ in range(30):
        cards = [Card(card) for card in rng.sample(range(52), 13)]
        start = Board().with_placement(heuristic_placement(CLASSIC, Board(), cards[:5]))
        board = start
        for card in cards[5:-2]:  # the heuristic's score, card by card
            options = legal_placements(board, [card])
            scores = [board_score(CLASSIC, board.with_placement(option)) for option in options]
            board = board.with_placement(options[scores.index(max(scores))])
        finishes = [
            finished_value(CLASSIC, board.with_placement(first).with_placement(second))
            for first in legal_placements(board, cards[-2:-1])
            for second in legal_placements(board.with_placement(first), cards[-1:])
        ]
        assert play_out(CLASSIC, start, cards[5:]) == max(finishes)


def test_the_heuristic_keeps_a_hand_alive_at_the_end() -> None:
    rng = random.Random(12)
    checked = 0
    for _ in range(150):
        board, dealt, unseen = late_position(rng)
        options = legal_placements(board, dealt)
        if len(options) > 1 and not all(kills(board, option, unseen) for option in options):
            seen = [card for card in range(52) if card not in {*unseen, *board.cards, *dealt}]
            placement = heuristic_placement(CLASSIC, board, dealt, seen=seen)
            assert not kills(board, placement, unseen)
            checked += 1
    assert checked > 50


def test_a_dead_hand_is_worth_less_than_any_live_one() -> None:
    dead = Board.parse("Ac Ad 2c", "3d 4d 6h 7d 9d", "Tc Th Td Ts 9h")
    live = Board.parse("2h 3s 4h", "5d 6s 7s 9s Jc", "Ks Kh 4s 7c Qs")
    assert finished_value(CLASSIC, dead) < 0 < finished_value(CLASSIC, live)

"""A placement solver for bots, hints and timeouts: Monte Carlo over the cards still unseen.

For a street's dealt cards, ``solve_placement``:

1. lists the legal placements and, when there are more than ``candidates``, keeps the ones the
   simple heuristic (``heuristic.board_score``) ranks highest (232 placements of the first five
   cards are too many to play out);
2. draws ``rollouts`` futures from the cards the seat has not seen (neither on its board, nor
   dealt to it now, nor in ``seen``: the other boards), one future for every empty place, with a
   ``random.Random`` seeded by ``seed``; every candidate is played out against the same futures
   (common random numbers: the comparison is not blurred by luck);
3. plays each future out card by card with the heuristic and values the finished hand with
   ``heuristic.finished_value``; the candidate of the highest mean wins, the heuristic's order
   breaking ties;
4. never returns a placement that kills the hand (``dead.kills``) while another does not: the
   winner is checked and, if it kills, the best candidate that does not, then any placement
   that does not, is taken. (Dead-ness is decided exactly once two places or fewer remain, so
   the last placements never foul a hand that could be kept alive; earlier, a placement proven
   dead is avoided.)

The choice depends only on its arguments: the same board, cards, ``seen`` and ``seed`` give the
same placement (the pool is sorted before sampling, and CPython's ``random.Random`` with an
integer seed is stable across versions), so a timed-out seat's move replays.

Pineapple: ``solve_street`` chooses the discard too, over every (placement, discard) of the
street (at most 27: a discard of 3, the other 2 into the rows with room).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import (
    Board,
    Placement,
    PlacementError,
    legal_placements,
    street_moves,
)
from sapsam.rules.open_face.dead import kills
from sapsam.rules.open_face.heuristic import board_score, play_out
from sapsam.rules.open_face.parameters import HAND_CARDS, OpenFaceRules

DEFAULT_ROLLOUTS: Final = 20
"""Futures drawn per decision (``bench/open_face_solver.py`` measures the time and the result)."""
DEFAULT_CANDIDATES: Final = 6
"""Placements played out when there are more (the heuristic's best)."""
MAX_ROLLOUTS: Final = 10_000
MAX_CANDIDATES: Final = 232


@dataclass(frozen=True)
class SolverChoice:
    """The chosen placement, its mean value over the futures (``None`` when there was no choice
    to make), how many placements were legal and how many were played out."""

    placement: Placement
    expected: float | None
    legal: int
    played_out: int


def solve_placement(
    rules: OpenFaceRules,
    board: Board,
    dealt: Sequence[Card],
    seen: Collection[int] = (),
    seed: int = 0,
    rollouts: int = DEFAULT_ROLLOUTS,
    candidates: int = DEFAULT_CANDIDATES,
) -> SolverChoice:
    """The solver's placement of ``dealt`` on ``board`` (module documentation).

    Raises :class:`PlacementError` when the rows have no room for the cards, ``ValueError`` for
    ``rollouts`` or ``candidates`` out of 1..``MAX_ROLLOUTS`` / 1..``MAX_CANDIDATES``.
    """
    if not 1 <= rollouts <= MAX_ROLLOUTS or not 1 <= candidates <= MAX_CANDIDATES:
        raise ValueError(
            f"rollouts must be in 1..{MAX_ROLLOUTS} and candidates in 1..{MAX_CANDIDATES}, "
            f"got {rollouts} and {candidates}"
        )
    options = legal_placements(board, dealt)
    excluded = set(board.cards).union(dealt, seen)
    pool = [Card(card) for card in range(52) if card not in excluded]
    if len(options) == 1:
        return SolverChoice(options[0], None, 1, 0)
    ranked = sorted(options, key=lambda option: -board_score(rules, board.with_placement(option)))
    played = ranked[:candidates]
    empty_after = HAND_CARDS - board.placed - len(dealt)
    if empty_after > len(pool):
        raise PlacementError(
            f"{empty_after} places to fill after this street but only {len(pool)} cards unseen"
        )
    rng = random.Random(seed)
    futures = [rng.sample(pool, empty_after) for _ in range(rollouts)] if empty_after else [[]]
    means = [
        sum(play_out(rules, board.with_placement(option), future) for future in futures)
        / len(futures)
        for option in played
    ]
    order = sorted(range(len(played)), key=lambda index: -means[index])  # stable: ties keep rank
    best = played[order[0]]
    if kills(board, best, pool, rules):
        alive = [played[index] for index in order] + ranked[candidates:]
        best = next((option for option in alive if not kills(board, option, pool, rules)), best)
    expected = means[played.index(best)] if best in played else None
    return SolverChoice(best, expected, len(options), len(played))


@dataclass(frozen=True)
class StreetChoice:
    """A Pineapple street's move: the placement, the cards discarded, and as
    :class:`SolverChoice` the mean value, the legal moves and how many were played out."""

    placement: Placement
    discards: tuple[Card, ...]
    expected: float | None
    legal: int
    played_out: int


def solve_street(
    rules: OpenFaceRules,
    board: Board,
    dealt: Sequence[Card],
    discards: int,
    seen: Collection[int] = (),
    seed: int = 0,
    rollouts: int = DEFAULT_ROLLOUTS,
    candidates: int = DEFAULT_CANDIDATES,
) -> StreetChoice:
    """The solver's move for a street that discards ``discards`` of the ``dealt`` cards
    (Pineapple; none: :func:`solve_placement`'s choice). As :func:`solve_placement`, over every
    (placement, discards) of ``board.street_moves``: the heuristic's best ``candidates`` are
    played out against the same futures, drawn from the cards the seat has not seen (the
    discarded card is seen: the seat holds it). A future deals each empty place one card, as
    for a classic hand: the later streets' own discards are not simulated (a choice every
    candidate shares, so the comparison stays fair). Never a move that kills the hand while
    another does not. Deterministic in its arguments, as :func:`solve_placement`."""
    if discards == 0:
        choice = solve_placement(rules, board, dealt, seen, seed, rollouts, candidates)
        return StreetChoice(choice.placement, (), choice.expected, choice.legal, choice.played_out)
    if not 1 <= rollouts <= MAX_ROLLOUTS or not 1 <= candidates <= MAX_CANDIDATES:
        raise ValueError(
            f"rollouts must be in 1..{MAX_ROLLOUTS} and candidates in 1..{MAX_CANDIDATES}, "
            f"got {rollouts} and {candidates}"
        )
    moves = street_moves(board, dealt, discards)
    excluded = set(board.cards).union(dealt, seen)
    pool = [Card(card) for card in range(52) if card not in excluded]
    if len(moves) == 1:
        return StreetChoice(moves[0][0], moves[0][1], None, 1, 0)
    ranked = sorted(moves, key=lambda move: -board_score(rules, board.with_placement(move[0])))
    played = ranked[:candidates]
    empty_after = HAND_CARDS - board.placed - (len(dealt) - discards)
    if empty_after > len(pool):
        raise PlacementError(
            f"{empty_after} places to fill after this street but only {len(pool)} cards unseen"
        )
    rng = random.Random(seed)
    futures = [rng.sample(pool, empty_after) for _ in range(rollouts)] if empty_after else [[]]
    means = [
        sum(play_out(rules, board.with_placement(move[0]), future) for future in futures)
        / len(futures)
        for move in played
    ]
    order = sorted(range(len(played)), key=lambda index: -means[index])
    best = played[order[0]]
    if kills(board, best[0], pool, rules):
        alive = [played[index] for index in order] + ranked[candidates:]
        best = next((move for move in alive if not kills(board, move[0], pool, rules)), best)
    expected = means[played.index(best)] if best in played else None
    return StreetChoice(best[0], best[1], expected, len(moves), len(played))

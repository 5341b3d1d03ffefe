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
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import Board, Placement, PlacementError, legal_placements
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
    if kills(board, best, pool):
        alive = [played[index] for index in order] + ranked[candidates:]
        best = next((option for option in alive if not kills(board, option, pool)), best)
    expected = means[played.index(best)] if best in played else None
    return SolverChoice(best, expected, len(options), len(played))

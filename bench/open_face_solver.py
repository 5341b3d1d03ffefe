"""Open face, head to head: the Monte Carlo solver against the simple heuristic, and its time.

Each trial deals two seeded 13-card hands X and Y from one deck and plays a heads-up open-face
deal twice: the solver places X in seat 0 against the heuristic placing Y in seat 1, then the
heuristic places X in seat 0 against the solver placing Y in seat 1. Streets follow the preset
(5 then 1 x 8, or 5 + 4 + 4); on each street seat 0 places first, and each seat sees the other's
board (``seen``). Playing both hands from both seats cancels the luck of the deal, so the mean
is the difference the solver makes. Normal deals only (no Fantasyland). The deals are scored by
``rules.open_face.scoring`` under the preset.

Prints one JSON object: the solver's mean points per deal over the heuristic, its standard error
and z; each side's dead-hand rate; and the solver's decision time in milliseconds (median, p95,
max; the first street's median apart; median CPU times, which other processes on the machine
do not inflate), against the target median <= 50 ms.

Pineapple presets (``pineapple``, ``pineapple_2_7``; issue #19) deal 17 cards a hand (5, then
3 a street) and both sides choose the discard too: the solver by ``solve_street``, the
heuristic by ``heuristic_street_move``; a discarded card stays unseen by the other seat.

Usage: ``python bench/open_face_solver.py [--trials N] [--seed S] [--preset P] [--rollouts R]``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import Board, Placement, discards_due
from sapsam.rules.open_face.heuristic import heuristic_street_move
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.presets import OPEN_FACE_PRESETS, PINEAPPLE_PRESETS, open_face_preset
from sapsam.rules.open_face.scoring import score_open_face_deal
from sapsam.rules.open_face.solver import DEFAULT_ROLLOUTS, solve_street

MEDIAN_TARGET_MS = 50.0


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of already sorted values."""
    index = max(0, min(len(sorted_values) - 1, math.ceil(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


class Timings:
    """The solver's decision times: wall and CPU milliseconds, the first street's apart."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.first_street: list[float] = []
        self.first_street_cpu: list[float] = []


def play(
    rules: OpenFaceRules,
    hands: tuple[list[Card], list[Card]],
    solver_seat: int,
    seed: int,
    rollouts: int,
    timings: Timings,
) -> tuple[Board, Board]:
    """One heads-up deal: ``hands[s]`` dealt to seat ``s`` street by street."""
    boards = [Board(), Board()]
    start = 0
    for street, count in enumerate(rules.dealt_street_cards):
        discards = discards_due(rules, street)
        for seat in (0, 1):
            dealt = hands[seat][start : start + count]
            placement: Placement
            if seat == solver_seat:
                wall, cpu = time.perf_counter(), time.process_time()
                placement = solve_street(
                    rules,
                    boards[seat],
                    dealt,
                    discards,
                    seen=boards[1 - seat].cards,
                    seed=seed * 100 + street,
                    rollouts=rollouts,
                ).placement
                elapsed = (time.perf_counter() - wall) * 1000
                timings.wall.append(elapsed)
                used = (time.process_time() - cpu) * 1000
                timings.cpu.append(used)
                if street == 0:
                    timings.first_street.append(elapsed)
                    timings.first_street_cpu.append(used)
            else:
                placement, _ = heuristic_street_move(
                    rules, boards[seat], dealt, discards, seen=boards[1 - seat].cards
                )
            boards[seat] = boards[seat].with_placement(placement)
        start += count
    return boards[0], boards[1]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its JSON result."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trials", type=int, default=500, help="deal pairs (2 deals each)")
    parser.add_argument("--seed", type=int, default=1)
    presets = sorted([*OPEN_FACE_PRESETS, *PINEAPPLE_PRESETS])
    parser.add_argument("--preset", choices=presets, default="ofc_classic")
    parser.add_argument("--rollouts", type=int, default=DEFAULT_ROLLOUTS)
    args = parser.parse_args(argv)
    rules = open_face_preset(args.preset)
    rng = random.Random(args.seed)
    timings = Timings()
    gains: list[int] = []
    dead = {"solver": 0, "heuristic": 0}
    for trial in range(args.trials):
        size = rules.normal_hand_cards
        cards = [Card(card) for card in rng.sample(range(52), 2 * size)]
        hands = (cards[:size], cards[size:])
        for solver_seat in (0, 1):
            boards = play(
                rules, hands, solver_seat, 2 * trial + solver_seat, args.rollouts, timings
            )
            score = score_open_face_deal(rules, boards)
            gains.append(score.totals[solver_seat])
            dead["solver"] += score.hands[solver_seat].dead
            dead["heuristic"] += score.hands[1 - solver_seat].dead
    deals = len(gains)
    mean = statistics.fmean(gains)
    error = statistics.stdev(gains) / math.sqrt(deals) if deals > 1 else 0.0
    wall = sorted(timings.wall)
    result: dict[str, Any] = {
        "benchmark": "open_face_solver",
        "python": platform.python_version(),
        "preset": args.preset,
        "trials": args.trials,
        "deals": deals,
        "seed": args.seed,
        "rollouts": args.rollouts,
        "solver_points_per_deal": round(mean, 3),
        "standard_error": round(error, 3),
        "z": round(mean / error, 2) if error else None,
        "solver_dead_rate": round(dead["solver"] / deals, 4),
        "heuristic_dead_rate": round(dead["heuristic"] / deals, 4),
        "decisions": len(wall),
        "median_ms": round(statistics.median(wall), 2),
        "p95_ms": round(percentile(wall, 0.95), 2),
        "max_ms": round(wall[-1], 2),
        "first_street_median_ms": round(statistics.median(timings.first_street), 2),
        "median_cpu_ms": round(statistics.median(timings.cpu), 2),
        "first_street_median_cpu_ms": round(statistics.median(timings.first_street_cpu), 2),
        "target_median_ms": MEDIAN_TARGET_MS,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

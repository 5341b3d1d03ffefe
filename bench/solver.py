"""Time to arrange a random 13-card hand with the solver, in milliseconds.

Deals ``--hands`` seeded random 13-card hands and solves each once per objective (after a warm-up
solve that builds the per-process split table and loads the shipped tables); prints one JSON object
with the median, p95 and max times and the mean objective of each. Target: median <= 5 ms
(issue #17).

Usage: ``python bench/solver.py [--hands N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from sapsam.rules.arrangement import check_arrangement
from sapsam.rules.solver import Objective, objective, solve


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of already sorted values."""
    index = max(0, min(len(sorted_values) - 1, round(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its JSON result."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    hands = [rng.sample(range(52), 13) for _ in range(args.hands)]
    result: dict[str, Any] = {
        "benchmark": "solver",
        "python": platform.python_version(),
        "hands": args.hands,
        "seed": args.seed,
        "target_median_ms": 5,
    }
    for goal in Objective:
        solve(hands[0], goal=goal)  # warm-up: one-off tables are not part of a solve's cost
        milliseconds: list[float] = []
        objectives: list[float] = []
        for hand in hands:
            start = time.perf_counter()
            arrangement = solve(hand, goal=goal)
            milliseconds.append((time.perf_counter() - start) * 1000)
            if check_arrangement(arrangement, hand).foul:
                raise AssertionError(f"solver returned a foul for {hand}")
            objectives.append(objective(arrangement, goal))
        milliseconds.sort()
        result[goal.value] = {
            "median_ms": round(statistics.median(milliseconds), 3),
            "p95_ms": round(percentile(milliseconds, 0.95), 3),
            "max_ms": round(milliseconds[-1], 3),
            "mean_objective": round(statistics.fmean(objectives), 4),
        }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

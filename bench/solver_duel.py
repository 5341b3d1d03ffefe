"""Head to head: the ``played_rows`` solver objective against the default ``random_rows``.

Each trial deals two seeded random 13-card hands X and Y from one deck and plays them twice, with
the seats' cards swapped: ``played_rows`` sets X against ``random_rows`` setting Y, then
``played_rows`` sets Y against ``random_rows`` setting X. The trial's result is what the
``played_rows`` player gained over both games, scored under each preset; swapping the hands
cancels the luck of the deal, so what remains is the difference the objectives make.

Prints one JSON object: per preset, the mean gain per hand (half a trial) and its standard error.
Usage: ``python bench/solver_duel.py [--trials N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections.abc import Sequence
from typing import Any

from sapsam.rules.arrangement import check_arrangement
from sapsam.rules.ruleset import PRESETS
from sapsam.rules.scoring import score_deal
from sapsam.rules.solver import Objective, solve


def main(argv: Sequence[str] | None = None) -> int:
    """Run the duel and print its JSON result."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    gains: dict[str, list[float]] = {name: [] for name in PRESETS}
    for _ in range(args.trials):
        cards = rng.sample(range(52), 26)
        hands = (cards[:13], cards[13:])
        played = [check_arrangement(solve(hand, goal=Objective.PLAYED_ROWS)) for hand in hands]
        default = [check_arrangement(solve(hand)) for hand in hands]
        for name, rule_set in PRESETS.items():
            first = score_deal(rule_set, [played[0], default[1]]).totals[0]
            second = score_deal(rule_set, [played[1], default[0]]).totals[0]
            gains[name].append((first + second) / 2)
    result: dict[str, Any] = {
        "benchmark": "solver_duel",
        "trials": args.trials,
        "seed": args.seed,
        "gain_per_hand": {},
    }
    for name, values in gains.items():
        mean = statistics.fmean(values)
        error = statistics.stdev(values) / math.sqrt(len(values))
        result["gain_per_hand"][name] = {
            "mean": round(mean, 4),
            "standard_error": round(error, 4),
            "z": round(mean / error, 1) if error else None,
        }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

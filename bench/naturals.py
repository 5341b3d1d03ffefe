"""Naturals: how often seeded random hands hold each one, and what finding them costs a client.

``naturals_held`` is what the SDK's default declarer (every bot, the demo) runs once per hand at
a table with naturals, and what ``sapsam-play`` runs to offer a declaration. This deals
``--hands`` seeded 13-card hands and, in alternating rounds (classic, extended, classic, …, so a
busy machine slows both alike), times ``naturals_held`` under each table.

Prints one JSON object: per table the median microseconds a hand over the rounds (process CPU
time, which other processes do not inflate, and wall time), and how many hands held each natural
(the strongest one held counted once per hand).

Usage: ``python bench/naturals.py [--hands N] [--rounds R] [--seed S]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from collections import Counter

from sapsam.rules.naturals import NaturalsTable, naturals_held
from sapsam.rules.ruleset import RuleSet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seed", type=int, default=17)
    arguments = parser.parse_args()
    rng = random.Random(arguments.seed)
    deck = list(range(52))
    hands = [rng.sample(deck, 13) for _ in range(arguments.hands)]
    tables = (NaturalsTable.CLASSIC, NaturalsTable.EXTENDED)
    cpu: dict[str, list[float]] = {table.value: [] for table in tables}
    wall: dict[str, list[float]] = {table.value: [] for table in tables}
    held: dict[str, Counter[str]] = {}
    for _ in range(arguments.rounds):
        for table in tables:
            rules = RuleSet(naturals=table)
            found: Counter[str] = Counter()
            started_cpu, started_wall = time.process_time(), time.perf_counter()
            for hand in hands:
                best = naturals_held(rules, hand)
                if best:
                    found[best[0].natural.value] += 1
            cpu[table.value].append((time.process_time() - started_cpu) / len(hands) * 1e6)
            wall[table.value].append((time.perf_counter() - started_wall) / len(hands) * 1e6)
            held[table.value] = found
    print(
        json.dumps(
            {
                "hands": arguments.hands,
                "rounds": arguments.rounds,
                "seed": arguments.seed,
                "python": platform.python_version(),
                "tables": {
                    name: {
                        "median_cpu_us_per_hand": round(statistics.median(cpu[name]), 1),
                        "median_wall_us_per_hand": round(statistics.median(wall[name]), 1),
                        "hands_holding": dict(held[name].most_common()),
                    }
                    for name in cpu
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

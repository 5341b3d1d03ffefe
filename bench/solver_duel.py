"""Head to head: one solver objective against another, on seeded deals, under every preset.

Each trial deals two seeded random 13-card hands X and Y from one deck and plays them twice, with
the seats' cards swapped: the candidate sets X against the baseline setting Y, then the candidate
sets Y against the baseline setting X. The trial's result is what the candidate gained over both
games, scored under the preset; swapping the hands cancels the luck of the deal, so what remains is
the difference the objectives make. Both solvers are given the preset's rule set (``played_score``
reads its scoring method, ``played_units`` its method and royalties). By default the candidate is
what a new table's timeout policy uses (``objective_for`` the latest rules version) and the
baseline is the previous rules version's objective.

At a preset with naturals each side also declares, as a client does before committing: the
candidate what ``sapsam.rules.solver_play.choose_natural`` chooses (a natural held only when it
pays at least what its rows are expected to), the baseline the strongest natural held (the SDK's
declarer before it); the deal is scored with the declared naturals. The candidate's time then
includes finding the naturals and choosing.

Also times every candidate solve (after a warm-up that builds the per-process tables) and checks
that no arrangement of either side fouls.

Prints one JSON object: per preset, the mean gain per hand (half a trial), its standard error and
z, and the candidate's median, p99 and max milliseconds per hand (wall clock; median and p99 also
in CPU time).
Usage: ``python bench/solver_duel.py [--trials N] [--seed S] [--candidate O] [--baseline O]
[--previous-declarer]`` (``--previous-declarer``: the candidate declares as the baseline does).
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

from sapsam.rules.arrangement import Arrangement, ArrangementCheck, check_arrangement
from sapsam.rules.naturals import NaturalHand, NaturalsTable, natural_hand, naturals_held
from sapsam.rules.presets import PRESETS
from sapsam.rules.ruleset import RULES_VERSION, RuleSet
from sapsam.rules.scoring import score_deal
from sapsam.rules.solver import (
    OBJECTIVE_BY_RULES_VERSION,
    Objective,
    objective_for,
    prepare,
    solve,
    solver_inputs,
)
from sapsam.rules.solver_play import choose_natural

MEDIAN_TARGET_MS = 5.0


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of already sorted values."""
    index = max(0, min(len(sorted_values) - 1, math.ceil(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


def _checked(arrangement: Arrangement, hand: Sequence[int], rule_set: RuleSet) -> ArrangementCheck:
    check = check_arrangement(arrangement, hand, strict_order=rule_set.strict_row_order)
    if check.foul:
        raise AssertionError(f"the solver fouled {sorted(hand)}: {check.detail}")
    return check


def main(argv: Sequence[str] | None = None) -> int:
    """Run the duel and print its JSON result."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trials", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=7)
    latest = objective_for(next(iter(PRESETS.values())))
    parser.add_argument("--candidate", choices=list(Objective), default=latest.value)
    previous = OBJECTIVE_BY_RULES_VERSION[RULES_VERSION - 1]
    parser.add_argument("--baseline", choices=list(Objective), default=previous.value)
    parser.add_argument("--previous-declarer", action="store_true")
    args = parser.parse_args(argv)
    candidate, baseline = Objective(args.candidate), Objective(args.baseline)

    prepare()
    pair_rules = {name: rule_set.with_changes(min_seats=2) for name, rule_set in PRESETS.items()}
    rng = random.Random(args.seed)
    gains: dict[str, list[float]] = {name: [] for name in PRESETS}
    # The candidate's times per hand, per preset: its solve (shared by the presets with the same
    # solver inputs, so timed once and counted for each) plus, with naturals, its declaration.
    milliseconds: dict[str, list[tuple[float, float]]] = {name: [] for name in PRESETS}
    for _ in range(args.trials):
        cards = rng.sample(range(52), 26)
        hands = (cards[:13], cards[13:])
        # Solved once per distinct solver inputs (solver_inputs): presets that differ only in
        # what the solver does not read share the rows.
        solved: dict[tuple[object, ...], list[_Solved]] = {}
        for name, rule_set in PRESETS.items():
            sides = []
            for goal in (candidate, baseline):
                key = (goal, solver_inputs(rule_set, goal))
                if key not in solved:
                    solved[key] = [_solved(hand, rule_set, goal) for hand in hands]
                chooses = goal is candidate and not args.previous_declarer
                played = []
                for hand, (arrangement, check, took) in zip(hands, solved[key], strict=True):
                    natural, declaring = _declared(hand, rule_set, arrangement, chooses)
                    played.append((check, natural))
                    if goal is candidate:
                        milliseconds[name].append((took[0] + declaring[0], took[1] + declaring[1]))
                sides.append(played)
            ours, theirs = sides
            # A deal's result is the sum of its pairs' (docs/rules.md §1.6), so one pair is scored
            # alone even under a preset for more seats (four_player).
            pair = pair_rules[name]
            first = _score(pair, ours[0], theirs[1])
            second = _score(pair, ours[1], theirs[0])
            gains[name].append((first + second) / 2)
    result: dict[str, Any] = {
        "benchmark": "solver_duel",
        "python": platform.python_version(),
        "rules_version": RULES_VERSION,
        "candidate": candidate.value,
        "baseline": baseline.value,
        "candidate_declares": "strongest held" if args.previous_declarer else "choose_natural",
        "baseline_declares": "strongest held",
        "trials": args.trials,
        "hands_per_preset": 2 * args.trials,
        "seed": args.seed,
        "median_target_ms": MEDIAN_TARGET_MS,
        "fouls": 0,
        "presets": {},
    }
    for name, values in gains.items():
        mean = statistics.fmean(values)
        error = statistics.stdev(values) / math.sqrt(len(values))
        timings = milliseconds[name]
        times = sorted(wall for wall, _ in timings)
        cpu = sorted(cpu for _, cpu in timings)
        result["presets"][name] = {
            "gain_per_hand": round(mean, 4),
            "standard_error": round(error, 4),
            "z": round(mean / error, 1) if error else None,
            "candidate_median_ms": round(statistics.median(times), 3),
            "candidate_p99_ms": round(percentile(times, 0.99), 3),
            "candidate_max_ms": round(times[-1], 3),
            "candidate_median_cpu_ms": round(statistics.median(cpu), 3),
            "candidate_p99_cpu_ms": round(percentile(cpu, 0.99), 3),
        }
    print(json.dumps(result))
    return 0


_Played = tuple[ArrangementCheck, NaturalHand | None]
"""A side's hand as scored: its rows, judged, and the natural it declared (None: none)."""


def _score(rule_set: RuleSet, first: _Played, second: _Played) -> int:
    return score_deal(rule_set, [first[0], second[0]], [first[1], second[1]]).totals[0]


_Solved = tuple[Arrangement, ArrangementCheck, tuple[float, float]]
"""A solve: its rows, judged, and the milliseconds it took (wall, CPU)."""


def _timer() -> tuple[float, float]:
    # Wall time and this thread's CPU time: on a shared, loaded machine the CPU time is what the
    # solver costs, the wall time what a caller waited.
    return time.perf_counter(), time.thread_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = _timer()
    return (wall - start[0]) * 1000, (cpu - start[1]) * 1000


def _solved(hand: Sequence[int], rule_set: RuleSet, goal: Objective) -> _Solved:
    start = _timer()
    arrangement = solve(hand, rule_set, goal)
    took = _since(start)
    return arrangement, _checked(arrangement, hand, rule_set), took


def _declared(
    hand: Sequence[int], rule_set: RuleSet, arrangement: Arrangement, chooses: bool
) -> tuple[NaturalHand | None, tuple[float, float]]:
    """The natural a side declares (None: none) and the milliseconds choosing took."""
    if rule_set.naturals is NaturalsTable.NONE:
        return None, (0.0, 0.0)
    start = _timer()
    if chooses:
        natural = natural_hand(rule_set, choose_natural(hand, rule_set, arrangement).natural, hand)
    else:
        held = naturals_held(rule_set, hand)
        natural = held[0] if held else None
    return natural, _since(start)


if __name__ == "__main__":
    sys.exit(main())

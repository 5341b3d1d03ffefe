"""Five-card evaluations per second: sapsam against treys and pokerkit, in one run.

Every library evaluates the same pre-generated random hands, each in its own card representation
(sapsam ``Card`` objects, treys bit-packed ints, pokerkit ``Card`` objects) built before timing.
The measured loop calls the library's public function once per hand:

* ``sapsam_evaluate5``: ``evaluate5(*hand)``, the unchecked fast path;
* ``sapsam_evaluate``: ``evaluate(hand)``, which also checks the cards are valid and distinct;
* ``sapsam_evaluate5_plain_int``: ``evaluate5(*hand)`` on plain ``int`` cards rather than ``Card``
  (an ``int`` subclass, which CPython's specialised integer operations do not cover);
* ``treys``: ``Evaluator().evaluate(hole, board)`` with the hand split 2 + 3, as treys expects;
* ``pokerkit``: ``StandardHighHand.lookup.get_entry(hand)``, its fastest 5-card lookup (the
  ``StandardHighHand(hand).entry`` constructor path is also reported, on fewer hands, as it is
  much slower).

Each figure is the best of several repeats (the least disturbed by other work on the machine).
Prints one JSON object. Usage: ``python bench/evaluator.py [--hands N] [--repeats R] [--seed S]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import pokerkit
import treys

from sapsam.rules.cards import DECK
from sapsam.rules.hands import evaluate, evaluate5


def best_rate(loop: Callable[[], None], count: int, repeats: int) -> float:
    """Evaluations per second of the fastest of ``repeats`` runs of ``loop`` over ``count``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        loop()
        best = min(best, time.perf_counter() - start)
    return count / best


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its JSON result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    hands = [tuple(rng.sample(range(52), 5)) for _ in range(args.hands)]
    names = [[str(DECK[card]) for card in hand] for hand in hands]

    sapsam_hands = [tuple(DECK[card] for card in hand) for hand in hands]
    treys_hands = [
        ([treys.Card.new(name) for name in hand[:2]], [treys.Card.new(name) for name in hand[2:]])
        for hand in names
    ]
    pokerkit_hands = [tuple(pokerkit.Card.parse("".join(hand))) for hand in names]
    pokerkit_hand_count = min(len(pokerkit_hands), 20_000)

    # Before timing anything: all three order the first few hundred hands the same way.
    treys_evaluator = treys.Evaluator()
    lookup = pokerkit.StandardHighHand.lookup
    sample = range(min(300, len(hands)))
    orders = [
        [evaluate5(*sapsam_hands[i]).strength for i in sample],
        [-treys_evaluator.evaluate(*treys_hands[i]) for i in sample],  # treys: lower is better
        [lookup.get_entry(pokerkit_hands[i]).index for i in sample],
    ]
    for order in orders[1:]:
        for i in sample:
            for j in sample:
                if (orders[0][i] < orders[0][j]) != (order[i] < order[j]):
                    print(f"libraries disagree on {names[i]} vs {names[j]}", file=sys.stderr)
                    return 1

    def run_evaluate5() -> None:
        for hand in sapsam_hands:
            evaluate5(*hand)

    def run_evaluate5_plain_ints() -> None:
        for hand in hands:
            evaluate5(*hand)

    def run_evaluate() -> None:
        for hand in sapsam_hands:
            evaluate(hand)

    def run_treys() -> None:
        evaluate_treys = treys_evaluator.evaluate
        for hole, board in treys_hands:
            evaluate_treys(hole, board)

    def run_pokerkit() -> None:
        get_entry = lookup.get_entry
        for hand in pokerkit_hands:
            get_entry(hand)

    def run_pokerkit_hand() -> None:
        for hand in pokerkit_hands[:pokerkit_hand_count]:
            _ = pokerkit.StandardHighHand(hand).entry

    count = len(hands)
    result: dict[str, Any] = {
        "sapsam_evaluate5_per_s": round(best_rate(run_evaluate5, count, args.repeats)),
        "sapsam_evaluate_per_s": round(best_rate(run_evaluate, count, args.repeats)),
        "sapsam_evaluate5_plain_int_per_s": round(
            best_rate(run_evaluate5_plain_ints, count, args.repeats)
        ),
        "treys_per_s": round(best_rate(run_treys, count, args.repeats)),
        "pokerkit_per_s": round(best_rate(run_pokerkit, count, args.repeats)),
        "pokerkit_hand_per_s": round(
            best_rate(run_pokerkit_hand, pokerkit_hand_count, args.repeats)
        ),
    }
    result["ratio_vs_treys"] = round(result["sapsam_evaluate5_per_s"] / result["treys_per_s"], 2)
    result["ratio_evaluate_vs_treys"] = round(
        result["sapsam_evaluate_per_s"] / result["treys_per_s"], 2
    )
    result["hands"] = count
    result["repeats"] = args.repeats
    result["python"] = sys.version.split()[0]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

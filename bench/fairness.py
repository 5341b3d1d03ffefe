"""Fair dealing throughput on one core: shuffles, deals and complete 4-seat deal verifications.

* ``shuffles_per_s``: ``shuffle_deck`` (shuffle key, 7 HMAC blocks, Fisher–Yates with rejection).
* ``deals_per_s``: ``hands_for_deal`` (shuffle, cut, deal) for 4 seats.
* ``deal_records_per_s``: ``deal_record`` (what the server computes when it deals).
* ``commitments_per_s``: ``arrangement_commitment`` for one 13-card arrangement.
* ``verifications_per_s``: ``verify_deal`` on a finished 4-seat deal: seed commitment, shuffle
  and its record, cut, deal, four reveals against their commitments, the foul check of four
  arrangements and the rescoring of six pairs. The deals are distinct, built before timing.

Each figure is the best of several repeats. Prints one JSON object. Usage:
``python bench/fairness.py [--count N] [--repeats R]``; the target is >= 5,000 verifications/s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import time
import uuid
from collections.abc import Callable, Sequence

from sapsam.fairness import (
    arrangement_commitment,
    deal_record,
    hands_for_deal,
    shuffle_deck,
)
from sapsam.fairness.example_deals import example_published_deal, simple_arrangement
from sapsam.fairness.verify import verify_deal

TABLE = uuid.UUID("be0c4000-0000-4000-8000-000000000000")


def best_rate(loop: Callable[[], None], count: int, repeats: int) -> float:
    """Operations per second of the fastest of ``repeats`` runs of ``loop`` (``count`` each)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        loop()
        best = min(best, time.perf_counter() - started)
    return count / best


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its JSON figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=5000, help="operations per timed run")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs; the best is kept")
    arguments = parser.parse_args(argv)
    count, repeats = arguments.count, arguments.repeats

    seeds = [hashlib.sha256(number.to_bytes(8, "big")).digest() for number in range(count)]
    contributions = (b"north", None, b"south entropy", None)

    def shuffles() -> None:
        for number, seed in enumerate(seeds):
            shuffle_deck(seed, contributions, TABLE, number)

    def deals() -> None:
        for number, seed in enumerate(seeds):
            hands_for_deal(seed, contributions, TABLE, number, 1 + number % 51, number % 4, 4)

    def records() -> None:
        for number, seed in enumerate(seeds):
            deal_record(seed, contributions, TABLE, number, 1 + number % 51, number % 4, 4)

    hand = hands_for_deal(seeds[0], contributions, TABLE, 0, 17, 0, 4)[0]
    arrangement = simple_arrangement(hand)
    nonce = bytes(16)

    def commitments() -> None:
        for number in range(count):
            arrangement_commitment(TABLE, number, 1, arrangement, nonce)

    published = [
        example_published_deal(
            {
                "table_id": TABLE,
                "deal_number": number,
                "seed": seeds[number],
                "contributions": contributions,
                "cut_position": 1 + number % 51,
                "dealer": number % 4,
            }
        )
        for number in range(min(count, 2000))
    ]
    if not all(verify_deal(deal).ok for deal in published):
        print("an honest deal failed verification", file=sys.stderr)
        return 1

    def verifications() -> None:
        for deal in published:
            verify_deal(deal)

    result = {
        "benchmark": "fairness",
        "python": platform.python_version(),
        "count": count,
        "repeats": repeats,
        "shuffles_per_s": round(best_rate(shuffles, count, repeats)),
        "deals_per_s": round(best_rate(deals, count, repeats)),
        "deal_records_per_s": round(best_rate(records, count, repeats)),
        "commitments_per_s": round(best_rate(commitments, count, repeats)),
        "verifications_per_s": round(best_rate(verifications, len(published), repeats)),
        "verification_seats": 4,
        "verification_target_per_s": 5000,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The solver's tables: how many rows of each size have each value, by exhaustive enumeration.

For every distinct :class:`~sapsam.rules.hands.HandValue` (keyed by its ``strength``) the table
counts the 5-card hands (of all 2,598,960) or 3-card fronts (of all 22,100) that have that value.
From these counts the chance that a row beats a uniformly random row of the same size, ties
counting half, is exact: ``(2 * below + equal) / (2 * total)``.

The counts are shipped as package data (``data/row_strength_counts.json``) so the solver never
enumerates at run time. Regenerate them after any change to the evaluator's ``strength`` numbering
with::

    python -m sapsam.rules.solver_tables

and a slow test recomputes them and checks the shipped file is equal.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from functools import cache
from importlib import resources
from itertools import combinations
from pathlib import Path
from typing import Any, Final

from sapsam.rules.hands import evaluate3, evaluate5

DATA_FILE_NAME: Final = "row_strength_counts.json"
FORMAT_VERSION: Final = 1
FIVE_CARD_TOTAL: Final = 2_598_960
THREE_CARD_TOTAL: Final = 22_100


def compute_row_counts() -> dict[str, Any]:
    """Count every 5-card hand and 3-card front by value strength (a few seconds of CPU)."""
    five: Counter[int] = Counter()
    for c1, c2, c3, c4, c5 in combinations(range(52), 5):
        five[evaluate5(c1, c2, c3, c4, c5).strength] += 1
    three: Counter[int] = Counter()
    for c1, c2, c3 in combinations(range(52), 3):
        three[evaluate3(c1, c2, c3).strength] += 1
    return {
        "format": FORMAT_VERSION,
        "five_card": {
            "total": sum(five.values()),
            "counts": {str(strength): five[strength] for strength in sorted(five)},
        },
        "three_card": {
            "total": sum(three.values()),
            "counts": {str(strength): three[strength] for strength in sorted(three)},
        },
    }


def encode(table: dict[str, Any]) -> str:
    """The file's exact text: sorted keys, no spaces, one trailing newline."""
    return json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n"


def shipped_text() -> str:
    """The shipped data file's text."""
    return resources.files("sapsam.rules").joinpath("data", DATA_FILE_NAME).read_text("utf-8")


@cache
def win_scores() -> tuple[dict[int, int], dict[int, int], int]:
    """Per-strength scores on one integer scale, and that scale's denominator.

    Returns ``(five, three, denominator)`` where ``five[strength] / denominator`` is the chance that
    a 5-card row of that strength beats a random 5-card row (ties half), and likewise ``three`` for
    fronts against random fronts. Integers keep the solver's comparisons exact.
    """
    table = json.loads(shipped_text())
    if table.get("format") != FORMAT_VERSION:
        raise ValueError(f"{DATA_FILE_NAME}: unsupported format {table.get('format')!r}")
    five_total = table["five_card"]["total"]
    three_total = table["three_card"]["total"]
    # Both sizes on a common denominator: 2 * total for each, to a common multiple.
    denominator = 2 * five_total * three_total
    five = _scores(table["five_card"]["counts"], five_total, denominator)
    three = _scores(table["three_card"]["counts"], three_total, denominator)
    return five, three, denominator


def _scores(counts: dict[str, int], total: int, denominator: int) -> dict[int, int]:
    scale = denominator // (2 * total)
    scores: dict[int, int] = {}
    below = 0
    for strength, count in sorted((int(key), value) for key, value in counts.items()):
        scores[strength] = (2 * below + count) * scale
        below += count
    if below != total:
        raise ValueError(f"{DATA_FILE_NAME}: counts sum to {below}, expected {total}")
    return scores


def main() -> int:
    """Recompute the tables and write them into the package's data folder."""
    path = Path(__file__).with_name("data") / DATA_FILE_NAME
    path.parent.mkdir(exist_ok=True)
    path.write_text(encode(compute_row_counts()), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

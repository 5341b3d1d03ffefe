"""The solver's tables: how often each row value occurs, shipped as package data.

Two tables, both keyed by :class:`~sapsam.rules.hands.HandValue` ``strength``:

* ``row_strength_counts.json``, by exhaustive enumeration: how many of all 2,598,960 five-card
  hands and of all 22,100 three-card fronts have each value. The chance that a row beats a
  uniformly random row of its size, ties counting half, is then exactly
  ``(2 * below + equal) / (2 * total)``.
* ``played_row_counts.json``, by a seeded simulation: the values of the front, middle and back that
  the default solver actually plays, over ``PLAYED_DEALS`` random 13-card hands drawn with
  ``random.Random(PLAYED_SEED).sample(range(52), 13)``. Real rows are far from random ones (a real
  back is much stronger than a random five-card hand), so this table lets the ``played_rows``
  objective aim at the rows an opponent really sets.

Regenerate both after any change to the evaluator's ``strength`` numbering or to the default
solver with::

    python -m sapsam.rules.solver_tables

Slow tests recompute both and check that the shipped files are equal.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from itertools import combinations
from pathlib import Path
from typing import Any, Final

from sapsam.rules.hands import (
    FIVE_CARD_VALUES,
    THREE_CARD_VALUES,
    HandValue,
    evaluate3,
    evaluate5,
)

DATA_FILE_NAME: Final = "row_strength_counts.json"
PLAYED_FILE_NAME: Final = "played_row_counts.json"
FORMAT_VERSION: Final = 1
FIVE_CARD_TOTAL: Final = 2_598_960
THREE_CARD_TOTAL: Final = 22_100
PLAYED_DEALS: Final = 10_000
PLAYED_SEED: Final = 20_261_130

RowScores = tuple[dict[int, int], dict[int, int], dict[int, int], int]
"""Front, middle and back scores by strength, and their common denominator."""


def compute_row_counts() -> dict[str, Any]:
    """Count every 5-card hand and 3-card front by value strength (about a second of CPU)."""
    five: Counter[int] = Counter()
    for c1, c2, c3, c4, c5 in combinations(range(52), 5):
        five[evaluate5(c1, c2, c3, c4, c5).strength] += 1
    three: Counter[int] = Counter()
    for c1, c2, c3 in combinations(range(52), 3):
        three[evaluate3(c1, c2, c3).strength] += 1
    return {
        "format": FORMAT_VERSION,
        "five_card": {"total": sum(five.values()), "counts": _keyed(five)},
        "three_card": {"total": sum(three.values()), "counts": _keyed(three)},
    }


def compute_played_row_counts(deals: int = PLAYED_DEALS, seed: int = PLAYED_SEED) -> dict[str, Any]:
    """Count the row values the default solver plays over ``deals`` seeded random hands.

    Uses the shipped exhaustive table (through the solver); about a millisecond per deal.
    """
    # The solver imports this module: import late.
    from sapsam.rules.solver import Objective, solve

    rows: tuple[Counter[int], Counter[int], Counter[int]] = (Counter(), Counter(), Counter())
    generator = random.Random(seed)
    for _ in range(deals):
        # Always the objective the table was made with (version 1's default), whatever the
        # default of the latest rules version is: the table describes random_rows' rows.
        arrangement = solve(generator.sample(range(52), 13), goal=Objective.RANDOM_ROWS)
        rows[0][evaluate3(*arrangement.front).strength] += 1
        rows[1][evaluate5(*arrangement.middle).strength] += 1
        rows[2][evaluate5(*arrangement.back).strength] += 1
    return {
        "format": FORMAT_VERSION,
        "deals": deals,
        "seed": seed,
        "front": _keyed(rows[0]),
        "middle": _keyed(rows[1]),
        "back": _keyed(rows[2]),
    }


def _keyed(counts: Counter[int]) -> dict[str, int]:
    return {str(strength): counts[strength] for strength in sorted(counts)}


def encode(table: Mapping[str, Any]) -> str:
    """A table file's exact text: sorted keys, no spaces, one trailing newline."""
    return json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n"


def shipped_text(file_name: str = DATA_FILE_NAME) -> str:
    """A shipped data file's text."""
    return resources.files("sapsam.rules").joinpath("data", file_name).read_text("utf-8")


def _load(file_name: str) -> dict[str, Any]:
    table = json.loads(shipped_text(file_name))
    if table.get("format") != FORMAT_VERSION:
        raise ValueError(f"{file_name}: unsupported format {table.get('format')!r}")
    return dict(table)


@cache
def win_scores() -> tuple[dict[int, int], dict[int, int], int]:
    """Per-strength scores against random rows, on one integer scale, and its denominator.

    Returns ``(five, three, denominator)`` where ``five[strength] / denominator`` is the chance that
    a 5-card row of that strength beats a random 5-card row (ties half), and likewise ``three`` for
    fronts against random fronts. Integers keep the solver's comparisons exact.
    """
    table = _load(DATA_FILE_NAME)
    five_total = table["five_card"]["total"]
    three_total = table["three_card"]["total"]
    # Each size's chances have denominator 2 * total: bring both to a common multiple.
    denominator = 2 * five_total * three_total
    five = _scores(table["five_card"]["counts"], five_total, denominator, FIVE_CARD_VALUES)
    three = _scores(table["three_card"]["counts"], three_total, denominator, THREE_CARD_VALUES)
    return five, three, denominator


def random_row_scores() -> RowScores:
    """Front, middle and back scores against random rows of the same size (the default goal)."""
    five, three, denominator = win_scores()
    return three, five, five, denominator


@cache
def played_row_scores() -> RowScores:
    """Front, middle and back scores against the rows the default solver plays, ties half."""
    table = _load(PLAYED_FILE_NAME)
    deals = table["deals"]
    denominator = 2 * deals
    return (
        _scores(table["front"], deals, denominator, THREE_CARD_VALUES),
        _scores(table["middle"], deals, denominator, FIVE_CARD_VALUES),
        _scores(table["back"], deals, denominator, FIVE_CARD_VALUES),
        denominator,
    )


BeatenAndTied = dict[int, tuple[int, int]]
"""Per strength: how many rows of a table it beats and how many it ties."""

RowChances = tuple[BeatenAndTied, BeatenAndTied, BeatenAndTied, int]
"""Front, middle and back: per strength, how many played rows it beats and ties; and of how many."""


@cache
def played_row_chances() -> RowChances:
    """Per strength, how many of the played rows (front, middle, back) it beats and ties, out of
    the table's ``deals``: the win, tie and loss chances ``played_score`` combines."""
    table = _load(PLAYED_FILE_NAME)
    deals = table["deals"]
    return (
        _beaten_and_tied(table["front"], deals, THREE_CARD_VALUES),
        _beaten_and_tied(table["middle"], deals, FIVE_CARD_VALUES),
        _beaten_and_tied(table["back"], deals, FIVE_CARD_VALUES),
        deals,
    )


def _beaten_and_tied(
    counts: Mapping[str, int], total: int, values: Iterable[HandValue]
) -> BeatenAndTied:
    result: BeatenAndTied = {}
    below = 0
    for value in values:
        count = counts.get(str(value.strength), 0)
        result[value.strength] = (below, count)
        below += count
    if below != total:
        raise ValueError(f"row counts sum to {below}, expected {total}")
    return result


def _scores(
    counts: Mapping[str, int], total: int, denominator: int, values: Iterable[HandValue]
) -> dict[int, int]:
    # Every value of the size gets a score, including values the table never saw (count 0).
    scale = denominator // (2 * total)
    scores: dict[int, int] = {}
    below = 0
    for value in values:
        count = counts.get(str(value.strength), 0)
        scores[value.strength] = (2 * below + count) * scale
        below += count
    if below != total:
        raise ValueError(f"row counts sum to {below}, expected {total}")
    return scores


def main() -> int:
    """Recompute both tables and write them into the package's data folder."""
    folder = Path(__file__).with_name("data")
    folder.mkdir(exist_ok=True)
    (folder / DATA_FILE_NAME).write_text(encode(compute_row_counts()), encoding="utf-8")
    print(f"wrote {folder / DATA_FILE_NAME}")
    # The played table comes from the solver, which reads the exhaustive table just written.
    win_scores.cache_clear()
    (folder / PLAYED_FILE_NAME).write_text(encode(compute_played_row_counts()), encoding="utf-8")
    print(f"wrote {folder / PLAYED_FILE_NAME}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

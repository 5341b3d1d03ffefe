"""Statistical uniformity of the shuffle: card positions and ordered first-two-card pairs.

200,000 shuffles from a fixed seed stream (seed ``i`` = SHA-256 of ``i``), so the test is
deterministic. Pearson's chi-square statistic is compared with the critical value at the stated
significance, computed by the Wilson–Hilferty approximation (scipy is not a dependency; the
approximation is checked against tabled values below: within 0.1% for the 51 and more degrees of
freedom used here, 0.6% at 10):

    chi2_crit(df, alpha) ~= df * (1 - 2/(9 df) + z_(1-alpha) * sqrt(2/(9 df)))**3

Significance: alpha = 0.001 for the whole family of per-card tests (Bonferroni: alpha/52 per
card), alpha = 0.001 for the whole 52x52 position table, alpha = 0.001 for the first-two pairs.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from statistics import NormalDist

import pytest

from sapsam.fairness import shuffle_deck
from sapsam.fairness.shuffle import draw_index, stream_words

SHUFFLES = 200_000
ALPHA = 0.001
TABLE = uuid.UUID("0b5e55ed-0000-4000-8000-000000000000")


def chi_square_critical(degrees_of_freedom: int, alpha: float) -> float:
    """The upper ``alpha`` quantile of chi-square, by the Wilson–Hilferty approximation."""
    z = NormalDist().inv_cdf(1 - alpha)
    ratio = 2 / (9 * degrees_of_freedom)
    return float(degrees_of_freedom * (1 - ratio + z * math.sqrt(ratio)) ** 3)


@pytest.mark.parametrize(
    ("degrees_of_freedom", "alpha", "tabled", "tolerance"),
    [
        (10, 0.001, 29.588, 0.006),
        (50, 0.001, 86.661, 0.001),
        (100, 0.001, 149.449, 0.001),
        (51, 0.05, 68.669, 0.001),
    ],
)
def test_the_critical_value_approximation_matches_tables(
    degrees_of_freedom: int, alpha: float, tabled: float, tolerance: float
) -> None:
    assert chi_square_critical(degrees_of_freedom, alpha) == pytest.approx(tabled, rel=tolerance)


def _count() -> tuple[list[int], list[int]]:
    positions = [0] * (52 * 52)  # index card * 52 + position
    pairs = [0] * (52 * 52)  # index first * 52 + second
    for number in range(SHUFFLES):
        seed = hashlib.sha256(number.to_bytes(8, "big")).digest()
        deck = shuffle_deck(seed, (None, None, None, None), TABLE, number)
        for position, card in enumerate(deck):
            positions[card * 52 + position] += 1
        pairs[deck[0] * 52 + deck[1]] += 1
    return positions, pairs


@pytest.fixture(scope="module")
def counts() -> tuple[list[int], list[int]]:
    return _count()


def _statistic(observed: list[int], expected: float) -> float:
    return sum((count - expected) ** 2 for count in observed) / expected


@pytest.mark.slow
def test_every_cards_position_is_uniform(counts: tuple[list[int], list[int]]) -> None:
    positions, _ = counts
    expected = SHUFFLES / 52
    per_card_critical = chi_square_critical(51, ALPHA / 52)
    worst = 0.0
    for card in range(52):
        row = positions[card * 52 : card * 52 + 52]
        assert sum(row) == SHUFFLES
        statistic = _statistic(row, expected)
        worst = max(worst, statistic)
        assert statistic < per_card_critical, f"card {card}: {statistic:.1f}"
    # And the whole table at once (both margins fixed: (52-1)**2 degrees of freedom).
    whole = _statistic(positions, expected)
    assert whole < chi_square_critical(51 * 51, ALPHA)
    # Not suspiciously good either: a table this large sits near its degrees of freedom.
    assert whole > 51 * 51 * 0.9


@pytest.mark.slow
def test_ordered_pairs_of_the_first_two_cards_are_uniform(
    counts: tuple[list[int], list[int]],
) -> None:
    _, pairs = counts
    cells = [
        pairs[first * 52 + second] for first in range(52) for second in range(52) if first != second
    ]
    assert all(pairs[card * 52 + card] == 0 for card in range(52))
    assert sum(cells) == SHUFFLES
    expected = SHUFFLES / len(cells)
    statistic = _statistic(cells, expected)
    assert statistic < chi_square_critical(len(cells) - 1, ALPHA)


def test_the_position_test_rejects_a_known_biased_shuffle() -> None:
    # The test has power: the classic mistake of swapping every position with any position
    # (n**n paths onto n! orders) fails it clearly, even with a tenth of the sample.
    samples = 20_000
    positions = [0] * (52 * 52)
    for number in range(samples):
        words = stream_words(hashlib.sha256(number.to_bytes(8, "big")).digest())
        deck = list(range(52))
        for position in range(52):
            other = draw_index(words, 52)
            deck[position], deck[other] = deck[other], deck[position]
        for position, card in enumerate(deck):
            positions[card * 52 + position] += 1
    expected = samples / 52
    worst = max(_statistic(positions[card * 52 : card * 52 + 52], expected) for card in range(52))
    assert worst > 2 * chi_square_critical(51, ALPHA / 52)

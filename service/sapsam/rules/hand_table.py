"""How the hand evaluator's table of every distinct row value is made, and its shipped form.

The evaluator (``sapsam.rules.hands``) loads ``data/hand_values.bin`` rather than building the
table at each start-up (building it took ~20 ms, the largest piece of an offline verification's
start). This module is the construction, kept as the definition of that file: every distinct value
generated shape by shape, sorted into the rule book's order (docs/rules.md §1.3-§1.4), and packed.
A unit test rebuilds the file and checks it byte for byte, and checks every loaded value against
the construction. Regenerate after a change to the order with::

    python -m sapsam.rules.hand_table

The file, little-endian, for the ``N`` = 7,917 values weakest first (the index is ``strength``):

* ``u32[N]``: the product of the value's rank primes (one prime per rank, ``2, 3, 5 .. 41`` for
  ``2 .. A``), which names its rank multiset;
* ``u8[N]``: the category (``Category``, 0..8) plus 16 for a 3-card value, plus 32 for a 5-card
  value that needs five cards of one suit (a flush or a straight flush);
* ``u16[N]``: the strengths grouped by table, in the order front (3 cards), five unsuited, five
  suited, each group ascending; the group sizes are ``FRONT_COUNT``, ``UNSUITED_COUNT`` and
  ``SUITED_COUNT``.
"""

from __future__ import annotations

import struct
import sys
from itertools import combinations
from pathlib import Path
from typing import Final, TypeAlias

from sapsam.rules.hands import (
    _DESCENDING,
    _MISSING,
    _RANK_PRIMES,
    _WHEEL,
    FIVE,
    FRONT_COUNT,
    KEY_LENGTH,
    SUITED_COUNT,
    SUITED_FLAG,
    TABLE_FILE,
    THREE_CARD_FLAG,
    UNSUITED_COUNT,
    VALUE_COUNT,
    Category,
)

# A value's source: comparison key, category, ranks, size, product of its rank primes, suited.
Entry: TypeAlias = tuple[tuple[int, ...], Category, tuple[int, ...], int, int, bool]


def entries() -> list[Entry]:
    """Every distinct value's source, sorted by comparison key (the rule book's order), generated
    category by category with its ranks already in comparison order (groups by size, then
    kickers, each high to low)."""
    primes = _RANK_PRIMES
    pads = [(_MISSING,) * (KEY_LENGTH - length) for length in range(KEY_LENGTH + 1)]
    found: list[Entry] = []
    add = found.append

    def value(
        category: Category, ranks: tuple[int, ...], size: int, product: int, suited: bool = False
    ) -> None:
        add(((category, *ranks, *pads[len(ranks)]), category, ranks, size, product, suited))

    for ranks in combinations(_DESCENDING, 5):  # five distinct ranks: suited or not
        product = 1
        for rank in ranks:
            product *= primes[rank]
        top = ranks[0] if ranks[0] - ranks[4] == 4 else FIVE if ranks == _WHEEL else None
        if top is None:
            value(Category.HIGH_CARD, ranks, 5, product)
            value(Category.FLUSH, ranks, 5, product, suited=True)
        else:
            value(Category.STRAIGHT, (top,), 5, product)
            value(Category.STRAIGHT_FLUSH, (top,), 5, product, suited=True)
    for first, second, third in combinations(_DESCENDING, 3):  # a front of three distinct ranks
        product = primes[first] * primes[second] * primes[third]
        value(Category.HIGH_CARD, (first, second, third), 3, product)
    for group in _DESCENDING:  # a pair, trips or quads of ``group``, with kickers
        pair = primes[group] ** 2
        others = tuple(rank for rank in _DESCENDING if rank != group)
        value(Category.THREE_OF_A_KIND, (group,), 3, pair * primes[group])
        for kicker in others:
            value(Category.PAIR, (group, kicker), 3, pair * primes[kicker])
            value(
                Category.FULL_HOUSE, (group, kicker), 5, pair * primes[group] * primes[kicker] ** 2
            )
            value(Category.FOUR_OF_A_KIND, (group, kicker), 5, pair * pair * primes[kicker])
            if kicker < group:  # two pair, high pair first
                low = pair * primes[kicker] ** 2
                for last in others:
                    if last != kicker:
                        value(Category.TWO_PAIR, (group, kicker, last), 5, low * primes[last])
        for first, second in combinations(others, 2):
            value(
                Category.THREE_OF_A_KIND,
                (group, first, second),
                5,
                pair * primes[group] * primes[first] * primes[second],
            )
        for first, second, third in combinations(others, 3):
            value(
                Category.PAIR,
                (group, first, second, third),
                5,
                pair * primes[first] * primes[second] * primes[third],
            )
    found.sort()  # by comparison key: no two values share one
    return found


def table_bytes() -> bytes:
    """The shipped file's bytes, made from :func:`entries` (layout in the module docstring)."""
    made = entries()
    assert len(made) == VALUE_COUNT
    kinds = bytes(
        category | (THREE_CARD_FLAG if size == 3 else SUITED_FLAG if suited else 0)
        for _, category, _, size, _, suited in made
    )
    front = [s for s, entry in enumerate(made) if entry[3] == 3]
    unsuited = [s for s, entry in enumerate(made) if entry[3] == 5 and not entry[5]]
    suited = [s for s, entry in enumerate(made) if entry[3] == 5 and entry[5]]
    assert (len(front), len(unsuited), len(suited)) == (FRONT_COUNT, UNSUITED_COUNT, SUITED_COUNT)
    return b"".join(
        [
            struct.pack(f"<{VALUE_COUNT}I", *(entry[4] for entry in made)),
            kinds,
            struct.pack(f"<{VALUE_COUNT}H", *front, *unsuited, *suited),
        ]
    )


SHIPPED: Final = Path(__file__).parent / "data" / TABLE_FILE


def main() -> None:
    SHIPPED.write_bytes(table_bytes())
    print(f"wrote {SHIPPED} ({SHIPPED.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()

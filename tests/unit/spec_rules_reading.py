"""A second reading of docs/rules.md: its rules written out again with nothing from sapsam.

Row keys (§1.4), the foul checks (§1.5), the units of every scoring method (§2.3 and §2.4, with
§2.1's defaults) and places (§1.7), as a verifier written elsewhere from the page alone would have
them.
tests/unit/test_rules_doc.py holds them to every documented example, and
tests/unit/test_fairness_vectors.py uses them to verify every published deal of
docs/fairness-vectors.json from the docs alone.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

ROWS = ("front", "middle", "back")
SPEC_RANKS = "23456789TJQKA"
SPEC_CATEGORIES = (
    "high_card",
    "pair",
    "two_pair",
    "three_of_a_kind",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
)


def spec_key(row: str) -> tuple[int, ...]:
    """§1.4's three steps: ranks by (count, rank), the category, the key padded with -1."""
    cards = row.split()
    counts = Counter(SPEC_RANKS.index(card[0]) for card in cards)
    ranks = sorted(counts, key=lambda rank: (counts[rank], rank), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    shapes = {(3,): 3, (2, 1): 1, (4, 1): 7, (3, 2): 6, (3, 1, 1): 3, (2, 2, 1): 2, (2, 1, 1, 1): 1}
    if tuple(shape) in shapes:
        category = shapes[tuple(shape)]
    elif len(cards) == 3:
        category = 0
    else:
        flush = len({card[1] for card in cards}) == 1
        top = ranks[0] if ranks[0] - ranks[4] == 4 else 3 if ranks == [12, 3, 2, 1, 0] else None
        if top is not None:
            category, ranks = (8 if flush else 4), [top]
        else:
            category = 5 if flush else 0
    return (category, *ranks, *[-1] * (5 - len(ranks)))


def spec_foul(seat: dict[str, str], dealt: str | None = None) -> str | None:
    """§1.5's checks in their order; the reason code of the first that fails."""
    rows = [seat[name].split() for name in ROWS]
    if [len(row) for row in rows] != [3, 5, 5]:
        return "WRONG_ROW_SIZE"
    cards = [card for row in rows for card in row]
    if len(set(cards)) != 13 or (dealt is not None and set(cards) != set(dealt.split())):
        return "NOT_DEALT_CARDS"
    front, middle, back = (spec_key(seat[name]) for name in ROWS)
    return "ROWS_OUT_OF_ORDER" if front > middle or middle > back else None


def spec_sign(number_: int) -> int:
    return (number_ > 0) - (number_ < 0)


def spec_units(rule_set_: dict[str, Any], rows: list[int]) -> int:
    """§2.3's table, with §2.1's defaults for the fields a rule set leaves out."""
    params = {"scoring": "per_row", "row_unit": 1, "scoop_bonus": 1, "rules_version": 2}
    params |= {"one_six_two_of_three": 1, "one_six_scoop": 6} | rule_set_
    # §2.4: version 1 knew only more_rows_won; from version 2 the default is two_rows_won.
    params.setdefault(
        "majority", "more_rows_won" if params["rules_version"] == 1 else "two_rows_won"
    )
    won, lost = rows.count(1), rows.count(-1)
    scoop = 1 if won == 3 else -1 if lost == 3 else 0
    if params["majority"] == "more_rows_won":
        majority = spec_sign(won - lost)
    else:
        majority = 1 if won >= 2 else -1 if lost >= 2 else 0
    units = {
        "per_row": won - lost,
        "two_four": won - lost + majority,
        "one_six": scoop * params["one_six_scoop"]
        if scoop
        else majority * params["one_six_two_of_three"],
        "per_row_scoop_bonus": won - lost + scoop * params["scoop_bonus"],
    }[params["scoring"]]
    return int(units * params["row_unit"])


def spec_places(totals: list[int]) -> list[int]:
    """§1.7: one more than the number of seats with a higher total."""
    return [1 + sum(other > total for other in totals) for total in totals]

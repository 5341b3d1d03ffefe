"""What each row of a finished open-face hand earns, under the rule set's royalty table.

The tables are ``sapsam.rules.royalty_tables``' (``american``, ``russian``); the rule set's
``middle_trips_royalty`` replaces the table's middle trips amount (0 or 2 as tables play it). A
dead hand earns nothing (003: «bonusurile cu mâna moartă nu contează», "a dead hand's bonuses do
not count"): that is the scorer's business, not this module's.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from sapsam.rules.hands import HandValue
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.royalty_tables import royalty_amount, royalty_table

Values = tuple[HandValue, HandValue, HandValue]


@lru_cache(maxsize=32)
def _amounts(table: str, middle_trips: int) -> Mapping[str, int]:
    return MappingProxyType(
        royalty_table(table).with_amounts({"middle_three_of_a_kind": middle_trips})
    )


def royalty_amounts(rules: OpenFaceRules) -> Mapping[str, int]:
    """The rule set's amounts by royalty key: its table with its middle trips amount."""
    return _amounts(rules.royalty_table, rules.middle_trips_royalty)


def row_royalties(rules: OpenFaceRules, values: Values) -> tuple[int, int, int]:
    """The royalty of the front, the middle and the back with these values."""
    amounts = royalty_amounts(rules)
    return (
        royalty_amount(amounts, 0, values[0]),
        royalty_amount(amounts, 1, values[1]),
        royalty_amount(amounts, 2, values[2]),
    )

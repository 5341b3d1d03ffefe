"""Per-pair stakes (docs/rules.md §2.10; rules version 6 on): a unit's value for each pair of seats.

Source 002: «este posibil ca diferiți jucători să joace pentru diferite mize. De exemplu, A și B ar
putea juca cu 100 de dolari pe unitate față de celălalt, în timp ce toate celelalte perechi de
jucători joacă pentru 10 USD pe unitate» — "different players may play for different stakes: A and
B could play for $100 a unit against each other while every other pair plays for $10 a unit".

A rule set's ``pair_units`` maps ``"a-b"`` (seat numbers from 0, a < b) to the value of one unit
between those two seats; a pair not listed plays for ``row_unit``. A pair's units are scored as
always; its amount is units times its own unit value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from sapsam.quoting import quote_prefix

MAX_SEAT_NUMBER: Final = 3
"""The highest seat number a key may name (four seats at most)."""

_PAIR_KEY: Final = re.compile(r"([0-9])-([0-9])")


def pair_key(seat_a: int, seat_b: int) -> str:
    """The ``pair_units`` key of two seats, lower seat first."""
    return f"{min(seat_a, seat_b)}-{max(seat_a, seat_b)}"


def check_pair_units(units: object, maximum: int | None) -> dict[str, int]:
    """``units`` as a plain dict, checked: keys ``"a-b"`` with 0 <= a < b <= 3, values integers
    from 1 to ``maximum`` (unbounded when ``None``). Raises ``ValueError`` naming the bad key."""
    if not isinstance(units, Mapping):
        raise ValueError(
            "rule set key 'pair_units' must be an object of \"a-b\": unit value, "
            f"got {type(units).__name__}"
        )
    checked: dict[str, int] = {}
    for key, value in units.items():
        match = _PAIR_KEY.fullmatch(key) if isinstance(key, str) else None
        if match is None or not int(match[1]) < int(match[2]) <= MAX_SEAT_NUMBER:
            raise ValueError(
                f"rule set key 'pair_units': {quote_prefix(key)} is not a pair of seats "
                f'("a-b", 0 <= a < b <= {MAX_SEAT_NUMBER})'
            )
        bad_type = not isinstance(value, int) or isinstance(value, bool)
        if bad_type or value < 1 or (maximum is not None and value > maximum):
            bounds = ">= 1" if maximum is None else f"in 1..{maximum}"
            raise ValueError(
                f"rule set key 'pair_units': {key!r} must be an integer {bounds}, "
                f"got {quote_prefix(value)}"
            )
        checked[key] = value
    return checked

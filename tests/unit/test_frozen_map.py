"""FrozenMap.get answers as Mapping.get does, without a KeyError for a key not held."""

from __future__ import annotations

from collections.abc import Mapping

from sapsam.rules.frozen_map import FrozenMap


def test_get_answers_as_a_mapping_does() -> None:
    stakes = FrozenMap({"0-1": 3, "1-2": 0})
    for key in ("0-1", "1-2", "0-2", ""):
        assert stakes.get(key) == Mapping.get(stakes, key) == {"0-1": 3, "1-2": 0}.get(key)
        assert stakes.get(key, 7) == Mapping.get(stakes, key, 7)
    assert stakes.get("1-2", 7) == 0  # a value held that is falsy is the value
    assert FrozenMap().get("0-1", 1) == 1


def test_get_does_not_raise_for_a_key_not_held() -> None:
    # Mapping.get raised and caught a KeyError (a rule set's stakes look-up, per pair scored).
    class Counting(FrozenMap[int]):
        misses = 0

        def __getitem__(self, key: str) -> int:
            Counting.misses += 1
            return super().__getitem__(key)

    Counting({"0-1": 3}).get("0-2", 1)
    assert Counting.misses == 0

"""from_fields makes the record its constructor makes, still frozen."""

from __future__ import annotations

import dataclasses

import pytest

from sapsam.frozen import from_fields


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: tuple[int, ...]


def test_a_record_from_its_fields_equals_the_constructed_one() -> None:
    made = from_fields(Point, {"x": 1, "y": (2, 3)})
    assert made == Point(1, (2, 3)) and hash(made) == hash(Point(1, (2, 3)))
    assert repr(made) == repr(Point(1, (2, 3))) and type(made) is Point
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.x = 2  # type: ignore[misc]

"""Events: stable names, JSON-native content, no floats, and upcasting of old schema versions."""

from __future__ import annotations

import dataclasses
import enum
import json
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import pytest
from test_table import ready_table

from sapsam.domain.event_codec import DEFAULT_CODEC, EventCodec, UnknownEventError
from sapsam.domain.events import EVENT_TYPES, DealScored, Event, PairScored, PlayerSeated, SeatRows


def test_every_event_type_has_a_unique_past_tense_name() -> None:
    names = [event_type.TYPE for event_type in EVENT_TYPES]
    assert len(set(names)) == len(names)
    assert all(
        name == event_type.__name__ for name, event_type in zip(names, EVENT_TYPES, strict=True)
    )


def test_nested_records_round_trip_through_json_text() -> None:
    event = DealScored(
        deal_number=3,
        pairs=(PairScored(seat_a=0, seat_b=1, rows=(1, -1, 1), delta=1),),
        totals=(1, -1),
        fouls=(False, False),
        arrangements=(
            "2s 2h Ad|7c 7d 9s 5h 3d|Tc Jc Qc Kc Ac",
            "3s 3h 4d|6c 6d 8s 5c 2d|9c 9d Th Ts As",
        ),
        series_totals=(4, -4),
        solver_arrangements=(
            None,
            SeatRows(
                front=("3s", "3h", "4d"),
                middle=("6c", "6d", "8s", "5c", "2d"),
                back=("9c", "9d", "Th", "Ts", "As"),
            ),
        ),
    )
    type_name, version, data = DEFAULT_CODEC.encode(event)
    assert version == 2
    assert data["solver_arrangements"] == [
        None,
        {"front": ["3s", "3h", "4d"], "middle": ["6c", "6d", "8s", "5c", "2d"],
         "back": ["9c", "9d", "Th", "Ts", "As"]},
    ]  # fmt: skip
    text = json.dumps(data, sort_keys=True)
    assert DEFAULT_CODEC.decode(type_name, version, json.loads(text)) == event


def test_deal_scored_of_schema_1_reads_as_not_recording_solver_arrangements() -> None:
    data = {
        "deal_number": 1,
        "pairs": [{"seat_a": 0, "seat_b": 1, "rows": [0, 0, 0], "delta": 0}],
        "totals": [0, 0],
        "fouls": [True, True],
        "arrangements": [None, None],
        "series_totals": [0, 0],
    }
    event = DEFAULT_CODEC.decode("DealScored", 1, data)
    assert isinstance(event, DealScored) and event.solver_arrangements is None
    assert "solver_arrangements" not in data  # the stored data is never rewritten


def test_floats_are_refused() -> None:
    @dataclass(frozen=True)
    class Floaty(Event):
        TYPE: ClassVar[str] = "Floaty"
        value: Any

    with pytest.raises(TypeError):
        Floaty(value=0.5).to_data()


def test_old_schema_versions_are_upcast_on_read_and_never_rewritten() -> None:
    @dataclass(frozen=True)
    class SeatRenamed(Event):
        # Version 2 renamed ``player`` to ``player_id`` and added ``display_name``.
        TYPE: ClassVar[str] = "SeatRenamed"
        SCHEMA_VERSION: ClassVar[int] = 2
        player_id: str
        display_name: str

    codec = EventCodec((SeatRenamed,))
    stored_v1 = {"player": "ann"}
    with pytest.raises(UnknownEventError, match="no upcaster"):
        codec.decode("SeatRenamed", 1, stored_v1)
    codec.register_upcaster(
        "SeatRenamed", 1, lambda data: {"player_id": data["player"], "display_name": ""}
    )
    assert codec.decode("SeatRenamed", 1, stored_v1) == SeatRenamed("ann", "")
    assert stored_v1 == {"player": "ann"}  # the stored data itself is untouched
    with pytest.raises(UnknownEventError, match="newer"):
        codec.decode("SeatRenamed", 3, {"player_id": "ann", "display_name": ""})


def test_unknown_types_are_refused() -> None:
    with pytest.raises(UnknownEventError):
        DEFAULT_CODEC.decode("NoSuchEvent", 1, {})
    assert DEFAULT_CODEC.decode("PlayerSeated", 1, {"seat": 1, "player_id": "p"}) == PlayerSeated(
        seat=1, player_id="p"
    )


def _general_rules(value: Any) -> Any:
    """What ``to_data`` makes of a value, by the general rules alone (the reference its fast
    paths for exact JSON types are held to)."""
    if isinstance(value, float):
        raise TypeError("events carry no floats")
    if isinstance(value, tuple | list):
        return [_general_rules(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _general_rules(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: _general_rules(getattr(value, field.name))
            for field in dataclasses.fields(value)
        }
    return value


class _Seat(enum.IntEnum):
    NORTH = 0


class _Name(str):
    pass


class _Pair(NamedTuple):
    first: int
    second: tuple[int, ...]


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        7,
        "7c",
        (1, "a", None, False),
        [(1, 2), [3, (4,)], {"k": (5,)}],
        {"rows": (1, -1), "nested": {"x": [None, (True,)]}},
        types.MappingProxyType({"a": (1, 2), "b": {"c": (3,)}}),
        _Seat.NORTH,
        (_Seat.NORTH, _Name("x")),
        _Pair(1, (2, 3)),
        PairScored(seat_a=0, seat_b=1, rows=(1, -1, 1), delta=1),
        (None, SeatRows(front=("3s",), middle=("6c",), back=("9c",))),
    ],
)
def test_encoding_follows_the_general_rules_for_every_kind_of_value(value: Any) -> None:
    @dataclass(frozen=True)
    class Holder(Event):
        TYPE: ClassVar[str] = "Holder"
        value: Any
        seat: int = 2

    data = Holder(value=value).to_data()
    assert data == {"value": _general_rules(value), "seat": 2}
    # Same types all the way down (a list stays a list, a subclass is kept as it is).
    assert repr(data["value"]) == repr(_general_rules(value))


@pytest.mark.parametrize("value", [(1, 0.5), [[0.5]], {"a": (0.5,)}, PairScored(0, 1, (0.5,), 0)])
def test_floats_are_refused_wherever_they_are_nested(value: Any) -> None:
    @dataclass(frozen=True)
    class Floaty(Event):
        TYPE: ClassVar[str] = "Floaty"
        value: Any

    with pytest.raises(TypeError):
        Floaty(value=value).to_data()


def test_every_event_of_a_series_encodes_as_the_general_rules_say() -> None:
    events = _a_played_series()
    assert {type(event) for event in events} >= {DealScored, PlayerSeated}
    for event in events:
        reference = {
            field.name: _general_rules(getattr(event, field.name))
            for field in dataclasses.fields(event)
        }
        assert DEFAULT_CODEC.encode(event)[2] == reference


def _a_played_series() -> list[Event]:
    table = ready_table(4)
    table.play_deal()
    table.play_deal()
    return table.events

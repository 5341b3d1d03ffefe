"""Events: stable names, JSON-native content, no floats, and upcasting of old schema versions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from sapsam.domain.events import (
    DEFAULT_CODEC,
    EVENT_TYPES,
    DealScored,
    Event,
    EventCodec,
    PairScored,
    PlayerSeated,
    SeatRows,
    UnknownEventError,
)


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

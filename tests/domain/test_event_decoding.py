"""The codec's decode builds each event exactly as the plain field-by-field constructor call does.

Replays decode every event, so decode is written for speed; these tests hold it to the obvious
algorithm: upcast, take ``data[name]`` for each field, turn lists into tuples at any depth, build
nested records through their constructors, call the class.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from sapsam.audit.sample_series import series_events
from sapsam.domain.event_codec import DEFAULT_CODEC, EventCodec, _made_by_fields
from sapsam.domain.events import (
    EVENT_TYPES,
    DealScored,
    Event,
    PairScored,
    PlayerSeated,
    SeatStanding,
    SeriesCompleted,
    TableCreated,
)
from sapsam.rules.presets import DEFAULT_RULE_SET

NESTED_RECORDS: dict[tuple[type[Event], str], type[Any]] = {
    (DealScored, "pairs"): PairScored,
    (SeriesCompleted, "standings"): SeatStanding,
}


def plain_value(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(plain_value(item) for item in value)
    if isinstance(value, dict):
        return {key: plain_value(item) for key, item in value.items()}
    return value


def plainly_decoded(type_name: str, data: Mapping[str, Any]) -> Event:
    """The reference: current-version data decoded field by field through the constructors."""
    [event_type] = [candidate for candidate in EVENT_TYPES if type_name == candidate.TYPE]
    values: dict[str, Any] = {}
    for field in dataclasses.fields(event_type):
        value = data[field.name]
        record = NESTED_RECORDS.get((event_type, field.name))
        if record is not None:
            values[field.name] = tuple(record(**plain_value(item)) for item in value)
        else:
            values[field.name] = plain_value(value)
    return event_type(**values)


def test_every_event_of_a_series_decodes_as_the_plain_constructor_call_builds_it() -> None:
    events = series_events(uuid.UUID(int=7), 4, DEFAULT_RULE_SET.series_length)
    assert {type(event) for event in events} >= {TableCreated, DealScored, SeriesCompleted}
    for original in events:
        type_name, version, data = DEFAULT_CODEC.encode(original)
        stored = json.loads(json.dumps(data))  # as the log holds it: lists, dicts, scalars
        decoded = DEFAULT_CODEC.decode(type_name, version, stored)
        reference = plainly_decoded(type_name, stored)
        assert decoded == original == reference
        assert type(decoded) is type(original)
        assert repr(decoded) == repr(reference)
        assert vars(decoded) == vars(reference)
        for field in dataclasses.fields(decoded):
            assert type(getattr(decoded, field.name)) is type(getattr(reference, field.name))
        with pytest.raises(dataclasses.FrozenInstanceError):
            decoded.TYPE = "x"  # type: ignore[misc]


def test_a_missing_field_is_named_and_extra_keys_are_ignored() -> None:
    with pytest.raises(KeyError, match="player_id"):
        DEFAULT_CODEC.decode("PlayerSeated", 1, {"seat": 1})
    with pytest.raises(KeyError, match="seat"):
        DEFAULT_CODEC.decode("PlayerSeated", 1, {"player_id": "p"})
    assert DEFAULT_CODEC.decode(
        "PlayerSeated", 1, {"seat": 1, "player_id": "p", "later": 2}
    ) == PlayerSeated(seat=1, player_id="p")


def test_lists_become_tuples_and_objects_stay_mappings_wherever_they_appear() -> None:
    # A list where the class expects a scalar is still turned into a tuple, never passed as a list.
    decoded = DEFAULT_CODEC.decode(
        "PlayerSeated", 1, {"seat": [1, [2, {"a": [3]}]], "player_id": {"k": [True, None]}}
    )
    assert decoded.seat == (1, (2, {"a": (3,)}))  # type: ignore[comparison-overlap]
    assert decoded.player_id == {"k": (True, None)}  # type: ignore[comparison-overlap]


def test_nested_records_are_built_strictly() -> None:
    data = {
        "deal_number": 1,
        "pairs": [{"seat_a": 0, "seat_b": 1, "rows": [1, 0, -1], "delta": 1, "extra": 0}],
        "totals": [1, -1],
        "fouls": [False, False],
        "arrangements": [None, None],
        "series_totals": [1, -1],
    }
    with pytest.raises(TypeError, match="extra"):
        DEFAULT_CODEC.decode("DealScored", 1, data)


def test_an_old_table_created_is_upcast() -> None:
    data = {
        "table_id": str(uuid.UUID(int=1)),
        "rule_set": DEFAULT_RULE_SET.to_dict(),
        "seat_count": 4,
        "lot_commitment": "00" * 32,
        "created_by": "ann",
    }
    decoded = DEFAULT_CODEC.decode("TableCreated", 1, data)
    assert isinstance(decoded, TableCreated)
    assert decoded.after_series == "close"
    assert "after_series" not in data


def test_an_event_type_with_post_init_or_one_field_is_built_through_its_constructor() -> None:
    checked: list[str] = []

    @dataclass(frozen=True)
    class Checked(Event):
        TYPE: ClassVar[str] = "Checked"
        name: str

        def __post_init__(self) -> None:
            checked.append(self.name)
            if not self.name:
                raise ValueError("a name is needed")

    codec = EventCodec((Checked,))
    assert codec.decode("Checked", 1, {"name": "x"}) == Checked("x")
    assert checked == ["x", "x"]
    with pytest.raises(ValueError, match="a name is needed"):
        codec.decode("Checked", 1, {"name": ""})


def test_event_types_are_filled_in_one_step_and_odd_types_go_through_their_constructor() -> None:
    assert all(_made_by_fields(event_type) for event_type in EVENT_TYPES)

    @dataclass(frozen=True)
    class WithInitVar(Event):
        TYPE: ClassVar[str] = "WithInitVar"
        name: str
        scale: dataclasses.InitVar[int] = 1

    @dataclass(frozen=True, slots=True)
    class WithSlots(Event):
        TYPE: ClassVar[str] = "WithSlots"
        name: str

    @dataclass(frozen=True)
    class OwnInit(Event):
        TYPE: ClassVar[str] = "OwnInit"
        name: str

        def __init__(self, name: str) -> None:
            object.__setattr__(self, "name", name.upper())

    for odd in (WithInitVar, WithSlots, OwnInit):
        assert not _made_by_fields(odd)
        decoded = EventCodec((odd,)).decode(odd.TYPE, 1, {"name": "x"})
        assert decoded == odd("x")  # type: ignore[call-arg]
        assert type(decoded) is odd
    assert EventCodec((OwnInit,)).decode("OwnInit", 1, {"name": "x"}).name == "X"  # type: ignore[attr-defined]

"""The codec's one-call decoding (``sapsam.domain.typed_decoding``) gives exactly what its
field-by-field walk gives: on every event a sample closed series, a closed deal with naturals
or surrender and open-face and Pineapple sets record, and on data the walk reads oddly (a value
of another type, a field missing, an unknown key in a nested record), where it leaves the walk
to decide."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Mapping
from typing import Any

import pytest
from open_face_deals import fantasyland_table, open_face_table

from sapsam.audit.sample_series import series_events
from sapsam.domain.event_codec import DEFAULT_CODEC, FAMILY_EVENT_TYPES, EventCodec
from sapsam.domain.events import EVENT_TYPES, Event
from sapsam.domain.open_face.table_state import OpenFaceTablePhase
from sapsam.domain.typed_decoding import typed_decoder
from sapsam.rules.presets import DEFAULT_RULE_SET

WALK = EventCodec((*EVENT_TYPES, *FAMILY_EVENT_TYPES), one_call=False)


def _same(type_name: str, version: int, data: Mapping[str, Any]) -> None:
    """The default codec and the walk agree: the same event (equal, same types at every field),
    or the same error."""
    try:
        walked: Event | Exception = WALK.decode(type_name, version, data)
    except (KeyError, TypeError, ValueError) as error:
        walked = error
    try:
        decoded: Event | Exception = DEFAULT_CODEC.decode(type_name, version, data)
    except (KeyError, TypeError, ValueError) as error:
        decoded = error
    assert type(decoded) is type(walked)
    if isinstance(walked, Exception):
        assert str(decoded) == str(walked)
        return
    assert decoded == walked
    assert repr(decoded) == repr(walked)
    for field in dataclasses.fields(walked):
        ours, theirs = getattr(decoded, field.name), getattr(walked, field.name)
        assert type(ours) is type(theirs), field.name
        if isinstance(theirs, tuple):
            assert [type(item) for item in ours] == [type(item) for item in theirs]


def _stored(event: Event) -> tuple[str, int, dict[str, Any]]:
    type_name, version, data = DEFAULT_CODEC.encode(event)
    return type_name, version, json.loads(json.dumps(data))


def test_every_event_of_sample_series_decodes_as_the_walk_does() -> None:
    events = [
        *series_events(uuid.UUID(int=7), 4, DEFAULT_RULE_SET.series_length),
        *series_events(uuid.UUID(int=8), 2, DEFAULT_RULE_SET.series_length),
    ]
    for event in events:
        _same(*_stored(event))


@pytest.mark.parametrize(("preset", "seats"), [("ofc_classic", 2), ("pineapple", 3)])
def test_open_face_and_pineapple_events_decode_as_the_walk_does(preset: str, seats: int) -> None:
    table = fantasyland_table() if preset == "ofc_classic" else open_face_table(preset, seats)
    while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
        table.start_deal()
        table.play_deal()
    kinds = {type(event).__name__ for event in table.events}
    assert {"CardsPlaced", "SeriesCompleted"} <= kinds
    for event in table.events:
        _same(*_stored(event))


SCORED = {
    "deal_number": 1,
    "pairs": [{"seat_a": 0, "seat_b": 1, "rows": [1, 0, -1], "delta": 1}],
    "totals": [1, -1],
    "fouls": [False, False],
    "arrangements": [None, "2c 3c 4c|5c 6c 7c 8c 9c|Tc Jc Qc Kc Ac"],
    "series_totals": [1, -1],
    "solver_arrangements": [None, {"front": ["2c"], "middle": [], "back": ["Ah"]}],
}


@pytest.mark.parametrize(
    ("type_name", "data"),
    [
        ("DealScored", SCORED),
        ("DealScored", {**SCORED, "solver_arrangements": None}),
        # An unknown key in a nested record: the walk's constructor refuses it.
        ("DealScored", {**SCORED, "pairs": [{**SCORED["pairs"][0], "extra": 0}]}),  # type: ignore[dict-item]
        ("DealScored", {**SCORED, "solver_arrangements": [{"front": [], "middle": []}]}),
        ("DealScored", {**SCORED, "pairs": [None]}),
        ("DealScored", {**SCORED, "pairs": [[0, 1, [1, 0, -1], 1]]}),
        ("DealScored", {**SCORED, "totals": [True, -1]}),
        ("DealScored", {**SCORED, "fouls": [0, 1]}),
        ("DealScored", {**SCORED, "unknown": [1, [2]]}),
        # A field with a default that is missing: the walk names it.
        ("ArrangementCommitted", {"deal_number": 1, "seat": 0, "commitment": "00"}),
        (
            "ArrangementCommitted",
            {"deal_number": 1, "seat": 0, "commitment": "00", "scheme": 2, "player_key": None},
        ),
        ("PlayerSeated", {"seat": True, "player_id": "p"}),
        ("PlayerSeated", {"seat": 2**80, "player_id": "p"}),
        ("PlayerSeated", {"seat": [1, [2, {"a": [3]}]], "player_id": {"k": [True, None]}}),
        ("PlayerSeated", {"seat": None, "player_id": "p"}),
        ("PlayerSeated", {"seat": 1}),
        ("ArrangementRevealed", {"deal_number": 1, "seat": 0, "front": "2c 3c 4c"}),
    ],
)
def test_odd_data_is_read_as_the_walk_reads_it(type_name: str, data: dict[str, Any]) -> None:
    [event_type] = [t for t in (*EVENT_TYPES, *FAMILY_EVENT_TYPES) if type_name == t.TYPE]
    _same(type_name, event_type.SCHEMA_VERSION, data)


def test_the_deal_events_take_one_call_and_a_type_with_other_kinds_takes_the_walk() -> None:
    from sapsam.domain.events import (
        ArrangementRevealed,
        DealScored,
        PairScored,
        SeatRows,
        TableCreated,
    )

    nested = {"pairs": PairScored, "solver_arrangements": SeatRows}
    assert typed_decoder(DealScored, nested) is not None
    assert typed_decoder(DealScored, {}) is None  # its pairs are records
    assert typed_decoder(ArrangementRevealed, {}) is not None
    assert typed_decoder(TableCreated, {}) is None  # its rule set is a JSON object

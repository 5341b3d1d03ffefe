"""The hash chain's definition, pinned by hand-written bytes, and what verification reports."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sapsam.log.canonical_json import CanonicalJsonError, canonical_json
from sapsam.log.chain import (
    GENESIS_HASH,
    canonical_event_bytes,
    event_hash,
    verify_stream_chain,
)
from sapsam.log.records import NewEvent, RecordedEvent
from sapsam.store.processed_requests import request_fingerprint


def make_stream(count: int, stream_id: str = "table-x") -> list[RecordedEvent]:
    events: list[RecordedEvent] = []
    previous = GENESIS_HASH
    for version in range(1, count + 1):
        draft = RecordedEvent(
            position=version * 10,
            stream_id=stream_id,
            version=version,
            type="Happened",
            schema_version=1,
            data={"n": version, "name": "é"},
            metadata={"request_id": f"r{version}"},
            hash=b"",
        )
        event = dataclasses.replace(draft, hash=event_hash(previous, draft))
        events.append(event)
        previous = event.hash
    return events


def test_canonical_json_sorts_keys_drops_spaces_and_keeps_unicode() -> None:
    assert canonical_json({"b": [1, True, None], "a": "♠é"}) == (
        '{"a":"♠é","b":[1,true,null]}'.encode()
    )


class _Text(str):
    pass


class _Number(int):
    pass


class _Mapping(dict[str, Any]):
    pass


class _SameKey(str):
    """A str subclass whose instances are all unequal: two can spell the same key."""

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


_REFUSED = [
    {_SameKey("a"): 1, _SameKey("a"): 2},
    1.5,
    {"x": float("nan")},
    {1: "a"},
    "a\x00b",
    {"s": {1, 2}},
    [1, [2, 3.0]],
    ("a", 1.5),
    {"a": {"b": {"c": -0.0}}},
    {"a": ["x", "y\x00"]},
    {"a\x00": 1},
    {"a": _Mapping(b=[1, {"c": 2.5}])},
    [_Text("x\x00")],
    2**53,
    {"a": [-(2**53)]},
    {"a": [None, True, b"bytes"]},
]


@pytest.mark.parametrize("value", _REFUSED)
def test_values_without_a_canonical_form_are_refused(value: object) -> None:
    with pytest.raises(CanonicalJsonError):
        canonical_json(value)  # type: ignore[arg-type]


def _has_a_problem(value: object) -> bool:
    """The plain recursive statement of what ``canonical_json`` refuses."""
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, int):  # before float: True is an int, never a float
        return not -(2**53 - 1) <= value <= 2**53 - 1  # RFC 8785: what a double holds exactly
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(
            type(key) is not str or "\x00" in key or _has_a_problem(member)
            for key, member in value.items()
        )
    if isinstance(value, list | tuple):
        return any(_has_a_problem(member) for member in value)
    return True  # a float, a set, bytes, anything else


_walked_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers().map(_Number),
    st.text(alphabet="ab\x00", max_size=3),
    st.text(alphabet="ab\x00", max_size=3).map(_Text),
    st.floats(allow_nan=True),
    st.just(b"x"),
    st.just(frozenset()),
)
_walked_keys = st.one_of(
    st.text(alphabet="ab\x00", max_size=3),
    st.text(alphabet="ab", max_size=3).map(_Text),
    st.integers(),
)
_walked_values = st.recursive(
    _walked_scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=4).map(tuple)
        | st.dictionaries(_walked_keys, children, max_size=4)
        | st.dictionaries(_walked_keys, children, max_size=4).map(_Mapping)
    ),
    max_leaves=20,
)


@given(_walked_values)
def test_canonical_json_refuses_exactly_what_the_recursive_statement_refuses(value: Any) -> None:
    try:
        canonical_json(value)
    except CanonicalJsonError:
        assert _has_a_problem(value)
    else:
        assert not _has_a_problem(value)


def test_the_hash_is_sha256_of_the_previous_hash_and_the_canonical_event() -> None:
    expected_bytes = (
        b'{"data":{"seats":4},"metadata":{"actor":"ann","request_id":"r1"},'
        b'"schema_version":1,"stream":"table-1","type":"TableCreated","version":1}'
    )
    produced = canonical_event_bytes(
        "table-1", 1, "TableCreated", 1, {"seats": 4}, {"request_id": "r1", "actor": "ann"}
    )
    assert produced == expected_bytes
    event = RecordedEvent(
        1, "table-1", 1, "TableCreated", 1, {"seats": 4}, {"request_id": "r1", "actor": "ann"}, b""
    )
    assert event_hash(GENESIS_HASH, event) == hashlib.sha256(bytes(32) + expected_bytes).digest()


def test_an_untouched_stream_is_intact() -> None:
    report = verify_stream_chain(make_stream(5))
    assert report.intact and report.events_checked == 5
    assert report.last_hash == make_stream(5)[-1].hash


def test_an_edited_event_is_reported_at_its_version() -> None:
    events = make_stream(5)
    events[2] = dataclasses.replace(events[2], data={"n": 99, "name": "é"})
    report = verify_stream_chain(events)
    assert report.first_broken_version == 3
    assert [problem.version for problem in report.problems] == [3]


def test_reordered_missing_or_foreign_events_are_reported() -> None:
    events = make_stream(4)
    assert verify_stream_chain([events[0], events[2], events[3]]).first_broken_version == 3
    assert verify_stream_chain([events[1], events[0]]).first_broken_version == 2
    foreign = make_stream(2, "table-y")[1]
    assert not verify_stream_chain([events[0], foreign]).intact


def test_a_tail_verifies_from_the_previous_hash_and_version() -> None:
    events = make_stream(6)
    assert verify_stream_chain(events[3:], events[2].hash, 3).intact
    assert not verify_stream_chain(events[3:]).intact


def test_an_empty_stream_is_trivially_intact() -> None:
    assert verify_stream_chain([]).intact


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53 - 1), 2**53 - 1)
    | st.text().filter(lambda t: "\x00" not in t),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text().filter(lambda t: "\x00" not in t), children, max_size=4)
    ),
    max_leaves=12,
)


@given(
    stream=st.text(min_size=1).filter(lambda t: "\x00" not in t),
    version=st.integers(1, 2**31 - 1),
    event_type=st.text(min_size=1).filter(lambda t: "\x00" not in t),
    schema_version=st.integers(1, 1000),
    data=st.dictionaries(st.text().filter(lambda t: "\x00" not in t), json_values, max_size=5),
    metadata=st.dictionaries(st.text().filter(lambda t: "\x00" not in t), json_values, max_size=3),
)
def test_the_assembled_event_bytes_are_the_canonical_json_of_the_whole_event(
    stream: str,
    version: int,
    event_type: str,
    schema_version: int,
    data: dict[str, Any],
    metadata: dict[str, Any],
) -> None:
    whole = {
        "data": data,
        "metadata": metadata,
        "schema_version": schema_version,
        "stream": stream,
        "type": event_type,
        "version": version,
    }
    assert canonical_event_bytes(
        stream, version, event_type, schema_version, data, metadata
    ) == canonical_json(whole)


@given(
    stream=st.text(min_size=1).filter(lambda t: "\x00" not in t),
    batch=st.lists(
        st.tuples(
            st.text(min_size=1).filter(lambda t: "\x00" not in t),
            st.dictionaries(st.text().filter(lambda t: "\x00" not in t), json_values, max_size=4),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_the_request_fingerprint_is_the_hash_of_the_canonical_request(
    stream: str, batch: list[tuple[str, dict[str, Any]]]
) -> None:
    events = [NewEvent(event_type, data) for event_type, data in batch]
    expected = hashlib.sha256(
        canonical_json(
            {
                "events": [
                    {"data": e.data, "schema_version": e.schema_version, "type": e.type}
                    for e in events
                ],
                "stream": stream,
            }
        )
    ).digest()
    assert request_fingerprint(stream, events) == expected

"""A global read decodes each event exactly as a row-by-row read with psycopg's own loaders does.

``read_all`` decodes a page's jsonb texts in one go and shares metadata within an append (see
``sapsam.store.reads``); these tests hold it to the plain, obvious decoding of the same rows.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sapsam.log.records import NewEvent, RecordedEvent, recorded_event
from sapsam.store.appends import append
from sapsam.store.reads import decode_json, iterate_all, read_all, read_stream

AWKWARD_DATA = [
    {"text": 'comma, bracket ] brace } quote " backslash \\ tab \t', "n": 0},
    {"unicode": "♠ ♥ é 漢字 \u2028 \U0001f0a1", "empty": "", "nothing": None},
    {"nested": [[1, [2, {"deep": [True, False, None]}]], {}], "list": []},
    {"big": 2**53 - 1, "negative": -(2**40), "zero": 0, "key with space": "v"},
    {},
    {"newline": "line\nline", "control": "\u0001\u001f", "slash": "/"},
]


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as opened:
        yield opened


async def plainly_read(connection: psycopg.AsyncConnection[Any]) -> list[RecordedEvent]:
    """Every event, one row at a time, through RecordedEvent's constructor and json.loads."""
    rows = await (
        await connection.execute(
            "SELECT position, stream_id, version, type, schema_version, data::text,"
            " metadata::text, hash FROM events ORDER BY position"
        )
    ).fetchall()
    return [
        RecordedEvent(
            position,
            stream_id,
            version,
            type_,
            schema_version,
            json.loads(data),
            json.loads(metadata),
            hash_,
        )
        for position, stream_id, version, type_, schema_version, data, metadata, hash_ in rows
    ]


async def test_read_all_decodes_awkward_json_exactly_as_a_plain_row_by_row_read(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    await append(connection, "s1", 0, [NewEvent("A", data) for data in AWKWARD_DATA[:3]], "r1")
    await append(
        connection,
        "s2",
        0,
        [NewEvent("B", data, schema_version=3) for data in AWKWARD_DATA[3:]],
        "r2",
        actor='ünïcode " actor',
        metadata={"extra": ["x", {"y": None}]},
    )
    expected = await plainly_read(connection)
    assert len(expected) == len(AWKWARD_DATA)
    everything = await read_all(connection)
    assert everything == expected
    assert [event.data for event in everything] == AWKWARD_DATA
    # Field by field, with the exact types: a bytes hash, plain ints and dicts.
    for got, wanted in zip(everything, expected, strict=True):
        for field in dataclasses.fields(RecordedEvent):
            value = getattr(got, field.name)
            assert value == getattr(wanted, field.name)
            assert type(value) is type(getattr(wanted, field.name))
    assert await read_all(connection, 0, stream_id="s2") == expected[3:]
    assert await read_all(connection, everything[1].position, limit=2) == expected[2:4]
    assert [event async for event in iterate_all(connection, batch_size=4)] == expected
    assert await read_stream(connection, "s1") == expected[:3]


async def test_events_from_a_global_read_are_frozen_and_hashable_like_constructed_ones(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    await append(connection, "s", 0, [NewEvent("A", {"n": 1})], "r1")
    [event] = await read_all(connection)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.position = 7  # type: ignore[misc]
    rebuilt = RecordedEvent(
        **{field.name: getattr(event, field.name) for field in dataclasses.fields(event)}
    )
    assert rebuilt == event
    assert repr(rebuilt) == repr(event)
    assert dataclasses.replace(event, version=2).version == 2


async def test_each_event_has_its_own_decoded_values(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    await append(connection, "s", 0, [NewEvent("A", {"n": [1]}), NewEvent("A", {"n": [1]})], "r1")
    first, second = await read_all(connection)
    assert first.data == second.data
    assert first.data is not second.data


async def test_each_append_keeps_its_own_metadata_across_pages(
    connection: psycopg.AsyncConnection[Any],
) -> None:
    for number in range(4):
        await append(
            connection,
            f"s{number % 2}",
            number // 2 * 3,
            [NewEvent("A", {"n": index}) for index in range(3)],
            f"r{number}",
            actor=f"actor-{number}",
        )
    expected = await plainly_read(connection)
    for batch_size in (1, 2, 5, 100):
        events = [event async for event in iterate_all(connection, batch_size=batch_size)]
        assert events == expected
        assert [event.metadata["request_id"] for event in events] == [
            f"r{number}" for number in range(4) for _ in range(3)
        ]
        assert [event.metadata["actor"] for event in events] == [
            f"actor-{number}" for number in range(4) for _ in range(3)
        ]


_json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from([2**63, 2**64, -(2**63) - 1, 10**40, 10**300]),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(st.characters(exclude_categories=("Cs",)), max_size=8),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=4), children, max_size=4),
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_json_values, st.booleans())
def test_decode_json_gives_what_json_gives(value: object, ascii_only: bool) -> None:
    # msgspec decodes, json's scanner only where msgspec refuses: the same values either way,
    # with the same types (repr tells 1 from 1.0 from True) and key order, floats to the bit.
    text = json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))
    assert repr(decode_json(text)) == repr(json.loads(text))
    assert repr(decode_json(text.encode())) == repr(json.loads(text))


@pytest.mark.parametrize(
    "text",
    ["1" * 5000, "[" + "1" * 5000 + "]", "0.1000000000000000055511151231257827", "1e308", "-0"],
)
def test_decode_json_takes_json_where_msgspec_refuses_or_rounds(text: str) -> None:
    try:
        expected = repr(json.loads(text))
    except ValueError as error:  # thousands of digits: json refuses them too
        with pytest.raises(ValueError, match=re.escape(str(error))):
            decode_json(text)
        return
    assert repr(decode_json(text)) == expected


def test_recorded_event_is_the_constructors_record() -> None:
    fields = (7, "table-x", 3, "SeatConfirmed", 1, {"seat": 1}, {"actor": "a"}, bytes(32))
    made = recorded_event(*fields)
    built = RecordedEvent(*fields)
    assert made == built and repr(made) == repr(built) and vars(made) == vars(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.version = 4  # type: ignore[misc]

"""orjson's canonical bytes stand for the json-based ones exactly (issues #7 and #4, speed).

``sapsam.log.chain`` writes canonical bytes through orjson and falls back to the json encoder,
the reference, for whatever orjson refuses: for the values an append checked (``canonical_json``)
and for the events of a parsed export (``canonical_event_bytes(checked=False)``). These tests
compare the two on arbitrary JSON-like values of the kinds a parsed export holds (no floats: the
export parser refuses them) and an append may pass (subclasses, tuples), with the characters,
keys, integers and nesting where the two could differ drawn often.
"""

from __future__ import annotations

import enum
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_strategies import json_values, texts

from sapsam.audit.export_format import ExportFormatError
from sapsam.audit.export_reading import _parse_line
from sapsam.log.chain import (
    CanonicalJsonError,
    _dumps,
    _event_object,
    _first_problem,
    _parsed_dumps,
    _quick_event_bytes,
    _utf8,
    canonical_event_bytes,
    canonical_json,
    canonical_json_each,
)

# Where JSON encoders tend to differ: escapes, DEL, the line separators JavaScript cares about,
# lone surrogates, the edges of the BMP and the astral planes (key order by UTF-16 would differ).
_ODD_CHARACTERS = [
    "\x00", "\x01", "\x08", "\x09", "\x0a", "\x0b", "\x0c", "\x0d", "\x1f", "\x20", "\x7f",
    "\x80", "\xff", '"', "\\", "/", "\u2028", "\u2029", "\ud7ff", "\ud800", "\udbff", "\udc00",
    "\udfff", "\ue000", "\ufeff", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff", "é", "a",
    "\\u0000",
]  # fmt: skip

_texts = texts(_ODD_CHARACTERS, max_size=12)
_integers = st.one_of(
    st.integers(),
    st.sampled_from([0, -1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 10**40]),
    st.integers(min_value=-(2**70), max_value=2**70),
)
_scalars = st.one_of(st.none(), st.booleans(), _integers, _texts)
_values = json_values(_scalars, _texts, max_size=5, max_leaves=30)


def _json_reference(value: Any) -> bytes:
    """``canonical_json`` as it was before orjson: the walk, then the json encoder alone."""
    problem = _first_problem(value)
    if problem is not None:
        raise CanonicalJsonError(f"not canonical JSON: {problem}")
    return _utf8(_dumps(value))


class _Seat(enum.IntEnum):
    NORTH = 0
    EAST = 1
    BIG = 2**64


class _Rank(int):
    """An int subclass with its own repr, as a Card is: JSON writes its value, not its repr."""

    def __repr__(self) -> str:
        return f"Rank({int(self)})"


class _Name(str):
    pass


class _Mapping(dict[str, Any]):
    pass


# What an append's data may hold besides parsed JSON: subclasses of int, str and dict, tuples.
_appended_values = st.recursive(
    st.one_of(
        _scalars,
        st.sampled_from(list(_Seat)),
        _integers.map(_Rank),
        _texts.map(_Name),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.lists(children, max_size=5).map(tuple),
        st.dictionaries(_texts, children, max_size=5),
        st.dictionaries(_texts, children, max_size=5).map(_Mapping),
    ),
    max_leaves=30,
)


def _orjson_bytes(value: Any) -> bytes | None:
    """orjson's bytes with sorted keys, None where it refuses the value."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return None


def _outcome(function: Any, *arguments: Any) -> tuple[str, Any]:
    try:
        return ("value", function(*arguments))
    except CanonicalJsonError as error:
        return ("refused", str(error))


@settings(max_examples=250, deadline=None)
@given(_values)
def test_orjson_bytes_are_the_json_bytes_where_orjson_gives_them(value: Any) -> None:
    quick = _orjson_bytes(value)
    if quick is not None:
        # orjson refuses what has no UTF-8 form, so the reference encodes without error.
        assert quick == _utf8(_parsed_dumps(value))


@settings(max_examples=250, deadline=None)
@given(_values)
def test_canonical_json_is_the_json_encoders(value: Any) -> None:
    assert _outcome(canonical_json, value) == _outcome(_json_reference, value)


@settings(max_examples=250, deadline=None)
@given(_appended_values)
def test_canonical_json_of_appended_values_is_the_json_encoders(value: Any) -> None:
    # The append path encodes checked values through orjson, falling back to json: same bytes,
    # same refusals, for the subclasses and tuples an event's data may hold too.
    assert _outcome(canonical_json, value) == _outcome(_json_reference, value)
    assert _outcome(canonical_json_each, [value, value]) == _outcome(
        lambda item: [_json_reference(item)] * 2, value
    )


def _reference_event_parts(data: Any, metadata: Any) -> tuple[bytes, bytes] | None:
    """The json-only canonical bytes of data and metadata (as the chain walk took them before
    orjson); None where either holds a ``\\u0000``, which the checked path decides."""
    data_text = _parsed_dumps(data)
    metadata_text = _parsed_dumps(metadata)
    if "\\u0000" in data_text or "\\u0000" in metadata_text:
        return None
    return _utf8(data_text), _utf8(metadata_text)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_texts, _values, max_size=3), st.dictionaries(_texts, _values, max_size=3))
def test_parsed_event_bytes_are_the_json_parts(data: Any, metadata: Any) -> None:
    # The parsed path (orjson, then json) hashes the bytes, and raises the errors, of the
    # checked path: what the export chain walk falls back to.
    parsed = _outcome(canonical_event_bytes, "table-1", 1, "Odd", 1, data, metadata, False)
    whole = _outcome(canonical_event_bytes, "table-1", 1, "Odd", 1, data, metadata)
    assert parsed == whole
    parts = _outcome(_reference_event_parts, data, metadata)
    if parts[0] == "value" and parts[1] is not None:
        assert whole == ("value", canonical_event_bytes("table-1", 1, "Odd", 1, data, metadata))
        assert b'"metadata":%b' % parts[1][1] in whole[1]
        assert whole[1].startswith(b'{"data":%b,' % parts[1][0])
    elif parts[0] == "refused":
        assert whole[0] == "refused"


@settings(max_examples=100, deadline=None)
@given(_values, st.booleans())
def test_values_parsed_from_export_text_give_the_same_bytes(value: Any, ascii_only: bool) -> None:
    # The values the verifier actually hashes come out of the export parser.
    try:
        text = json.dumps({"v": value}, ensure_ascii=ascii_only)
    except RecursionError:  # pragma: no cover - the strategy nests far less deep
        return
    try:
        parsed = _parse_line(text, 2)
    except ExportFormatError:
        return
    assert _outcome(canonical_json, parsed) == _outcome(_json_reference, parsed)


@pytest.mark.parametrize(
    "value",
    [
        2**64,
        -(2**63) - 1,
        {"a": [1, 2**100]},
        "\ud800",
        {"k\udfff": 1},
        ["ok", {"deep": "\udbff"}],
    ],
)
def test_what_orjson_refuses_takes_the_json_path(value: Any) -> None:
    assert _orjson_bytes(value) is None
    assert _outcome(canonical_json, value) == _outcome(_json_reference, value)


@pytest.mark.parametrize("depth", [1, 100, 250, 253, 254, 255, 256, 300, 600])
def test_deep_nesting_gives_the_same_outcome(depth: int) -> None:
    for leaf in ([], {}, "x\x00", "\ud800", 2**64):
        value: Any = leaf
        for level in range(depth):
            value = [value] if level % 2 else {"k": value}
        assert _outcome(canonical_json, value) == _outcome(_json_reference, value)


def test_orjson_sorts_keys_by_code_point() -> None:
    keys = ["\U00010000", "\uffff", "\ue000", "\ud7ff", "b", "a", "B", "", "é", "aa"]
    value = dict.fromkeys(keys, 1)
    assert orjson.dumps(value, option=orjson.OPT_SORT_KEYS) == _json_reference(value)
    assert list(json.loads(canonical_json(value))) == sorted(keys)


def test_every_ascii_and_odd_character_is_written_alike() -> None:
    # orjson takes these (no surrogate among them), so the comparison is byte for byte.
    characters = [chr(code) for code in range(0x100)] + [
        character for character in _ODD_CHARACTERS if not 0xD800 <= ord(character[0]) <= 0xDFFF
    ]
    for character in characters:
        value = {character: [character, "x" + character + "y"]}
        quick = _orjson_bytes(value)
        assert quick is not None
        assert quick == _utf8(_parsed_dumps(value)), repr(character)


@settings(max_examples=120, deadline=None)
@given(
    _texts,
    _integers,
    _texts,
    _integers,
    st.dictionaries(_texts, _values, max_size=3),
    st.dictionaries(_texts, _values, max_size=3),
)
def test_whole_event_bytes_are_the_canonical_event_bytes(
    stream_id: str, version: int, event_type: str, schema_version: int, data: Any, metadata: Any
) -> None:
    quick = _quick_event_bytes(
        _event_object(stream_id, version, event_type, schema_version, data, metadata)
    )
    if quick is not None:
        # Where orjson gives bytes, they are the checked path's (which then raises nothing).
        assert quick == canonical_event_bytes(
            stream_id, version, event_type, schema_version, data, metadata
        )
        assert b"\\u0000" not in quick


def test_whole_event_bytes_of_ordinary_and_odd_events() -> None:
    ordinary = ("table-1", 3, "PlayerSeated", 1, {"seat": 1, "player_id": "ann"}, {"a": "b"})
    assert _quick_event_bytes(_event_object(*ordinary)) == canonical_event_bytes(*ordinary)
    for odd in (
        ("table-\ud800", 1, "T", 1, {}, {}),
        ("table-1", 2**64, "T", 1, {}, {}),
        ("table-1", 1, "T\x00", 1, {}, {}),
        ("table-1", 1, "T", 1, {"x": "\x00"}, {}),
        ("table-1", 1, "T", 1, {}, {"big": -(2**63) - 1}),
    ):
        assert _quick_event_bytes(_event_object(*odd)) is None

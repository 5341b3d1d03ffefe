"""Canonical JSON is RFC 8785 (JCS) restricted to what events hold (issue #15 item 7).

``sapsam.log.canonical_json`` writes canonical bytes through orjson (sorted keys, 53-bit integers)
and falls back to a plain reference encoder where orjson refuses or where its key order could
differ from JCS's (a character beyond U+FFFF). These tests hold both to the ``rfc8785`` package, an
independent JCS implementation: on everything sapsam accepts the bytes are the package's, and
sapsam refuses what the package refuses plus what events must not hold (floats, NUL, keys that are
not exactly ``str``). They draw often the values where encoders tend to differ: escapes, DEL, the
JavaScript line separators, lone surrogates, characters beyond U+FFFF (UTF-16 key order), integers
at the edges of ±(2^53 − 1) and of 64 bits, and nesting.
"""

from __future__ import annotations

import enum
import json
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st
from json_strategies import json_values, texts

from sapsam.audit.export_format import ExportFormatError
from sapsam.audit.export_reading import _parse_line
from sapsam.audit.sample_series import recorded_stream, series_events
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.log.canonical_json import (
    MAX_SAFE_INTEGER,
    CanonicalJsonError,
    _reference_bytes,
    canonical_json,
    canonical_json_each,
    quick_canonical_bytes,
)
from sapsam.log.chain import _event_object, canonical_event_bytes
from sapsam.rules.presets import preset

DOCS = Path(__file__).resolve().parents[2] / "docs"

_ODD_CHARACTERS = [
    "\x00", "\x01", "\x08", "\x09", "\x0a", "\x0b", "\x0c", "\x0d", "\x1f", "\x20", "\x7f",
    "\x80", "\xff", '"', "\\", "/", "\u2028", "\u2029", "\ud7ff", "\ud800", "\udbff", "\udc00",
    "\udfff", "\ue000", "\ufb33", "\ufeff", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff",
    "é", "€", "a", "\\u0000",
]  # fmt: skip

_texts = texts(_ODD_CHARACTERS, max_size=8)
_EDGE_INTEGERS = [
    0, -1, 1, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1,
    2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10**40,
]  # fmt: skip
_integers = st.one_of(
    st.sampled_from(_EDGE_INTEGERS),
    st.integers(min_value=-MAX_SAFE_INTEGER - 4, max_value=MAX_SAFE_INTEGER + 4),
    st.integers(min_value=-(2**70), max_value=2**70),
)
_scalars = st.one_of(st.none(), st.booleans(), _integers, _texts)
# Keys drawn from a few characters so that objects often hold keys that sort differently by
# code point and by UTF-16 code unit (U+E000..U+FFFF against characters beyond U+FFFF).
_keys = st.one_of(
    _texts,
    st.lists(
        st.sampled_from(["a", "\ue000", "\uffff", "\U00010000", "\U0001f600", "é"]), max_size=3
    ).map("".join),
)
_values = json_values(_scalars, _keys, max_size=5, max_leaves=30)


class _Seat(enum.IntEnum):
    NORTH = 0
    EAST = 1
    BIG = 2**53


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
    st.one_of(_scalars, st.sampled_from(list(_Seat)), _integers.map(_Rank), _texts.map(_Name)),
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.lists(children, max_size=5).map(tuple),
        st.dictionaries(_keys, children, max_size=5),
        st.dictionaries(_keys, children, max_size=5).map(_Mapping),
    ),
    max_leaves=30,
)


def _not_for_events(value: object) -> bool:
    """What events must not hold although JCS could write it: a float, a NUL, a key that is not
    exactly a ``str``, anything that is not JSON."""
    if value is None or isinstance(value, bool | int):
        return False
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(
            type(key) is not str or "\x00" in key or _not_for_events(member)
            for key, member in value.items()
        )
    if isinstance(value, list | tuple):
        return any(_not_for_events(member) for member in value)
    return True


def _jcs(value: Any) -> tuple[str, bytes | None]:
    """The ``rfc8785`` package's bytes, restricted to what events hold; ("refused", None) for
    what either refuses (the package raises UnicodeEncodeError for a lone surrogate in a key)."""
    if _not_for_events(value):
        return ("refused", None)
    try:
        return ("value", rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):
        return ("refused", None)


def _outcome(function: Any, *arguments: Any) -> tuple[str, bytes | None]:
    try:
        return ("value", function(*arguments))
    except CanonicalJsonError:
        return ("refused", None)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_canonical_json_is_jcs(value: Any) -> None:
    assert _outcome(canonical_json, value) == _jcs(value)


@settings(max_examples=250, deadline=None)
@given(_appended_values)
def test_canonical_json_of_appended_values_is_jcs(value: Any) -> None:
    # The append path's values: subclasses and tuples too, one walk for a batch.
    expected = _jcs(value)
    assert _outcome(canonical_json, value) == expected
    batch = _outcome(canonical_json_each, [value, value])
    assert batch == (expected if expected[0] == "refused" else ("value", [expected[1]] * 2))


@settings(max_examples=250, deadline=None)
@given(_values)
def test_orjson_bytes_are_the_reference_bytes(value: Any) -> None:
    # The fast path's bytes, where it keeps them, are the plain encoder's.
    try:
        quick = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER)
    except orjson.JSONEncodeError:
        return
    if _not_for_events(value) or any(byte >= 0xF0 for byte in quick):
        return
    assert quick == _reference_bytes(value)


# Stream ids and types come from text columns, which hold no NUL.
_names = _texts.filter(lambda text: "\x00" not in text)


@settings(max_examples=100, deadline=None)
@given(_names, _integers, _names, _integers, st.dictionaries(_keys, _values, max_size=3))
def test_event_bytes_are_jcs_of_the_event_object(
    stream_id: str, version: int, event_type: str, schema_version: int, data: Any
) -> None:
    metadata = {"actor": "ann", "odd": data}
    whole = _event_object(stream_id, version, event_type, schema_version, data, metadata)
    expected = _jcs(whole)
    assert _outcome(canonical_event_bytes, *whole_args(whole)) == expected
    # The parsed path (one orjson call, the checked path where it cannot stand for it).
    assert _outcome(canonical_event_bytes, *whole_args(whole), False) == expected
    quick = quick_canonical_bytes(whole)
    if quick is not None:
        assert ("value", quick) == expected


def whole_args(whole: dict[str, Any]) -> tuple[Any, ...]:
    return (
        whole["stream"],
        whole["version"],
        whole["type"],
        whole["schema_version"],
        whole["data"],
        whole["metadata"],
    )


@settings(max_examples=100, deadline=None)
@given(_values, st.booleans())
def test_values_parsed_from_export_text_are_jcs(value: Any, ascii_only: bool) -> None:
    # The values the verifier actually hashes come out of the export parser.
    try:
        text = json.dumps({"v": value}, ensure_ascii=ascii_only)
    except RecursionError:  # pragma: no cover - the strategy nests far less deep
        return
    try:
        parsed = _parse_line(text, 2)
    except ExportFormatError:
        return
    assert _outcome(canonical_json, parsed) == _jcs(parsed)


def test_rfc_8785_key_order_example() -> None:
    # RFC 8785 §3.2.3: keys sort by their UTF-16 code units, so U+1F600 (surrogates D83D DE00)
    # comes before U+FB33, although its code point is larger.
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    names = [value[key] for key in json.loads(canonical_json(value))]
    assert names == [
        "Carriage Return",
        "One",
        "Control",
        "Latin Small Letter O With Diaeresis",
        "Euro Sign",
        "Emoji: Grinning Face",
        "Hebrew Letter Dalet With Dagesh",
    ]
    assert canonical_json(value) == rfc8785.dumps(value)


def test_rfc_8785_string_and_literal_example() -> None:
    # RFC 8785 §3.2.4's example without its numbers (events hold no floats).
    value = {
        "string": "\u20ac$\u000f\u000aA'\u0042\u0022\u005c\\\"/",
        "literals": [None, True, False],
    }
    expected = '{"literals":[null,true,false],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    assert canonical_json(value) == expected.encode("utf-8") == rfc8785.dumps(value)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (MAX_SAFE_INTEGER + 1, "outside ±(2^53 - 1)"),
        ({"a": [1, -MAX_SAFE_INTEGER - 1]}, "outside ±(2^53 - 1)"),
        (2**64, "outside ±(2^53 - 1)"),
        (_Seat.BIG, "outside ±(2^53 - 1)"),
        (1.0, "a float"),
        ({"x": float("nan")}, "a float"),
        ("a\x00b", "NUL"),
        ({"k\x00": 1}, "NUL"),
        ("\ud800", "lone surrogate"),
        ({"k\udfff": 1}, "lone surrogate"),
        ({1: "a"}, "not a string"),
        (b"bytes", "not JSON here"),
    ],
)
def test_what_is_refused_and_why(value: Any, words: str) -> None:
    with pytest.raises(CanonicalJsonError, match="not canonical JSON") as refused:
        canonical_json(value)
    assert words in str(refused.value)


def test_the_integer_edges() -> None:
    for number in (MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 0, -1):
        assert canonical_json([number]) == rfc8785.dumps([number]) == f"[{number}]".encode()
    for number in (MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1):
        with pytest.raises(CanonicalJsonError):
            canonical_json([number])
        with pytest.raises(rfc8785.IntegerDomainError):
            rfc8785.dumps([number])
    with pytest.raises(CanonicalJsonError):
        canonical_event_bytes("table-1", MAX_SAFE_INTEGER + 1, "T", 1, {}, {}, False)
    with pytest.raises(CanonicalJsonError):
        canonical_event_bytes("table-1", 1, "T", 2**63, {}, {})


@pytest.mark.parametrize("depth", [1, 100, 250, 253, 254, 255, 256, 300, 600])
def test_deep_nesting_is_written_or_refused_alike(depth: int) -> None:
    # orjson stops at 254 levels; the reference takes over with the same bytes and refusals.
    for leaf in ([], {}, "x\x00", "\ud800", 2**53, {"\U0001f600": 1, "\uffff": 2}):
        value: Any = leaf
        for level in range(depth):
            value = [value] if level % 2 else {"k": value}
        outcome = _outcome(canonical_json, value)
        if _not_for_events(leaf):  # the leaf decides; walking 600 levels here would recurse
            assert outcome[0] == "refused"
        else:
            assert outcome == _outcome(_reference_bytes, value)
        if depth <= 300:
            assert outcome == _jcs(value)


def test_every_character_below_u0100_and_the_odd_ones_are_written_as_jcs_writes_them() -> None:
    characters = [chr(code) for code in range(1, 0x100)] + [
        character
        for character in _ODD_CHARACTERS
        if not 0xD800 <= ord(character[0]) <= 0xDFFF and character != "\x00"
    ]
    for character in characters:
        value = {character: [character, "x" + character + "y"]}
        assert canonical_json(value) == rfc8785.dumps(value), repr(character)


def _old_canonical(value: Any) -> bytes:
    """The definition before RFC 8785 was adopted: keys by code point, json's escapes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_recorded_logs_keep_their_bytes(seats: int) -> None:
    # Nothing an event holds today is where the old definition and JCS differ, so every log
    # written before keeps its bytes and its hashes: whole series, under several rule sets.
    table_id = uuid.UUID(int=seats)
    metadata = {"actor": "ann", "recorded_at": "2026-01-01T00:00:00.000000Z", "request_id": "é"}
    for rule_set in (preset("pagat"), preset("one_six")):
        for version, event in enumerate(series_events(table_id, seats, 3, rule_set), start=1):
            type_name, schema_version, data = DEFAULT_CODEC.encode(event)
            whole = _event_object(
                f"table-{table_id}", version, type_name, schema_version, data, metadata
            )
            assert canonical_event_bytes(*whole_args(whole)) == _old_canonical(whole)
            assert rfc8785.dumps(whole) == _old_canonical(whole)
    for event in recorded_stream(seats, 2):
        whole = _event_object(
            event.stream_id,
            event.version,
            event.type,
            event.schema_version,
            event.data,
            event.metadata,
        )
        assert rfc8785.dumps(whole) == _old_canonical(whole)


@pytest.mark.parametrize(
    "name", ["fairness-vectors.json", "tournament-vectors.json", "rules-examples.json"]
)
def test_the_published_vectors_are_written_alike_by_both_definitions(name: str) -> None:
    vectors = json.loads((DOCS / name).read_text(encoding="utf-8"))
    assert canonical_json(vectors) == _old_canonical(vectors) == rfc8785.dumps(vectors)


def test_the_examples_of_the_spec_are_what_the_encoder_writes() -> None:
    section = (DOCS / "fairness.md").read_text(encoding="utf-8").split("## 18. Canonical JSON")[1]
    assert canonical_json({"b": [1, True, None], "a": "♠é"}).decode() in section
    written = canonical_json({"s": 'a\tb"c\\d\x1fe\x7f/'})
    assert written == b'{"s":"a\\tb\\"c\\\\d\\u001fe\x7f/"}'
    before_del = written.split(b"\x7f")[0].decode()
    assert f'`{before_del}` then the byte `7f`, then `/"}}`' in section
    literals = {"literals": [None, True, False], "string": '€$\x0f\nA\'B"\\\\"/'}
    assert f"`{canonical_json(literals).decode()}`" in section
    assert "9007199254740992 is outside ±(2^53 - 1)" in section
    with pytest.raises(CanonicalJsonError, match=r"9007199254740992 is outside ±\(2\^53 - 1\)"):
        canonical_json(2**53)

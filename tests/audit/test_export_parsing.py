"""Export lines read by msgspec exactly as by json, the reference (issue #7, audit speed).

``sapsam.audit.export_reading._parse_line`` tries msgspec (floats refused through its hook) and
hands whatever msgspec refuses to json's scanner, which decides and words the error. So the two
must agree wherever msgspec gives a value: the same value, with the same types and key order.
These tests compare ``_parse_line`` with the json-only parse on valid lines, on lines with what
the format refuses (floats, NaN, exponents), and on text mangled at random; and an event line
read by msgspec with its types checked (``quick_event``) with the usual dict-then-check path.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_strategies import json_values, texts

from sapsam.audit import Requester, select_deal, write_lines
from sapsam.audit.event_lines import quick_event
from sapsam.audit.export_format import ExportFormatError
from sapsam.audit.export_reading import (
    _parse_line,
    _parsed_by_json,
    _well_formed_event,
    event_from_dict,
)
from sapsam.audit.sample_series import recorded_stream

_ODD_CHARACTERS = [
    "\x00", "\x01", "\x1f", "\x7f", '"', "\\", "/", "\u2028", "\ud800", "\udfff", "\ufeff",
    "\U0001f600", "é", "e", "E", ".", "-", "+", "0", "1", "9", "{", "}", "[", "]", ":", ",", " ",
    "\t", "\n", "\r", "\x0c", "\xa0",
]  # fmt: skip
_texts = texts(_ODD_CHARACTERS, max_size=10)
_numbers = st.one_of(
    st.integers(),
    st.sampled_from([2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**40, -(10**40)]),
    st.floats(allow_nan=True, allow_infinity=True),
)
_values = json_values(
    st.one_of(st.none(), st.booleans(), _numbers, _texts), _texts, max_size=4, max_leaves=20
)


def _outcome(parse: Any, line: str) -> tuple[str, str]:
    """What a parse gives, typed: repr shows int vs float vs bool and the order of keys."""
    try:
        return ("value", repr(parse(line)))
    except ExportFormatError as error:
        return ("format error", str(error))
    except (ValueError, RecursionError) as error:
        return (type(error).__name__, str(error))


def _quick(line: str) -> Any:
    return _parse_line(line, 3)


def _agree(line: str) -> None:
    quick = _outcome(_quick, line)
    reference = _outcome(lambda text: _parsed_by_json(text, 3), line)
    if reference[0] == "value":
        # A value json reads is read the same; only an object is a line.
        if reference[1].startswith("{"):
            assert quick == reference
        else:
            assert quick[0] == "format error"
    else:
        assert quick == reference


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_texts, _values, max_size=5), st.booleans(), st.booleans())
def test_json_text_parses_the_same(value: Any, ascii_only: bool, spaced: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, separators=(", ", ": ") if spaced else None)
    _agree(text)


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(_texts, _values, max_size=4),
    st.integers(min_value=0, max_value=10_000),
    _texts,
    st.integers(min_value=0, max_value=3),
)
def test_mangled_text_parses_the_same(value: Any, at: int, insert: str, cut: int) -> None:
    text = json.dumps(value)
    where = at % (len(text) + 1)
    _agree(text[:where] + insert + text[where + cut :])


@settings(max_examples=150, deadline=None)
@given(_texts)
def test_any_text_parses_the_same(text: str) -> None:
    _agree(text)


@pytest.mark.parametrize(
    "line",
    [
        '{"a":1.5}',
        '{"a":1e5}',
        '{"a":1E-5}',
        '{"a":-0.0}',
        '{"a":NaN}',
        '{"a":Infinity}',
        '{"a":-Infinity}',
        '{"a":' + "9" * 30 + "}",
        '{"a":' + "9" * 5000 + "}",
        '{"a":1,"a":2,"b":3}',
        '{"a":"\\ud800"}',
        '{"a":"x\ty"}',
        ' {"a":1} ',
        '\x0c{"a":1}',
        '{"a":1}\x0c',
        '{"a":1} x',
        '{"a":' + "[" * 3000 + "]" * 3000 + "}",
        "[1,2]",
        "7",
        "",
        '{"a":-0}',
        '{"a":"\\u0000"}',
    ],
)
def test_edge_lines_parse_the_same(line: str) -> None:
    _agree(line)


def test_floats_are_refused_with_the_line_number() -> None:
    with pytest.raises(ExportFormatError, match=r"line 3: floats are not allowed"):
        _parse_line('{"a":1.5}', 3)
    with pytest.raises(ExportFormatError, match=r"line 4: NaN is not allowed"):
        _parse_line('{"a":NaN}', 4)


def test_every_line_of_a_real_export_parses_the_same() -> None:
    stream = recorded_stream(4)
    for number in (1, 2):
        for line in write_lines(select_deal(stream, number, Requester.operator())):
            assert _outcome(_quick, line) == _outcome(lambda text: _parsed_by_json(text, 3), line)


# -- event lines: msgspec's typed read against the usual path ------------------------------------

_field_values = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    _texts,
    st.sampled_from(["ab" * 32, "AB" * 32, "zz" * 32, "a" * 63, " " + "a" * 63, ""]),
    st.dictionaries(_texts, _values, max_size=3),
    st.lists(_values, max_size=3),
)
_EVENT_KEYS = ["position", "version", "type", "schema_version", "data", "metadata", "hash"]


def _usual_event(line: str) -> Any:
    value = _parse_line(line, 2)
    event = _well_formed_event(value)
    return event if event is not None else event_from_dict(value, "line 2")


def _event_outcome(read: Any, line: str) -> tuple[str, str]:
    try:
        event = read(line)
    except ExportFormatError as error:
        return ("format error", str(error))
    return ("event", repr(event) + repr([type(getattr(event, key)) for key in _EVENT_KEYS]))


@settings(max_examples=400, deadline=None)
@given(
    st.fixed_dictionaries(
        {
            "position": st.integers(min_value=1, max_value=2**40),
            "version": st.integers(min_value=1, max_value=500),
            "type": st.sampled_from(["DealStarted", "SeatConfirmed", ""]),
            "schema_version": st.integers(min_value=1, max_value=3),
            "data": st.dictionaries(_texts, _values, max_size=4),
            "metadata": st.dictionaries(_texts, _values, max_size=3),
            "hash": st.sampled_from(["0f" * 32, "ab" * 32]),
        }
    ),
    st.dictionaries(st.sampled_from([*_EVENT_KEYS, "extra"]), _field_values, max_size=3),
    st.lists(st.sampled_from(_EVENT_KEYS), max_size=2),
    st.booleans(),
)
def test_event_lines_read_the_same_by_msgspec(
    fields: dict[str, Any], replaced: dict[str, Any], dropped: list[str], duplicated: bool
) -> None:
    # A well-formed event line with some fields replaced by values of any type, some dropped,
    # and perhaps a key repeated: msgspec's typed read gives the usual path's event, or declines.
    value = {**fields, **replaced}
    for key in dropped:
        value.pop(key, None)
    line = json.dumps(value, ensure_ascii=False)
    if duplicated and value:
        key = next(iter(value))
        line = line[:-1] + ", " + json.dumps(key) + ": " + json.dumps(value[key]) + "}"
        line = "{" + json.dumps(key) + ": 0, " + line[1:]
    usual = _event_outcome(_usual_event, line)
    quick = quick_event(line)
    if quick is not None:
        assert usual == _event_outcome(lambda _: quick, line)
    if duplicated:
        return  # a repeated key whose first value has another type may make msgspec decline
    # msgspec declines exactly where it must: an extra field (its value would go unread), an
    # integer beyond 64 bits, a lone surrogate (no UTF-8 form); the rest of what the usual path
    # reads, it reads too.
    plain = (
        usual[0] == "event"
        and "extra" not in value
        and not any("\ud800" <= character <= "\udfff" for character in line)
        and all(abs(item) < 2**63 for item in value.values() if type(item) is int)
    )
    assert (quick is not None) == plain


def test_a_written_export_reads_every_event_line_quickly() -> None:
    stream = recorded_stream(4)
    lines = list(write_lines(select_deal(stream, 1, Requester.operator())))
    events = [quick_event(line) for line in lines[1:]]
    assert all(event is not None for event in events)
    assert events == [_usual_event(line) for line in lines[1:]]

"""An event line read in one step with its limits (``event_lines.canonical_event``) is read as the
usual path reads it, and only where ``check_line`` passes it (issue #15 item 8, verify speed); the
header line likewise (``event_lines.canonical_object``).

``read_export`` holds a line to the limits before it parses it, unless ``canonical_event`` reads
it: that reader must give an event only where the line is within every limit and the usual read
gives the same event, and must give one for the lines the log writes (or the fast path would be
dead code). Lines here are the event lines the exporter writes, and lines built from values of
every kind (deep, big, floats, odd characters) written plainly and then spelled otherwise
(spaces, a repeated key, escapes, a newline at the end).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from json_strategies import json_values, texts

from sapsam.audit import ExportLimitError, Requester, select_deal, select_table, write_lines
from sapsam.audit.event_lines import (
    canonical_event,
    canonical_object,
    limited_event,
    quick_event,
)
from sapsam.audit.export_limits import MAX_NESTING_DEPTH, check_line
from sapsam.audit.export_reading import _parse_line
from sapsam.audit.sample_anchored import anchored_log
from sapsam.audit.sample_series import recorded_stream
from sapsam.audit.verifier import verify_export
from sapsam.log.signed_note import NoteSigner

# Characters with a short escape (\b \f \n), one escaped in full, none needed, beyond ASCII:
# orjson's spelling must be the shortest for each, or the length test could hide a repeated key.
_ODD_CHARACTERS = [
    "\x00", "\b", "\x0c", "\n", "\x1f", "\x7f", '"', "\\", "/", "é", "\u2028", "\U0001f600",
    "\ud800", "0", "9", "[", "{",
]  # fmt: skip
_texts = texts(_ODD_CHARACTERS, max_size=6)
_numbers = st.one_of(
    st.integers(min_value=-(2**60), max_value=2**60),
    st.sampled_from([2**53 - 1, 2**53, 10**19 - 1, 10**19, 2**64, -(10**19), 10**25]),
    st.floats(allow_nan=False, allow_infinity=False),
)
_deep = st.integers(min_value=MAX_NESTING_DEPTH - 4, max_value=MAX_NESTING_DEPTH + 4).map(
    lambda depth: [[]] if depth == 0 else json.loads("[" * depth + "]" * depth)
)
_plain = st.one_of(st.none(), st.booleans(), st.integers(-99, 99), _texts)
_odd = st.one_of(_numbers, st.sampled_from(["1" * 25, "ab12" * 16]), _deep)
# Mostly plain values, so that many lines are within the limits and read in one step.
_scalars = st.one_of(_plain, _plain, _plain, _plain, _plain, _plain, _plain, _odd)
_values = json_values(_scalars, _texts, max_size=3, max_leaves=8)
_FRAME_INTEGERS = st.one_of(
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from([10**19 - 1, 10**19, 2**63, 2**64 - 1, -1]),
)

_SPELLINGS = [
    "plain",
    "space after a comma",
    "repeated key",
    "inclusion null",
    "escaped type",
    "escaped key",
    "newline at the end",
    "minus zero",
]


def _written(fields: dict[str, Any]) -> str:
    """The line as the exporter spells it: sorted keys, no spaces, characters as they are."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _spelled(fields: dict[str, Any], spelling: str) -> str:
    line = _written(fields)
    if spelling == "space after a comma":
        return line.replace(",", ", ", 1)
    if spelling == "repeated key":
        return '{"data":{"x":' + "[" * 40 + "]" * 40 + "}," + line[1:]
    if spelling == "inclusion null" and "inclusion" not in fields:
        return line[:-1] + ',"inclusion":null}'
    if spelling == "escaped type":
        return line.replace('"type":"', '"type":"\\u0041', 1)
    if spelling == "escaped key":
        return line.replace('"hash":', '"h\\u0061sh":', 1)
    if spelling == "newline at the end":
        return line + "\n"
    if spelling == "minus zero":
        return line.replace('"schema_version":0', '"schema_version":-0', 1)
    return line


def _same_reading(line: str) -> None:
    """Where canonical_event reads the line, the limits pass it and the usual read agrees."""
    read = canonical_event(line)
    if read is None:
        return
    check_line(line, 2)  # raises if the line is beyond a limit
    assert read == quick_event(line)
    assert [type(getattr(read, name)) for name in ("data", "metadata", "hash")] == [
        dict,
        dict,
        bytes,
    ]


@settings(max_examples=600, deadline=None)
@given(
    st.fixed_dictionaries(
        {
            "position": _FRAME_INTEGERS,
            "version": _FRAME_INTEGERS,
            "type": st.sampled_from(["DealStarted", "SeatConfirmed", "Déal", ""]),
            "schema_version": st.sampled_from([0, 1, 2, 10**19]),
            "data": st.dictionaries(_texts, _values, max_size=4),
            "metadata": st.one_of(st.just({}), st.dictionaries(_texts, _values, max_size=2)),
            "hash": st.sampled_from(["0f" * 32, "12" * 32, "0F" * 32, "zz" * 32]),
        },
        optional={
            "inclusion": st.fixed_dictionaries(
                {
                    "leaf_index": _FRAME_INTEGERS,
                    "proof": st.sampled_from(["", "12" * 64, "ab" * 32 * 13, "a" * 63]),
                }
            )
        },
    ),
    st.sampled_from(_SPELLINGS),
)
def test_a_line_read_in_one_step_is_within_the_limits_and_read_alike(
    fields: dict[str, Any], spelling: str
) -> None:
    try:
        line = _spelled(fields, spelling)
    except (UnicodeEncodeError, ValueError):
        return
    _same_reading(line)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=5),
        json_values(
            st.one_of(
                st.none(),
                st.booleans(),
                st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
                st.text(st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=8),
            ),
            st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=5),
            max_size=3,
            max_leaves=10,
        ),
        max_size=4,
    ),
    st.booleans(),
)
def test_a_plainly_written_line_within_the_limits_is_read_in_one_step(
    data: dict[str, Any], included: bool
) -> None:
    fields: dict[str, Any] = {
        "position": 7,
        "version": 3,
        "type": "DealStarted",
        "schema_version": 1,
        "data": data,
        "metadata": {},
        "hash": "ab" * 32,
    }
    if included:
        fields["inclusion"] = {"leaf_index": 12, "proof": "cd" * 32 * 3}
    line = _written(fields)
    # The one-step reading bounds the nesting by the brackets it holds, inside strings too: up
    # to max_leaves=10 containers and bracket characters can make more than the limit.
    assume(line.count("[") + line.count("{") <= MAX_NESTING_DEPTH)
    assert canonical_event(line) is not None
    _same_reading(line)


def _anchored_deal_lines() -> list[str]:
    signer = NoteSigner.from_seed("sapsam/test", bytes(32))
    log = anchored_log([recorded_stream(4), recorded_stream(4)], signer)
    export = log.anchored(select_deal(log.streams[1], 2, Requester.operator()))
    return list(write_lines(export))


def test_every_event_line_the_log_writes_is_read_in_one_step() -> None:
    lines = _anchored_deal_lines()
    for line in lines[1:]:
        assert canonical_event(line) is not None
        assert canonical_event(line + "\n") == canonical_event(line) == quick_event(line)
        _same_reading(line)


@pytest.mark.parametrize(
    "value",
    ["[" * (MAX_NESTING_DEPTH - 1) + "]" * (MAX_NESTING_DEPTH - 1), str(10**19), str(-(10**19))],
)
def test_a_written_line_beyond_a_limit_is_left_to_the_limits(value: str) -> None:
    # Depth 32 with the line and data objects around it passes check_line; one more does not.
    lines = _anchored_deal_lines()
    line = lines[1].replace('"data":{', '"data":{"x":' + value + ",", 1)
    assert canonical_event(line) is None
    with pytest.raises(ExportLimitError):
        verify_export([lines[0], line, *lines[2:]])


def test_a_line_not_in_the_shortest_spelling_is_held_to_the_limits_then_read_as_usual() -> None:
    # limited_event: the canonical step's parse is the read of a line it does not pass (no
    # second parse), after check_line; a line beyond a limit raises, a blank one is left over.
    lines = _anchored_deal_lines()
    spaced = lines[1].replace('"data":{', '"data": {', 1)
    assert canonical_event(spaced) is None
    assert limited_event(spaced, 2) == quick_event(spaced) == limited_event(lines[1], 2)
    deep = lines[1].replace('"data":{', '"data": {"x":' + "[" * 40 + "]" * 40 + ",", 1)
    with pytest.raises(ExportLimitError):
        limited_event(deep, 2)
    assert limited_event("  ", 2) is None
    assert limited_event("{not json", 2) is None  # the usual path words the error


def test_a_repeated_key_cannot_hide_what_is_beyond_a_limit() -> None:
    # The first value of a repeated key is parsed and dropped: only the line's length shows it.
    lines = _anchored_deal_lines()
    hidden = '"x":' + "[" * 40 + "]" * 40 + ',"x":0,'
    line = lines[1].replace('"data":{', '"data":{' + hidden, 1)
    assert quick_event(line) is not None  # the parse alone reads it
    assert canonical_event(line) is None
    with pytest.raises(ExportLimitError, match="nested deeper"):
        verify_export([lines[0], line, *lines[2:]])


# -- the header line (``canonical_object``) ------------------------------------------------------


def _same_object(line: str) -> None:
    """Where canonical_object reads a line, the limits pass it and the usual parse agrees."""
    read = canonical_object(line)
    if read is None:
        return
    check_line(line, 1)  # raises if the line is beyond a limit
    assert read == _parse_line(line, 1)
    assert type(read) is dict


_HEADER_SPELLINGS = [
    "plain",
    "space after a comma",
    "repeated key",
    "escaped character",
    "escaped key",
    "newline at the end",
    "minus zero",
    "ASCII only",
]


def _header_spelled(value: dict[str, Any], spelling: str) -> str:
    line = _written(value)
    if spelling == "space after a comma":
        return line.replace(",", ", ", 1)
    if spelling == "repeated key":
        return '{"x":' + "[" * 40 + "]" * 40 + "," + line[1:]
    if spelling == "escaped character":
        return line.replace("—", "\\u2014", 1)
    if spelling == "escaped key":
        return line.replace('"scope":', '"sc\\u006fpe":', 1)
    if spelling == "newline at the end":
        return line + "\n"
    if spelling == "minus zero":
        return line.replace('"seat_count":0', '"seat_count":-0', 1)
    if spelling == "ASCII only":
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return line


@settings(max_examples=600, deadline=None)
@given(
    st.dictionaries(_texts, _values, max_size=4),
    st.sampled_from([0, 3, 10**19, -(2**53)]),
    st.sampled_from(["sapsam/test\n12\nabc=\n\n— sapsam/test xyz=\n", "plain"]),
    st.sampled_from(_HEADER_SPELLINGS),
)
def test_a_header_read_in_one_step_is_within_the_limits_and_read_alike(
    rule_set: dict[str, Any], seat_count: int, checkpoint: str, spelling: str
) -> None:
    value = {
        "format": "sapsam-audit-export",
        "rule_set": rule_set,
        "scope": "deal",
        "seat_count": seat_count,
        "segments": [{"anchor": {"hash": "0" * 64, "version": 0}, "last_hash": "ab" * 32}],
        "transparency": {"checkpoint": checkpoint, "consistency": []},
    }
    try:
        line = _header_spelled(value, spelling)
    except (UnicodeEncodeError, ValueError):
        return
    _same_object(line)


def test_every_header_the_exporter_writes_is_read_in_one_step() -> None:
    signer = NoteSigner.from_seed("sapsam/test", bytes(32))
    log = anchored_log([recorded_stream(3), recorded_stream(4)], signer)
    operator = Requester.operator()
    exports = [log.anchored(select_deal(stream, 2, operator)) for stream in log.streams]
    exports += [log.anchored(select_table(stream, operator)) for stream in log.streams]
    for export in exports:
        header = next(iter(write_lines(export)))
        assert not header.isascii()  # the signed note's "—": the bytes, not the characters, count
        assert canonical_object(header) is not None
        assert canonical_object(header + "\n") == canonical_object(header) == _parse_line(header, 1)
        _same_object(header)


@pytest.mark.parametrize(
    ("hidden", "error"),
    [
        ('"x":' + "[" * 40 + "]" * 40 + ',"x":0,', "nested deeper"),  # a repeated key's value
        ('"x":' + "[" * 32 + "]" * 32 + ",", "nested deeper"),
        ('"x":' + str(10**19) + ",", "longer than"),
        ('"x":' + str(-(2**64)) + ",", "longer than"),
    ],
)
def test_a_header_beyond_a_limit_is_left_to_the_limits(hidden: str, error: str) -> None:
    lines = _anchored_deal_lines()
    header = "{" + hidden + lines[0][1:]
    assert canonical_object(header) is None
    with pytest.raises(ExportLimitError, match=error):
        verify_export([header, *lines[1:]])

"""Reading an audit export from its lines, within documented limits (docs/audit.md, "Limits").

Pure: no database or network imports. :func:`read_export` parses the header
(``sapsam.audit.export_header_reading``) and the event lines (the format is in
``sapsam.audit.export_format``); only the shape is checked here, whether the
content holds is the verifier's question. A malformed line is an ``ExportFormatError`` naming the
line and field, which the verifier reports as a failed ``format`` check.

Each line is held to the input limits (``sapsam.audit.export_limits``) before it is parsed, so no
input can exhaust the parsers; beyond them :func:`read_export` raises ``ExportLimitError``. (An
event line as the log writes it, under 64 KiB, is read first and held to the limits by what was
read, ``sapsam.audit.event_lines.limited_event``, and a header so written likewise,
``canonical_object``: the same verdict, without scanning the line.)
"""

from __future__ import annotations

import json
import json.scanner
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, cast

import msgspec

from sapsam.audit.event_lines import (
    QUICK_REFUSED,
    canonical_object,
    exported_event,
    limited_event,
    refuse_float,
)
from sapsam.audit.export_fields import (
    hex_field,
    int_field,
    object_field,
    require_field,
)
from sapsam.audit.export_format import (
    AuditExport,
    ExportedEvent,
    ExportFormatError,
    ExportHeader,
)
from sapsam.audit.export_header_reading import header_from_dict
from sapsam.audit.export_limits import MAX_EXPORT_CHARS, check_export_size, check_line
from sapsam.audit.proof_format import inclusion_from_value
from sapsam.quoting import quote_prefix


def _reject_floats(text: str) -> Any:
    raise ExportFormatError(f"floats are not allowed in an export (found {quote_prefix(text)})")


def _reject_constants(text: str) -> Any:
    raise ExportFormatError(f"{text} is not allowed in an export")


# One decoder for every line (json.loads with options builds a new decoder per call).
_DECODER = json.JSONDecoder(parse_float=_reject_floats, parse_constant=_reject_constants)


# The decoder's own scanner (same options), to read a line's value without ``decode``'s frames.
# (The stubs type ``make_scanner`` as the scanner class, not as taking a decoder.)
_scan_value: Callable[[str, int], tuple[Any, int]] = cast(Any, json.scanner.make_scanner)(_DECODER)
_WHITESPACE = re.compile(r"[ \t\n\r]*")  # what ``decode`` allows around the value


# msgspec's C parser, refusing floats through its hook as ``_DECODER`` does (about twice as fast
# as json's scanner on export lines, which dominated reading an export).
_QUICK_DECODE: Final = msgspec.json.Decoder(float_hook=refuse_float).decode


def _parse_line(line: str, number: int) -> Mapping[str, Any]:
    try:
        # What msgspec accepts, json accepts with the same value (tests/audit/
        # test_export_parsing.py compares the two); whatever it refuses (a float, NaN, a big
        # exponent, bad JSON, a lone surrogate) goes to json, which decides and words the error.
        value = _QUICK_DECODE(line)
    except QUICK_REFUSED:
        value = _parsed_by_json(line, number)
    if type(value) is dict:  # the usual case, without formatting the place for an error
        return value
    return object_field(value, f"line {number}")


def _parsed_by_json(line: str, number: int) -> Any:
    """The line's value by json's own scanner, floats and NaN refused: the reference parser."""
    try:
        # A written line is one value from its first character: scan it directly, which skips
        # the two frames and whitespace matches of ``decode``. Anything else (leading space, not
        # JSON, extra data) goes through ``decode`` itself, which raises with its usual message.
        try:
            value, end = _scan_value(line, 0)
        except StopIteration:
            value = _DECODER.decode(line)
        else:
            if end != len(line) and not _WHITESPACE.fullmatch(line, end):
                value = _DECODER.decode(line)
    except json.JSONDecodeError as error:
        raise ExportFormatError(f"line {number}: not JSON ({error.msg})") from None
    except ExportFormatError as error:
        raise ExportFormatError(f"line {number}: {error}") from None
    return value


# An event line's fields in one call (a missing field sends the line to the named checks).
_EVENT_FIELDS: Final = operator.itemgetter(
    "position", "version", "type", "schema_version", "data", "metadata", "hash"
)


def _well_formed_event(value: Mapping[str, Any]) -> ExportedEvent | None:
    """The usual, well-formed event line in one test; None sends it to the checks that name the
    bad field."""
    try:
        position, version, event_type, schema_version, data, metadata, hash_text = _EVENT_FIELDS(
            value
        )
    except KeyError:
        return None
    if "inclusion" in value:
        return None  # the named checks read it
    if (
        type(position) is int
        and type(version) is int
        and type(schema_version) is int
        and type(event_type) is str
        and type(data) is dict
        and type(metadata) is dict
        and type(hash_text) is str
    ):
        return exported_event(
            position, version, event_type, schema_version, data, metadata, hash_text
        )
    return None


def event_from_dict(value: Mapping[str, Any], where: str) -> ExportedEvent:
    """Read one event line's object; raises ``ExportFormatError`` naming the bad field."""
    well_formed = _well_formed_event(value)
    if well_formed is not None:
        return well_formed
    event_type = value.get("type")
    require_field(isinstance(event_type, str) and bool(event_type), where, "type must be a string")
    assert isinstance(event_type, str)
    inclusion = value.get("inclusion")
    return ExportedEvent(
        position=int_field(value.get("position"), f"{where} position"),
        version=int_field(value.get("version"), f"{where} version"),
        type=event_type,
        schema_version=int_field(value.get("schema_version"), f"{where} schema_version"),
        data=object_field(value.get("data"), f"{where} data"),
        metadata=object_field(value.get("metadata"), f"{where} metadata"),
        hash=hex_field(value.get("hash"), f"{where} hash"),
        inclusion=(
            None if inclusion is None else inclusion_from_value(inclusion, f"{where} inclusion")
        ),
    )


# Every deal export of a table opens with the table's opening events, line for line alike (under
# one checkpoint, their proofs too): a verifier going through a table's deal files reads each
# such line once. A line read before (the same text: the same limits, the same parse, an equal
# event) is taken as read; the event is shared, as immutable as every parsed event is to its
# readers. Only the export's leading run of opening events is looked up, so a deal's own lines
# cost nothing here; at most _OPENINGS_KEPT lines are kept (then all are forgotten).
OPENING_TYPES: Final = frozenset({"TableCreated", "PlayerSeated", "DealerChosen"})
"""The types of the events that open a table's stream, and so every deal export of the table."""
_OPENINGS_READ: dict[str, ExportedEvent] = {}
_OPENINGS_KEPT: Final = 4096


def forget_openings_read() -> None:
    """Forget the opening lines read so far (the next export's are read in full)."""
    _OPENINGS_READ.clear()


def _kept_opening(line: str, event: ExportedEvent) -> bool:
    """Keep ``line``'s event if it is an opening event; whether it was (the opening goes on)."""
    if event.type not in OPENING_TYPES:
        return False
    if len(_OPENINGS_READ) >= _OPENINGS_KEPT:
        _OPENINGS_READ.clear()
    _OPENINGS_READ[line] = event
    return True


def read_export(lines: Iterable[str]) -> AuditExport:
    """Parse an export from its lines (blank lines are ignored).

    Only the shape is checked here; whether the content holds is the verifier's question. Raises
    ``ExportLimitError`` for an input beyond the limits (each line is checked before it is
    parsed), ``ExportFormatError`` for a malformed one.
    """
    header: ExportHeader | None = None
    events: list[ExportedEvent] = []
    size = 0
    opening = True  # in the export's leading opening events, looked up among those read
    for number, line in enumerate(lines, start=1):
        size += len(line)
        if size > MAX_EXPORT_CHARS:
            check_export_size(size)
        if opening and header is not None:
            known = _OPENINGS_READ.get(line)
            if known is not None:  # read before: within the limits, well formed
                events.append(known)
                continue
        if header is None:
            # A header as the exporter writes it is read, and held to the limits, in one step.
            header_value: Mapping[str, Any] | None = canonical_object(line)
            if header_value is None:
                check_line(line, number)
                if not line.strip():
                    continue
                header_value = _parse_line(line, number)
            header = header_from_dict(header_value, f"line {number}")
            continue
        # A line as the log writes it is read, and held to the limits, in one step; any other
        # is held to the limits first (ExportLimitError), and read by msgspec at most once.
        quick = limited_event(line, number)
        if quick is not None:
            events.append(quick)
            if opening:
                opening = _kept_opening(line, quick)
            continue
        if not line.strip():
            continue
        opening = False
        # The place is formatted only for a line that needs the field-by-field checks.
        value = _parse_line(line, number)
        event = _well_formed_event(value)
        events.append(event if event is not None else event_from_dict(value, f"line {number}"))
    if header is None:
        raise ExportFormatError("the export is empty: no header line")
    return AuditExport(header=header, events=tuple(events), parsed_json=True)

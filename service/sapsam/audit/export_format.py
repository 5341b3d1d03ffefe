"""The audit export: a table's events as JSON lines, with what ties them to the hash chain.

Pure: no database or network imports. The DB-backed exporter (``sapsam.audit.database``) reads a
stream and calls :func:`select_table` or :func:`select_deal`; the offline verifier reads a file
with :func:`read_export`. The format is specified in docs/audit.md; in short::

    {"format": "sapsam-audit-export", "format_version": 1, "table_id": ..., "stream_id": ...,
     "scope": "deal" | "table", "deals": [...], "finished_deals": [...], "rule_set": {...},
     "seat_count": N, "segments": [{"anchor": {"version": V, "hash": H}, "first_version": F,
     "last_version": L, "last_hash": X}, ...], "withheld": "..."}
    {"position": P, "version": 1, "type": "TableCreated", "schema_version": 1, "data": {...},
     "metadata": {...}, "hash": "..."}
    ...

A segment is a run of consecutive stream versions; its anchor is the version and hash of the event
just before its first one (version 0 and 32 zero bytes, the genesis hash, for a segment that starts
the stream). A whole-table export is one segment from the genesis. A deal export is the table's
opening (``TableCreated`` to ``DealerChosen``, from the genesis) plus the deal's own consecutive
events (``DealStarted`` to ``DealScored``, and ``SeriesCompleted`` when it ends a series, then
``SeriesStarted`` at a ``new_series`` table); when the two touch (deal 1) they are one segment.
"""

from __future__ import annotations

import json
import json.scanner
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

import msgspec

from sapsam.frozen import from_fields
from sapsam.store.chain import GENESIS_HASH, canonical_json
from sapsam.store.records import JsonObject, RecordedEvent

FORMAT_TAG: Final = "sapsam-audit-export"
FORMAT_VERSION: Final = 1
STREAM_PREFIX: Final = "table-"
WITHHELD_NOTE: Final = (
    "the secret seed of a running deal is kept outside the log and is never exported; "
    "it appears only in SeedRevealed once the deal ends"
)
# Event types that belong to the table's opening, before any deal.
OPENING_TYPES: Final = frozenset({"TableCreated", "PlayerSeated", "DealerChosen"})


class ExportFormatError(ValueError):
    """The input is not a well-formed audit export; the message names the line and field."""


class ExportAccessError(PermissionError):
    """The requester may not export this: not their table, or a deal still being played.

    ``reason`` is a stable code (``NOT_SEATED``, ``DEAL_NOT_FINISHED``); ``message`` explains.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field: str | None = None


class NothingToExportError(LookupError):
    """The table or the deal does not exist."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field: str | None = None


@dataclass(frozen=True)
class Requester:
    """Who asks for an export: a player by id, or the operator."""

    player_id: str | None
    is_operator: bool = False

    @classmethod
    def operator(cls) -> Requester:
        """The operator: may export anything (running deals without their secrets)."""
        return cls(player_id=None, is_operator=True)

    @classmethod
    def player(cls, player_id: str) -> Requester:
        """A player: may export finished deals of tables where they hold a seat."""
        return cls(player_id=player_id, is_operator=False)


@dataclass(frozen=True)
class ChainAnchor:
    """The version and hash of the event just before a segment (0 and the genesis hash)."""

    version: int
    hash: bytes

    @property
    def is_genesis(self) -> bool:
        """True for the start of the stream."""
        return self.version == 0 and self.hash == GENESIS_HASH


GENESIS_ANCHOR: Final = ChainAnchor(0, GENESIS_HASH)


@dataclass(frozen=True)
class Segment:
    """Consecutive stream versions ``first_version..last_version`` and where they hang."""

    anchor: ChainAnchor
    first_version: int
    last_version: int
    last_hash: bytes


@dataclass(frozen=True)
class ExportedEvent:
    """One event line: a recorded event without its stream (the header names it)."""

    position: int
    version: int
    type: str
    schema_version: int
    data: JsonObject
    metadata: JsonObject
    hash: bytes

    def recorded(self, stream_id: str) -> RecordedEvent:
        """As the store's record type, for the chain functions."""
        return RecordedEvent(
            position=self.position,
            stream_id=stream_id,
            version=self.version,
            type=self.type,
            schema_version=self.schema_version,
            data=self.data,
            metadata=self.metadata,
            hash=self.hash,
        )


@dataclass(frozen=True)
class ExportHeader:
    """The first line: what the export covers and how it is anchored."""

    table_id: str
    stream_id: str
    scope: str
    deals: tuple[int, ...]
    finished_deals: tuple[int, ...]
    rule_set: JsonObject
    seat_count: int
    segments: tuple[Segment, ...]
    withheld: str = WITHHELD_NOTE
    format_version: int = FORMAT_VERSION


@dataclass(frozen=True)
class AuditExport:
    """A parsed export: the header and the event lines in order."""

    header: ExportHeader
    events: tuple[ExportedEvent, ...] = field(default=())
    # True when the events came from ``read_export``: parsed from JSON with floats and NaN
    # refused, so the chain check may hash them without walking them first (same outcome). Not
    # compared: it says how the export was obtained, not what it holds.
    parsed_json: bool = field(default=False, compare=False)


# -- writing -------------------------------------------------------------------------------------


def _anchor_json(anchor: ChainAnchor) -> dict[str, Any]:
    return {"version": anchor.version, "hash": anchor.hash.hex()}


def header_to_dict(header: ExportHeader) -> dict[str, Any]:
    """The header line's JSON object."""
    return {
        "format": FORMAT_TAG,
        "format_version": header.format_version,
        "table_id": header.table_id,
        "stream_id": header.stream_id,
        "scope": header.scope,
        "deals": list(header.deals),
        "finished_deals": list(header.finished_deals),
        "rule_set": dict(header.rule_set),
        "seat_count": header.seat_count,
        "segments": [
            {
                "anchor": _anchor_json(segment.anchor),
                "first_version": segment.first_version,
                "last_version": segment.last_version,
                "last_hash": segment.last_hash.hex(),
            }
            for segment in header.segments
        ],
        "withheld": header.withheld,
    }


def event_to_dict(event: ExportedEvent) -> dict[str, Any]:
    """An event line's JSON object."""
    return {
        "position": event.position,
        "version": event.version,
        "type": event.type,
        "schema_version": event.schema_version,
        "data": event.data,
        "metadata": event.metadata,
        "hash": event.hash.hex(),
    }


def write_lines(export: AuditExport) -> Iterator[str]:
    """The export as JSON lines (no trailing newlines): the header, then one line per event.

    Lines are canonical JSON (sorted keys, no spaces, UTF-8), so the same export always gives the
    same bytes.
    """
    yield canonical_json(header_to_dict(export.header)).decode("utf-8")
    for event in export.events:
        yield canonical_json(event_to_dict(event)).decode("utf-8")


def export_text(export: AuditExport) -> str:
    """The whole export as one text, one line per record, ending with a newline."""
    return "".join(line + "\n" for line in write_lines(export))


# -- reading -------------------------------------------------------------------------------------


def _require(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise ExportFormatError(f"{where}: {message}")


def _int(value: object, where: str) -> int:
    _require(isinstance(value, int) and not isinstance(value, bool), where, "must be an integer")
    assert isinstance(value, int)
    return value


def _hex(value: object, where: str, size: int | None = 32) -> bytes:
    _require(isinstance(value, str), where, "must be a hex string")
    assert isinstance(value, str)
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise ExportFormatError(f"{where}: {value!r} is not hex") from None
    _require(size is None or len(raw) == size, where, f"must be {size} bytes")
    return raw


def _object(value: object, where: str) -> Mapping[str, Any]:
    _require(isinstance(value, dict), where, "must be a JSON object")
    assert isinstance(value, dict)
    return value


def _int_list(value: object, where: str) -> tuple[int, ...]:
    _require(isinstance(value, list), where, "must be a list")
    assert isinstance(value, list)
    return tuple(_int(item, f"{where}[{index}]") for index, item in enumerate(value))


def _reject_floats(text: str) -> Any:
    raise ExportFormatError(f"floats are not allowed in an export (found {text})")


def _reject_constants(text: str) -> Any:
    raise ExportFormatError(f"{text} is not allowed in an export")


# One decoder for every line (json.loads with options builds a new decoder per call).
_DECODER = json.JSONDecoder(parse_float=_reject_floats, parse_constant=_reject_constants)


# The decoder's own scanner (same options), to read a line's value without ``decode``'s frames.
# (The stubs type ``make_scanner`` as the scanner class, not as taking a decoder.)
_scan_value: Callable[[str, int], tuple[Any, int]] = cast(Any, json.scanner.make_scanner)(_DECODER)
_WHITESPACE = re.compile(r"[ \t\n\r]*")  # what ``decode`` allows around the value


def _refuse_float(text: str) -> Any:
    raise ValueError(f"a float ({text})")


# msgspec's C parser, refusing floats through its hook as ``_DECODER`` does (about twice as fast
# as json's scanner on export lines, which dominated reading an export).
_QUICK_DECODE: Final = msgspec.json.Decoder(float_hook=_refuse_float).decode
_QUICK_REFUSED: Final = (msgspec.MsgspecError, RecursionError, UnicodeEncodeError)


def _parse_line(line: str, number: int) -> Mapping[str, Any]:
    try:
        # What msgspec accepts, json accepts with the same value (tests/audit/
        # test_export_parsing.py compares the two); whatever it refuses (a float, NaN, a big
        # exponent, bad JSON, a lone surrogate) goes to json, which decides and words the error.
        value = _QUICK_DECODE(line)
    except _QUICK_REFUSED:
        value = _parsed_by_json(line, number)
    if type(value) is dict:  # the usual case, without formatting the place for an error
        return value
    return _object(value, f"line {number}")


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


# The header line's fields in one call (a missing field sends it to the named checks).
_HEADER_FIELDS: Final = operator.itemgetter(
    "format",
    "format_version",
    "segments",
    "table_id",
    "stream_id",
    "scope",
    "withheld",
    "deals",
    "finished_deals",
    "rule_set",
    "seat_count",
)
_SEGMENT_FIELDS: Final = operator.itemgetter("anchor", "first_version", "last_version", "last_hash")
_ANCHOR_FIELDS: Final = operator.itemgetter("version", "hash")


def _digest(text: object) -> bytes | None:
    """``_hex(text, ...)`` of a well-formed 32-byte hash, None for anything else."""
    if type(text) is not str:
        return None
    try:
        digest = bytes.fromhex(text)
    except ValueError:
        return None
    return digest if len(digest) == 32 else None


def _well_formed_header(value: Mapping[str, Any]) -> ExportHeader | None:
    """``header_from_dict(value)`` for the usual, well-formed header of plain JSON types, tested
    without formatting a field's place for each test; None sends it to the checks that name the
    bad field."""
    if type(value) is not dict:
        return None
    try:
        (
            tag,
            version,
            segments,
            table_id,
            stream_id,
            scope,
            withheld,
            deals,
            finished_deals,
            rule_set,
            seat_count,
        ) = _HEADER_FIELDS(value)
    except KeyError:
        return None
    if not (
        tag == FORMAT_TAG
        and type(version) is int
        and version == FORMAT_VERSION
        and type(segments) is list
        and segments
        and type(table_id) is str
        and type(stream_id) is str
        and type(scope) is str
        and type(withheld) is str
        and type(deals) is list
        and all(type(number) is int for number in deals)
        and type(finished_deals) is list
        and all(type(number) is int for number in finished_deals)
        and type(rule_set) is dict
        and type(seat_count) is int
    ):
        return None
    parsed: list[Segment] = []
    for raw in segments:
        if type(raw) is not dict:
            return None
        try:
            anchor, first_version, last_version, last_hash = _SEGMENT_FIELDS(raw)
            if type(anchor) is not dict:
                return None
            anchor_version, anchor_hash = _ANCHOR_FIELDS(anchor)
        except KeyError:
            return None
        anchor_digest = _digest(anchor_hash)
        last_digest = _digest(last_hash)
        if (
            type(anchor_version) is not int
            or anchor_digest is None
            or type(first_version) is not int
            or type(last_version) is not int
            or last_digest is None
        ):
            return None
        parsed.append(
            Segment(
                ChainAnchor(anchor_version, anchor_digest), first_version, last_version, last_digest
            )
        )
    return ExportHeader(
        table_id=table_id,
        stream_id=stream_id,
        scope=scope,
        deals=tuple(deals),
        finished_deals=tuple(finished_deals),
        rule_set=rule_set,
        seat_count=seat_count,
        segments=tuple(parsed),
        withheld=withheld,
        format_version=version,
    )


def header_from_dict(value: Mapping[str, Any], where: str = "line 1") -> ExportHeader:
    """Read the header line's object; raises ``ExportFormatError`` naming the bad field."""
    well_formed = _well_formed_header(value)
    if well_formed is not None:
        return well_formed
    _require(value.get("format") == FORMAT_TAG, where, f"format must be {FORMAT_TAG!r}")
    version = _int(value.get("format_version"), f"{where} format_version")
    _require(version == FORMAT_VERSION, where, f"format_version {version} is not supported")
    segments = value.get("segments")
    _require(isinstance(segments, list) and bool(segments), where, "segments must be a list")
    assert isinstance(segments, list)
    parsed: list[Segment] = []
    for index, raw in enumerate(segments):
        at = f"{where} segments[{index}]"
        segment = _object(raw, at)
        anchor = _object(segment.get("anchor"), f"{at}.anchor")
        parsed.append(
            Segment(
                anchor=ChainAnchor(
                    _int(anchor.get("version"), f"{at}.anchor.version"),
                    _hex(anchor.get("hash"), f"{at}.anchor.hash"),
                ),
                first_version=_int(segment.get("first_version"), f"{at}.first_version"),
                last_version=_int(segment.get("last_version"), f"{at}.last_version"),
                last_hash=_hex(segment.get("last_hash"), f"{at}.last_hash"),
            )
        )
    for name in ("table_id", "stream_id", "scope", "withheld"):
        _require(isinstance(value.get(name), str), where, f"{name} must be a string")
    return ExportHeader(
        table_id=str(value["table_id"]),
        stream_id=str(value["stream_id"]),
        scope=str(value["scope"]),
        deals=_int_list(value.get("deals"), f"{where} deals"),
        finished_deals=_int_list(value.get("finished_deals"), f"{where} finished_deals"),
        rule_set=_object(value.get("rule_set"), f"{where} rule_set"),
        seat_count=_int(value.get("seat_count"), f"{where} seat_count"),
        segments=tuple(parsed),
        withheld=str(value["withheld"]),
        format_version=version,
    )


# An event line's fields in one call (a missing field sends the line to the named checks).
_EVENT_FIELDS: Final = operator.itemgetter(
    "position", "version", "type", "schema_version", "data", "metadata", "hash"
)


def _exported_event(
    position: int,
    version: int,
    event_type: str,
    schema_version: int,
    data: JsonObject,
    metadata: JsonObject,
    digest: bytes,
) -> ExportedEvent:
    """``ExportedEvent(position, version, event_type, schema_version, data, metadata, digest)``,
    made for the many lines of an export without the frozen dataclass's ``__init__``, which sets
    each field through ``object.__setattr__``: the class has no defaults and no
    ``__post_init__``, so filling the new instance's ``__dict__`` gives an equal instance with
    the same attributes (tests/audit/test_audit_fast_paths.py holds the two to each other)."""
    return from_fields(
        ExportedEvent,
        {
            "position": position,
            "version": version,
            "type": event_type,
            "schema_version": schema_version,
            "data": data,
            "metadata": metadata,
            "hash": digest,
        },
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
    if (
        type(position) is int
        and type(version) is int
        and type(schema_version) is int
        and type(event_type) is str
        and type(data) is dict
        and type(metadata) is dict
        and type(hash_text) is str
    ):
        return _event_of_typed_fields(
            position, version, event_type, schema_version, data, metadata, hash_text
        )
    return None


def _event_of_typed_fields(
    position: int,
    version: int,
    event_type: str,
    schema_version: int,
    data: JsonObject,
    metadata: JsonObject,
    hash_text: str,
) -> ExportedEvent | None:
    """The event of fields whose types hold, if the type is named and the hash is 64 hex
    digits; None sends the line to the checks that name the bad field."""
    if not event_type or len(hash_text) != 64:
        return None
    try:
        digest = bytes.fromhex(hash_text)
    except ValueError:
        return None
    return _exported_event(position, version, event_type, schema_version, data, metadata, digest)


def event_from_dict(value: Mapping[str, Any], where: str) -> ExportedEvent:
    """Read one event line's object; raises ``ExportFormatError`` naming the bad field."""
    well_formed = _well_formed_event(value)
    if well_formed is not None:
        return well_formed
    event_type = value.get("type")
    _require(isinstance(event_type, str) and bool(event_type), where, "type must be a string")
    assert isinstance(event_type, str)
    return ExportedEvent(
        position=_int(value.get("position"), f"{where} position"),
        version=_int(value.get("version"), f"{where} version"),
        type=event_type,
        schema_version=_int(value.get("schema_version"), f"{where} schema_version"),
        data=_object(value.get("data"), f"{where} data"),
        metadata=_object(value.get("metadata"), f"{where} metadata"),
        hash=_hex(value.get("hash"), f"{where} hash"),
    )


class _EventLine(msgspec.Struct, forbid_unknown_fields=True):
    """An event line as msgspec reads it when every field is there with its type and no other
    (msgspec would skip an unknown field's value unread, a float in it included; such a line
    takes the usual path, which ignores extra fields but refuses a float anywhere)."""

    position: int
    version: int
    type: str
    schema_version: int
    data: dict[str, Any]
    metadata: dict[str, Any]
    hash: str


_QUICK_EVENT_DECODE: Final = msgspec.json.Decoder(_EventLine, float_hook=_refuse_float).decode


def _quick_event(line: str) -> ExportedEvent | None:
    """``_well_formed_event(_parse_line(line))`` in one msgspec call with the types checked in C;
    None where that is not certain (a field missing or of another type, a float, bad JSON …),
    and the line then takes the usual path, which names what is wrong. msgspec's ``int`` takes
    JSON integers only (no ``true``), and the last of duplicate keys wins, as in json
    (tests/audit/test_export_parsing.py compares the two paths)."""
    try:
        parsed = _QUICK_EVENT_DECODE(line)
    except _QUICK_REFUSED:
        return None
    return _event_of_typed_fields(
        parsed.position,
        parsed.version,
        parsed.type,
        parsed.schema_version,
        parsed.data,
        parsed.metadata,
        parsed.hash,
    )


def read_export(lines: Iterable[str]) -> AuditExport:
    """Parse an export from its lines (blank lines are ignored).

    Only the shape is checked here; whether the content holds is the verifier's question.
    """
    header: ExportHeader | None = None
    events: list[ExportedEvent] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if header is not None:
            quick = _quick_event(line)
            if quick is not None:
                events.append(quick)
                continue
        value = _parse_line(line, number)
        if header is None:
            header = header_from_dict(value, f"line {number}")
        else:
            # The place is formatted only for a line that needs the field-by-field checks.
            event = _well_formed_event(value)
            events.append(event if event is not None else event_from_dict(value, f"line {number}"))
    if header is None:
        raise ExportFormatError("the export is empty: no header line")
    return AuditExport(header=header, events=tuple(events), parsed_json=True)


# -- selecting what to export (from a stream read by the caller) ---------------------------------


def _deal_of(event: RecordedEvent) -> int | None:
    number = event.data.get("deal_number")
    return number if isinstance(number, int) else None


@dataclass(frozen=True)
class _DealSpan:
    """Where one deal's events lie in the stream (list indexes, inclusive)."""

    number: int
    first: int
    last: int
    finished: bool


def _deal_spans(events: Sequence[RecordedEvent]) -> list[_DealSpan]:
    spans: list[_DealSpan] = []
    for index, event in enumerate(events):
        if event.type == "DealStarted":
            number = _deal_of(event)
            if number is not None:
                spans.append(_DealSpan(number, index, index, False))
        elif spans:
            current = spans[-1]
            finished = current.finished or (
                event.type == "DealScored" and _deal_of(event) == current.number
            )
            # SeriesCompleted (and SeriesStarted) follow the last deal's DealScored and belong to
            # that deal.
            spans[-1] = _DealSpan(current.number, current.first, index, finished)
    return spans


def _opening_end(events: Sequence[RecordedEvent]) -> int:
    """Index of the last event before the first deal (the table's opening)."""
    last = 0
    for index, event in enumerate(events):
        if event.type not in OPENING_TYPES:
            break
        last = index
    return last


def _check_table(events: Sequence[RecordedEvent], requester: Requester, table_id: str) -> None:
    if not events or events[0].type != "TableCreated":
        raise NothingToExportError("TABLE_NOT_FOUND", f"no table {table_id}")
    if requester.is_operator:
        return
    seated = any(
        event.type == "PlayerSeated" and event.data.get("player_id") == requester.player_id
        for event in events
    )
    if not seated:
        raise ExportAccessError(
            "NOT_SEATED", f"you do not hold a seat at table {table_id}: only its players may"
        )


def _segments(events: Sequence[RecordedEvent], ranges: Sequence[tuple[int, int]]) -> list[Segment]:
    """Segments for inclusive index ranges (in order), merging ranges that touch."""
    merged: list[tuple[int, int]] = []
    for first, last in ranges:
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    segments = []
    for first, last in merged:
        anchor = (
            GENESIS_ANCHOR
            if first == 0
            else ChainAnchor(events[first - 1].version, events[first - 1].hash)
        )
        segments.append(
            Segment(anchor, events[first].version, events[last].version, events[last].hash)
        )
    return segments


def _build(
    events: Sequence[RecordedEvent],
    scope: str,
    ranges: Sequence[tuple[int, int]],
    spans: Sequence[_DealSpan],
) -> AuditExport:
    created = events[0]
    segments = _segments(events, ranges)
    chosen = [
        event
        for segment in segments
        for event in events
        if segment.first_version <= event.version <= segment.last_version
    ]
    table_id = str(created.data.get("table_id", created.stream_id.removeprefix(STREAM_PREFIX)))
    rule_set = created.data.get("rule_set")
    seat_count = created.data.get("seat_count")
    header = ExportHeader(
        table_id=table_id,
        stream_id=created.stream_id,
        scope=scope,
        deals=tuple(span.number for span in spans),
        finished_deals=tuple(span.number for span in spans if span.finished),
        rule_set=rule_set if isinstance(rule_set, dict) else {},
        seat_count=seat_count if isinstance(seat_count, int) else 0,
        segments=tuple(segments),
    )
    return AuditExport(
        header=header,
        events=tuple(
            ExportedEvent(
                position=event.position,
                version=event.version,
                type=event.type,
                schema_version=event.schema_version,
                data=event.data,
                metadata=event.metadata,
                hash=event.hash,
            )
            for event in chosen
        ),
    )


def select_table(
    events: Sequence[RecordedEvent], requester: Requester, table_id: str = ""
) -> AuditExport:
    """The export of a whole table (its series) from the table's stream, read in full.

    The operator gets every event, a running deal included up to its first reveal (its seed is not
    in the log; see ``_withheld_reveals``). A player of the table gets the events up to the end of
    the last finished deal: a running deal is left out entirely.
    """
    _check_table(events, requester, table_id)
    spans = _deal_spans(events)
    last = len(events) - 1
    running = [span for span in spans if not span.finished]
    if running and not requester.is_operator:
        last = running[0].first - 1
        spans = [span for span in spans if span.finished]
    elif running:
        last = _withheld_reveals(events, running[0])
    return _build(events, "table", [(0, last)], spans)


def select_deal(
    events: Sequence[RecordedEvent], deal_number: int, requester: Requester, table_id: str = ""
) -> AuditExport:
    """The export of one deal: the table's opening plus the deal's consecutive events.

    A player may export only a finished deal of a table where they hold a seat
    (``ExportAccessError`` otherwise); the operator may export a running deal too, up to its first
    reveal (``_withheld_reveals``).
    """
    _check_table(events, requester, table_id)
    spans = [span for span in _deal_spans(events) if span.number == deal_number]
    if not spans:
        raise NothingToExportError(
            "DEAL_NOT_FOUND", f"table {table_id or events[0].stream_id} has no deal {deal_number}"
        )
    span = spans[0]
    if not span.finished and not requester.is_operator:
        raise ExportAccessError(
            "DEAL_NOT_FINISHED",
            f"deal {deal_number} is still being played: players may export it once it is scored",
        )
    last = span.last if span.finished else _withheld_reveals(events, span)
    return _build(events, "deal", [(0, _opening_end(events)), (span.first, last)], [span])


def _withheld_reveals(events: Sequence[RecordedEvent], running: _DealSpan) -> int:
    """Index of the last event of a running deal that may be exported: the one before its first
    ``ArrangementRevealed``.

    A reveal carries a seat's rows and nonce, which nobody may see before the deal is scored (the
    API's views hold them back until then too), the operator included; the export stops there, so
    its chain stays whole and the deal reads as pending.
    """
    for index in range(running.first, running.last + 1):
        if events[index].type == "ArrangementRevealed":
            return index - 1
    return running.last

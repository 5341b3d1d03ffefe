"""The hash chain that makes each stream of the log tamper-evident.

Definition (also in docs/store.md, so a verifier can be written in any language)::

    hash(1) = SHA-256(GENESIS_HASH || canonical_event_bytes(event 1))
    hash(n) = SHA-256(hash(n - 1) || canonical_event_bytes(event n))

where ``GENESIS_HASH`` is 32 zero bytes and ``canonical_event_bytes`` is the UTF-8 encoding of the
canonical JSON of the object
``{"data", "metadata", "schema_version", "stream", "type", "version"}``: keys sorted, no
whitespace (separators ``,`` and ``:``), non-ASCII characters written as themselves, integers
only (a float is refused). The global position is not hashed: it is assigned by the
database, and the chain is per stream so a stream can be exported and verified on its own.

Pure: no database imports, so the audit and the offline verifier reuse it as is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import orjson

from sapsam.log.records import JsonObject, JsonValue, RecordedEvent

GENESIS_HASH = bytes(32)


class CanonicalJsonError(ValueError):
    """A value that has no canonical JSON form here (a float, a non-string key, NaN …)."""


def _utf8(text: str) -> bytes:
    # A lone surrogate (JSON "\ud800") parses into a str but has no UTF-8 form: not canonical.
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise CanonicalJsonError(
            "not canonical JSON: a lone surrogate, which has no UTF-8 form"
        ) from None


def _first_problem(value: object) -> str | None:
    """What in ``value`` would not survive a jsonb round trip byte for byte, if anything.

    Walks the value with an explicit stack and exact type checks first: this runs on every event
    appended, so it is kept cheap: a container's plain str and int members are checked where they
    are met instead of pushed, and nothing calls ``typing.cast`` (a real call at run time).
    int and str subclasses (a Card, an IntEnum) are fine.
    """
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            for key in item:
                # Exactly str: a subclass could make two equal-looking keys, one of which jsonb
                # would drop, and orjson refuses it anyway.
                if type(key) is not str:
                    return f"an object key that is not a string ({key!r})"
                if "\x00" in key:
                    return "a NUL character in an object key (jsonb cannot store it)"
            members = item.values()
        elif kind is list or kind is tuple:
            members = item
        elif kind is int or kind is bool or item is None:
            continue
        elif kind is str:
            if "\x00" in item:
                return "a NUL character (jsonb cannot store it)"
            continue
        elif isinstance(item, float):
            return f"a float ({item!r}); events carry integers only"
        elif isinstance(item, str):
            if "\x00" in item:
                return "a NUL character (jsonb cannot store it)"
            continue
        elif isinstance(item, int):
            continue
        elif isinstance(item, dict):
            stack.append(dict(item))
            continue
        elif isinstance(item, list | tuple):
            stack.extend(item)
            continue
        else:
            return f"a {kind.__name__}, which is not JSON here (use dict, list, str, int, bool)"
        for member in members:
            member_kind = type(member)
            if member_kind is str:
                if "\x00" in member:
                    return "a NUL character (jsonb cannot store it)"
            elif member_kind is not int and member_kind is not bool and member is not None:
                stack.append(member)
    return None


# One encoder for every call: json.dumps with options builds a new encoder each time.
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def _dumps(value: object) -> str:
    return _ENCODER.encode(value)


def _make_parsed_dumps() -> Callable[[object], str]:
    """``_dumps`` for values parsed from JSON, made once instead of per call.

    ``JSONEncoder.encode`` builds a new C encoder on every call; a parsed value has no cycles, so
    one encoder without the cycle markers serves every call (same options, same text). Falls back
    to ``_dumps`` where the C encoder is missing.
    """
    make_c_encoder = getattr(json.encoder, "c_make_encoder", None)
    if make_c_encoder is None:
        return _dumps
    c_encoder = make_c_encoder(
        None,
        _ENCODER.default,
        json.encoder.encode_basestring,
        None,
        _ENCODER.key_separator,
        _ENCODER.item_separator,
        True,
        False,
        False,
    )

    def parsed_dumps(value: object) -> str:
        return "".join(c_encoder(value, 0))

    return parsed_dumps


_parsed_dumps = _make_parsed_dumps()


_ORJSON_DUMPS: Final = orjson.dumps
_ORJSON_SORTED: Final = orjson.OPT_SORT_KEYS
_ORJSON_REFUSED: Final = orjson.JSONEncodeError


def _event_object(
    stream_id: str,
    version: int,
    event_type: str,
    schema_version: int,
    data: JsonObject,
    metadata: JsonObject,
) -> dict[str, JsonValue]:
    """The object whose canonical JSON is an event's chained bytes (see the module docstring)."""
    return {
        "data": data,
        "metadata": metadata,
        "schema_version": schema_version,
        "stream": stream_id,
        "type": event_type,
        "version": version,
    }


def _quick_event_bytes(event_object: dict[str, JsonValue]) -> bytes | None:
    """``canonical_event_bytes`` of a parsed event's ``_event_object`` in one orjson call, or
    None where that cannot stand for it (orjson refuses a part, or a ``\\u0000`` appears: the
    callers' json path decides those). The event object's keys sort as in the definition, and
    orjson writes each part as the json path does (``_checked_bytes``), so the bytes are the
    same."""
    try:
        event_bytes = _ORJSON_DUMPS(event_object, option=_ORJSON_SORTED)
    except _ORJSON_REFUSED:
        return None
    return None if b"\\u0000" in event_bytes else event_bytes


def json_string(text: str) -> bytes:
    """A string as canonical JSON (quoted and escaped), UTF-8."""
    return _utf8(_ENCODER.encode(text))


def _checked_bytes(value: JsonValue) -> bytes:
    """The canonical bytes of a value ``_first_problem`` passed.

    orjson first. For such a value (dict with string keys, list or tuple, str, int, bool, None,
    and their subclasses: an IntEnum, a Card, written as their int or text as json writes them)
    orjson with sorted keys writes the same bytes as the json encoder: keys in code point order,
    separators ``,`` and ``:``, non-ASCII as itself, the same escapes for quotes, backslashes
    and control characters. Where orjson refuses (an integer beyond 64 bits, a lone surrogate,
    nesting deeper than 254) the json encoder made once decides, and ``_utf8`` refuses a lone
    surrogate. tests/audit/test_orjson_canonical.py holds the two encoders to each other.
    """
    try:
        return _ORJSON_DUMPS(value, option=_ORJSON_SORTED)
    except _ORJSON_REFUSED:
        return _utf8(_parsed_dumps(value))


def canonical_json(value: JsonValue) -> bytes:
    """The canonical JSON bytes of a value: sorted keys, no spaces, UTF-8, no floats."""
    problem = _first_problem(value)
    if problem is not None:
        raise CanonicalJsonError(f"not canonical JSON: {problem}")
    return _checked_bytes(value)


def canonical_json_each(values: Sequence[JsonValue]) -> list[bytes]:
    """``canonical_json`` of each value, checked in one walk (the append path's batches)."""
    problem = _first_problem(list(values))
    if problem is not None:
        raise CanonicalJsonError(f"not canonical JSON: {problem}")
    return [_checked_bytes(value) for value in values]


def assemble_event_bytes(
    stream_id: str,
    version: int,
    event_type: str,
    schema_version: int,
    canonical_data: bytes,
    canonical_metadata: bytes,
) -> bytes:
    """``canonical_event_bytes`` from the already canonical data and metadata.

    The keys of the event object sort as data < metadata < schema_version < stream < type <
    version, and a nested canonical value is the same bytes as on its own, so concatenating the
    parts gives exactly the canonical JSON of the whole (tested against ``canonical_json``).
    """
    return assemble_from_json_parts(
        json_string(stream_id),
        version,
        json_string(event_type),
        schema_version,
        canonical_data,
        canonical_metadata,
    )


def assemble_from_json_parts(
    stream_json: bytes,
    version: int,
    type_json: bytes,
    schema_version: int,
    canonical_data: bytes,
    canonical_metadata: bytes,
) -> bytes:
    """``assemble_event_bytes`` with the stream id and type already as JSON strings."""
    return b'{"data":%b,"metadata":%b,"schema_version":%d,"stream":%b,"type":%b,"version":%d}' % (
        canonical_data,
        canonical_metadata,
        schema_version,
        stream_json,
        type_json,
        version,
    )


def canonical_event_bytes(
    stream_id: str,
    version: int,
    event_type: str,
    schema_version: int,
    data: JsonObject,
    metadata: JsonObject,
    checked: bool = True,
) -> bytes:
    """The bytes of one event that the chain hashes (see the module docstring).

    ``checked=False`` is only for data and metadata parsed from JSON with floats refused (an
    export's lines): such values can fail the walk only by a NUL, which is looked for in the
    encoded text instead, so it skips the walk with the same bytes and errors.
    """
    if not checked:
        # One encoding of the whole event object: its keys sort as in the definition, so this is
        # the same text as assembling the parts. orjson first (``_quick_event_bytes``), json where
        # orjson refuses. A NUL anywhere sends it to the checked path, which raises for a NUL in
        # data or metadata exactly as before.
        event_object = _event_object(stream_id, version, event_type, schema_version, data, metadata)
        quick = _quick_event_bytes(event_object)
        if quick is not None:
            return quick
        text = _parsed_dumps(event_object)
        if "\\u0000" not in text:
            return _utf8(text)
    return assemble_event_bytes(
        stream_id,
        version,
        event_type,
        schema_version,
        canonical_json(data),
        canonical_json(metadata),
    )


def chain_hash(previous_hash: bytes, event_bytes: bytes) -> bytes:
    """The hash of an event given the previous event's hash and its canonical bytes."""
    return hashlib.sha256(previous_hash + event_bytes).digest()


def event_hash(previous_hash: bytes, event: RecordedEvent, checked: bool = True) -> bytes:
    """Recompute the hash a recorded event should carry (``checked`` as in
    ``canonical_event_bytes``)."""
    return chain_hash(
        previous_hash,
        canonical_event_bytes(
            event.stream_id,
            event.version,
            event.type,
            event.schema_version,
            event.data,
            event.metadata,
            checked,
        ),
    )


@dataclass(frozen=True)
class ChainProblem:
    """One place where a stream's chain does not hold."""

    version: int
    position: int
    reason: str


@dataclass(frozen=True)
class ChainReport:
    """The outcome of checking one stream's chain.

    ``intact`` is True when every event's hash matches and the versions run on without a gap.
    ``problems`` lists each break in order; the first one is where tampering (or loss) begins.
    """

    stream_id: str
    events_checked: int
    last_hash: bytes
    problems: tuple[ChainProblem, ...]

    @property
    def intact(self) -> bool:
        """True when the chain holds over every event checked."""
        return not self.problems

    @property
    def first_broken_version(self) -> int | None:
        """The version of the first event that fails the check, if any."""
        return self.problems[0].version if self.problems else None


class ChainedEvent(Protocol):
    """What the chain check reads of an event besides its stream: a ``RecordedEvent``, or an
    exported event whose stream the export's header names."""

    @property
    def position(self) -> int: ...

    @property
    def version(self) -> int: ...

    @property
    def type(self) -> str: ...

    @property
    def schema_version(self) -> int: ...

    @property
    def data(self) -> JsonObject: ...

    @property
    def metadata(self) -> JsonObject: ...

    @property
    def hash(self) -> bytes: ...


def verify_stream_chain(
    events: Sequence[RecordedEvent],
    previous_hash: bytes = GENESIS_HASH,
    previous_version: int = 0,
    parsed_json: bool = False,
) -> ChainReport:
    """Check that ``events`` (one stream, in version order) form an unbroken hash chain.

    By default the events must start at version 1; pass the hash and version of the event before
    the first one to check a tail of a stream. Each stored hash is compared with the hash recomputed
    from the event's content and the previous *stored* hash, so an edited event is reported at its
    own version, and a re-hashed edit (hash updated to match) breaks the link to the next event.
    ``parsed_json=True`` says the events' data and metadata were parsed from JSON with floats
    refused, so they are hashed through ``canonical_event_bytes(checked=False)`` (same outcome,
    faster).
    """
    stream_id = events[0].stream_id if events else ""
    return _verify_chain(stream_id, events, previous_hash, previous_version, parsed_json, True)


def verify_chain_of_stream(
    stream_id: str,
    events: Sequence[ChainedEvent],
    previous_hash: bytes = GENESIS_HASH,
    previous_version: int = 0,
    parsed_json: bool = False,
) -> ChainReport:
    """``verify_stream_chain`` for events that all belong to ``stream_id`` by construction (the
    events of an export, whose header names the stream), without copying them into records."""
    return _verify_chain(stream_id, events, previous_hash, previous_version, parsed_json, False)


def _verify_chain(
    stream_id: str,
    events: Sequence[Any],
    previous_hash: bytes,
    previous_version: int,
    parsed_json: bool,
    check_stream: bool,
) -> ChainReport:
    """The walk of ``verify_stream_chain``; ``check_stream`` compares each event's stream id."""
    problems: list[ChainProblem] = []
    checked = not parsed_json
    expected_previous = previous_hash
    expected_version = previous_version + 1
    for event in events:
        if check_stream and event.stream_id != stream_id:
            problems.append(
                ChainProblem(
                    event.version, event.position, f"belongs to stream {event.stream_id!r}"
                )
            )
        if event.version != expected_version:
            problems.append(
                ChainProblem(
                    event.version,
                    event.position,
                    f"version {event.version} where {expected_version} was expected",
                )
            )
        try:
            recomputed = chain_hash(
                expected_previous,
                canonical_event_bytes(
                    # A record hashes with its own stream id, as event_hash does.
                    event.stream_id if check_stream else stream_id,
                    event.version,
                    event.type,
                    event.schema_version,
                    event.data,
                    event.metadata,
                    checked,
                ),
            )
        except CanonicalJsonError as error:
            problems.append(ChainProblem(event.version, event.position, f"not canonical: {error}"))
        else:
            if recomputed != event.hash:
                problems.append(
                    ChainProblem(
                        event.version,
                        event.position,
                        "hash does not match the event's content and the previous hash",
                    )
                )
        expected_previous = event.hash
        expected_version = event.version + 1
    return ChainReport(
        stream_id=stream_id,
        events_checked=len(events),
        last_hash=expected_previous,
        problems=tuple(problems),
    )

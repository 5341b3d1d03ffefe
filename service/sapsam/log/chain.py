"""The hash chain that makes each stream of the log tamper-evident, and the canonical JSON
it hashes.

Definition (also in docs/audit.md §3 and docs/store.md, so a verifier can be written in any
language)::

    hash(1) = SHA-256(GENESIS_HASH || canonical_event_bytes(event 1))
    hash(n) = SHA-256(hash(n - 1) || canonical_event_bytes(event n))

where ``GENESIS_HASH`` is 32 zero bytes and ``canonical_event_bytes`` is the canonical JSON of the
object ``{"data", "metadata", "schema_version", "stream", "type", "version"}``. Canonical JSON is
RFC 8785 (the JSON Canonicalization Scheme, JCS) restricted to what events hold
(docs/fairness.md §18): keys sorted by their UTF-16 code units, no whitespace, strings escaped as
JCS escapes them, integers only, within ±(2^53 − 1); a float, a NUL character, a lone surrogate,
a key that is not a string are refused. Any JCS library gives the same bytes for whatever this
module accepts (tests/audit/test_canonical_jcs.py holds it to the ``rfc8785`` package). The
global position is not hashed: it is assigned by the database, and the chain is per stream so a
stream can be exported and verified on its own.

Pure: no database imports, so the audit and the offline verifier reuse it as is.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import orjson

from sapsam.log.records import JsonObject, JsonValue, RecordedEvent

GENESIS_HASH = bytes(32)

# JSON numbers are IEEE 754 doubles to JCS (and to JavaScript): the integers it writes exactly.
MAX_SAFE_INTEGER: Final = 2**53 - 1


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
    int and str subclasses (a Card, an IntEnum) are fine. Integers beyond ±(2^53 − 1) are not
    looked for here: orjson refuses them (``OPT_STRICT_INTEGER``) and ``_reference_bytes`` says
    so, which keeps this walk as cheap as it was.
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


# The reference encoder: keys in the order given (``_jcs_ordered`` puts them in JCS order), no
# spaces, non-ASCII as itself, and json's string escapes, which are JCS's: \" \\ \b \f \n \r \t
# and \u00xx (lower-case hex) for the other characters below U+0020, nothing else escaped.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _utf16_units(key: str) -> bytes:
    # Big-endian UTF-16 bytes compare as the code units do (RFC 8785 §3.2.3). surrogatepass: a
    # lone surrogate still sorts, and _utf8 refuses it afterwards with its own message.
    return key.encode("utf-16-be", "surrogatepass")


def _out_of_range(number: int) -> CanonicalJsonError:
    return CanonicalJsonError(
        f"not canonical JSON: the integer {number} is outside ±(2^53 - 1), which JSON numbers "
        "(IEEE 754 doubles) cannot all hold exactly"
    )


def _jcs_ordered(value: Any) -> Any:
    """A copy of a value the walk passed with every object's keys in JCS order (by UTF-16 code
    units), so that an encoder writing keys in the order given writes JCS; an integer outside
    ±(2^53 − 1) raises ``CanonicalJsonError``. An explicit stack, not recursion: the reference
    takes over from orjson exactly where nesting is deep."""
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, slot = stack.pop()
        item = holder[slot]
        if isinstance(item, dict):
            ordered = {key: item[key] for key in sorted(item, key=_utf16_units)}
            holder[slot] = ordered
            stack.extend((ordered, key) for key in ordered)
        elif isinstance(item, list | tuple):
            copied = list(item)
            holder[slot] = copied
            stack.extend((copied, index) for index in range(len(copied)))
        elif (
            isinstance(item, int)
            and not isinstance(item, bool)
            and not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER
        ):
            raise _out_of_range(item)
    return root[0]


def _reference_bytes(value: Any) -> bytes:
    """The canonical bytes of a value the walk passed, the slow and plain way: what orjson's
    bytes are held to, and what decides where orjson cannot stand for it."""
    return _utf8(_ENCODER.encode(_jcs_ordered(value)))


_ORJSON_DUMPS: Final = orjson.dumps
# Sorted keys (by code point, which is JCS's order unless a key holds a character beyond U+FFFF:
# see _checked_bytes) and integers refused beyond ±(2^53 - 1), as JCS requires.
_ORJSON_OPTIONS: Final = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
_ORJSON_REFUSED: Final = orjson.JSONEncodeError
# A UTF-8 lead byte of a character beyond U+FFFF (4 bytes, 0xF0-0xF4).
_ASTRAL_LEAD: Final = re.compile(b"[\xf0-\xf4]").search


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
    None where that cannot stand for it (orjson refuses a part, such as an integer beyond
    ±(2^53 − 1); a ``\\u0000`` appears; a character beyond U+FFFF appears, which may sort a key
    otherwise): the checked path decides those. The event object's keys sort as in the
    definition, and orjson writes each part as ``_checked_bytes`` does, so the bytes are the
    same."""
    try:
        event_bytes = _ORJSON_DUMPS(event_object, option=_ORJSON_OPTIONS)
    except _ORJSON_REFUSED:
        return None
    if b"\\u0000" in event_bytes:
        return None
    if event_bytes.isascii() or _ASTRAL_LEAD(event_bytes) is None:
        return event_bytes
    return None


def json_string(text: str) -> bytes:
    """A string as canonical JSON (quoted and escaped), UTF-8."""
    return _utf8(_ENCODER.encode(text))


def _checked_bytes(value: JsonValue) -> bytes:
    """The canonical bytes of a value ``_first_problem`` passed.

    orjson first. For such a value (dict with string keys, list or tuple, str, int, bool, None,
    and their subclasses: an IntEnum, a Card, written as their int or text as json writes them)
    orjson with sorted keys writes JCS's bytes: the same escapes, separators and integers, and
    keys in code point order, which is JCS's UTF-16 order unless a key holds a character beyond
    U+FFFF (its surrogates sort below U+E000-U+FFFF in UTF-16). So where the output holds such a
    character at all, or orjson refuses (an integer beyond ±(2^53 − 1), a lone surrogate,
    nesting deeper than 254), ``_reference_bytes`` decides. tests/audit/test_canonical_jcs.py
    holds both to the ``rfc8785`` package.
    """
    try:
        encoded = _ORJSON_DUMPS(value, option=_ORJSON_OPTIONS)
    except _ORJSON_REFUSED:
        return _reference_bytes(value)
    if encoded.isascii() or _ASTRAL_LEAD(encoded) is None:
        return encoded
    return _reference_bytes(value)


def canonical_json(value: JsonValue) -> bytes:
    """The canonical JSON bytes of a value (RFC 8785, restricted: see the module docstring)."""
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
    for number in (version, schema_version):
        if not -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
            raise _out_of_range(number)
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
    """``assemble_event_bytes`` with the stream id and type already as JSON strings (the append
    path's versions are the database's, far inside ±(2^53 − 1))."""
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
        # One orjson encoding of the whole event object: its keys sort as in the definition, so
        # this is the same text as assembling the parts. Anything it cannot stand for (a NUL,
        # a refused part, a character beyond U+FFFF) takes the checked path, which decides.
        quick = _quick_event_bytes(
            _event_object(stream_id, version, event_type, schema_version, data, metadata)
        )
        if quick is not None:
            return quick
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

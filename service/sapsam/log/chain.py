"""The hash chain that makes each stream of the log tamper-evident, and the event bytes it
hashes.

Definition (also in docs/audit.md §3 and docs/store.md, so a verifier can be written in any
language)::

    hash(1) = SHA-256(GENESIS_HASH || canonical_event_bytes(event 1))
    hash(n) = SHA-256(hash(n - 1) || canonical_event_bytes(event n))

where ``GENESIS_HASH`` is 32 zero bytes and ``canonical_event_bytes`` is the canonical JSON
(``sapsam.log.canonical_json``: RFC 8785, restricted to what events hold) of the object
``{"data", "metadata", "schema_version", "stream", "type", "version"}``. The global position is
not hashed: it is assigned by the database, and the chain is per stream so a stream can be
exported and verified on its own.

Pure: no database imports, so the audit and the offline verifier reuse it as is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from hashlib import sha256 as _sha256
from typing import Any, Protocol

from sapsam.frozen import from_fields
from sapsam.log.canonical_json import (
    MAX_SAFE_INTEGER,
    CanonicalJsonError,
    canonical_json,
    integer_out_of_range,
    json_string,
    quick_canonical_bytes,
    quick_canonical_joined,
)
from sapsam.log.records import JsonObject, JsonValue, RecordedEvent

GENESIS_HASH = bytes(32)


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
            raise integer_out_of_range(number)
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
        quick = quick_canonical_bytes(
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


def _intact_chain_end(
    stream_id: str, events: Sequence[Any], previous_hash: bytes, previous_version: int
) -> bytes | None:
    """The last hash of an intact chain of parsed events (``canonical_event_bytes`` with
    ``checked=False``, written out: an export's every event takes it), or None at the first
    thing that is not the usual (a version out of turn, bytes only the checked path decides, a
    hash that differs): the walk then runs from the start and reports what it finds. An event
    whose reader kept its data and metadata's canonical text (``canonical_content``) is hashed
    from that text and its other members, the same bytes."""
    expected_previous = previous_hash
    expected_version = previous_version + 1
    for event in events:
        if event.version != expected_version:
            return None
        # The event object's members after data and metadata, which sort first (_event_object).
        members: dict[str, JsonValue] = {
            "schema_version": event.schema_version,
            "stream": stream_id,
            "type": event.type,
            "version": expected_version,
        }
        content = event.canonical_content
        event_bytes = (
            quick_canonical_joined(content, members)
            if content is not None
            else quick_canonical_bytes({"data": event.data, "metadata": event.metadata, **members})
        )
        if event_bytes is None:
            return None
        if _sha256(expected_previous + event_bytes).digest() != event.hash:
            return None
        expected_previous = event.hash
        expected_version += 1
    return expected_previous


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

    @property
    def canonical_content(self) -> bytes | None:
        """The canonical JSON of ``{"data": data, "metadata": metadata}`` if known, else None."""
        ...


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
    if parsed_json and not check_stream:
        intact = _intact_chain_end(stream_id, events, previous_hash, previous_version)
        if intact is not None:
            # ChainReport(...) without the frozen __init__ (no __post_init__; every field given).
            return from_fields(
                ChainReport,
                {
                    "stream_id": stream_id,
                    "events_checked": len(events),
                    "last_hash": intact,
                    "problems": (),
                },
            )
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

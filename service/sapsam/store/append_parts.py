"""What both ways of appending compute alike: the append's checked arguments, metadata and
canonical bytes before the database is touched, the chain's hashes, and the recorded events and
answer once the rows are back.

Why apart: the ordinary append (``sapsam.store.appends``) and the commit group's append without
a pooled connection (``sapsam.store.group_appends``) differ only in how the statement reaches
the database; what goes into it and what comes out of it is this module's, so both give the same
bytes, hashes and answers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sapsam.frozen import from_fields
from sapsam.log.canonical_json import canonical_json, canonical_json_each, json_string
from sapsam.log.chain import assemble_from_json_parts, chain_hash
from sapsam.log.records import (
    AppendResult,
    JsonObject,
    JsonValue,
    NewEvent,
    RecordedEvent,
    recorded_event,
)
from sapsam.store.processed_requests import event_type_json, fingerprint_of_parts
from sapsam.store.reads import decode_json

RESERVED_METADATA = frozenset({"request_id", "actor", "recorded_at"})

# Stream ids as JSON strings: a stream appends many times (a table's deal is 24 calls), and its id
# goes into every event's canonical bytes and the request's fingerprint.
_stream_json = lru_cache(maxsize=4096)(json_string)


def recorded_at_now() -> str:
    """The current UTC time as the metadata's ``recorded_at`` text (microseconds, ``Z``)."""
    microseconds = time.time_ns() // 1000
    seconds, fraction = divmod(microseconds, 1_000_000)
    # The text up to the second changes once a second: made then, not on every append
    # (datetime.now(UTC).isoformat() cost ~2.4 us a call; this ~0.5).
    global _second_text
    if _second_text[0] != seconds:
        _second_text = (seconds, datetime.fromtimestamp(seconds, UTC).isoformat()[:19])
    return f"{_second_text[1]}.{fraction:06d}Z"


_second_text: tuple[int, str] = (-1, "")


@dataclass(frozen=True)
class PreparedAppend:
    """What an append computes before touching the database."""

    event_metadata: dict[str, JsonValue]
    canonical_data: list[bytes]
    canonical_metadata: bytes
    response_json: str
    type_json: dict[str, bytes]
    canonical: list[bytes]
    fingerprint: bytes


def prepare_append(
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    request_id: str,
    actor: str | None,
    metadata: JsonObject | None,
    response: JsonValue,
    request_digest: bytes | None,
) -> PreparedAppend:
    """Check the arguments and compute the metadata, the canonical bytes and the fingerprint."""
    if not events:
        raise ValueError("an append needs at least one event")
    if expected_version < 0:
        raise ValueError("expected_version must be 0 (new stream) or more")
    if request_digest is not None and len(request_digest) != 32:
        raise ValueError("a request digest is 32 bytes (SHA-256)")
    if metadata:
        clash = RESERVED_METADATA & metadata.keys()
        if clash:
            raise ValueError(f"metadata keys {sorted(clash)} are set by the store")
    event_metadata: dict[str, JsonValue] = {
        **(metadata or {}),
        "request_id": request_id,
        "recorded_at": recorded_at_now(),
    }
    if actor is not None:
        event_metadata["actor"] = actor
    canonical_data = canonical_json_each([event.data for event in events])
    canonical_metadata = canonical_json(event_metadata)
    # Stored as jsonb like the metadata, and refused (before anything is written) for what has no
    # canonical JSON form, a float say, as event data is.
    response_json = canonical_json(response).decode("utf-8")
    stream_json = _stream_json(stream_id)
    type_json = {event.type: event_type_json(event.type) for event in events}
    canonical = [
        assemble_from_json_parts(
            stream_json,
            expected_version + offset,
            type_json[event.type],
            event.schema_version,
            data,
            canonical_metadata,
        )
        for offset, (event, data) in enumerate(zip(events, canonical_data, strict=True), start=1)
    ]
    # PreparedAppend(...) without its frozen __init__'s seven object.__setattr__ (every append).
    return from_fields(
        PreparedAppend,
        {
            "event_metadata": event_metadata,
            "canonical_data": canonical_data,
            "canonical_metadata": canonical_metadata,
            "response_json": response_json,
            "type_json": type_json,
            "canonical": canonical,
            "fingerprint": fingerprint_of_parts(stream_json, events, canonical_data),
        },
    )


def chained_hashes(previous_hash: bytes, canonical: Sequence[bytes]) -> list[bytes]:
    """Each event's hash, chained from ``previous_hash``."""
    hashes: list[bytes] = []
    chained = previous_hash
    for event_bytes in canonical:
        chained = chain_hash(chained, event_bytes)
        hashes.append(chained)
    return hashes


def append_result(
    stream_id: str, request_id: str, response: JsonValue, recorded: Sequence[RecordedEvent]
) -> AppendResult:
    """The answer to an append that wrote ``recorded`` (not a replayed request)."""
    return AppendResult(
        stream_id=stream_id,
        request_id=request_id,
        first_version=recorded[0].version,
        last_version=recorded[-1].version,
        first_position=recorded[0].position,
        last_position=recorded[-1].position,
        response=response,
        replayed=False,
        events=tuple(recorded),
    )


def recorded_events(
    rows: Sequence[tuple[Any, ...]],
    stream_id: str,
    events: Sequence[NewEvent],
    canonical_data: Sequence[bytes],
    canonical_metadata: bytes,
    hashes: Sequence[bytes],
) -> list[RecordedEvent]:
    """The appended events exactly as a read will return them.

    Data and metadata are decoded from their canonical bytes rather than passed through, so
    tuples come back as lists and int subclasses as ints, as they do from the database.
    """
    if len(rows) != len(events):
        raise RuntimeError(f"inserted {len(rows)} rows for {len(events)} events")
    metadata = decode_json(canonical_metadata)
    # One decode for the whole batch: the canonical parts joined form a JSON list.
    decoded_data = decode_json(b"[" + b",".join(canonical_data) + b"]")
    return [
        recorded_event(
            int(position),
            stream_id,
            int(version),
            event.type,
            event.schema_version,
            data,
            metadata,
            event_hash,
        )
        for (position, version, _wanted), event, data, event_hash in zip(
            rows, events, decoded_data, hashes, strict=True
        )
    ]

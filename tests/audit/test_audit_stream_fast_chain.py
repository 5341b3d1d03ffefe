"""The whole-database audit's one-call chain hashing keeps every verdict of the walking one.

``audit_stream(..., from_json=True)`` (events read from the log's JSON) hashes a table's events
the way an export file's are hashed when no value is a float; a float, which jsonb can hold but
the chain never hashes, still fails as not canonical, even when its hash was forged over it.
"""

from __future__ import annotations

import orjson

from sapsam.audit.projection_audit import StreamFolds
from sapsam.audit.sample_series import recorded_stream
from sapsam.audit.stream_audit import _parsed_without_floats, audit_stream
from sapsam.domain.events import DEFAULT_CODEC
from sapsam.store.chain import GENESIS_HASH, chain_hash
from sapsam.store.records import RecordedEvent


def _as_read(events: list[RecordedEvent]) -> list[RecordedEvent]:
    """The events as ``read_stream`` gives them: data and metadata parsed from JSON."""
    return [
        RecordedEvent(
            e.position,
            e.stream_id,
            e.version,
            e.type,
            e.schema_version,
            orjson.loads(orjson.dumps(e.data)),
            orjson.loads(orjson.dumps(e.metadata)),
            e.hash,
        )
        for e in events
    ]


def _audited(events: list[RecordedEvent], from_json: bool) -> tuple[object, ...]:
    result = audit_stream(events[0].stream_id, events, StreamFolds([]), DEFAULT_CODEC, from_json)
    failed = tuple((c.name, c.detail, c.expected, c.found) for c in result.failed)
    return failed, result.events_checked, result.deals_verified, result.table_row


def _with_float_forged(events: list[RecordedEvent], version: int) -> list[RecordedEvent]:
    """A float put into one event's metadata, every hash from there on recomputed over the
    bytes orjson writes for it (what a forger would hash)."""
    forged: list[RecordedEvent] = []
    previous = GENESIS_HASH
    for e in events:
        metadata = dict(e.metadata, weight=1.5) if e.version == version else e.metadata
        event_object = {
            "data": e.data,
            "metadata": metadata,
            "schema_version": e.schema_version,
            "stream": e.stream_id,
            "type": e.type,
            "version": e.version,
        }
        previous = chain_hash(previous, orjson.dumps(event_object, option=orjson.OPT_SORT_KEYS))
        forged.append(
            RecordedEvent(
                e.position,
                e.stream_id,
                e.version,
                e.type,
                e.schema_version,
                e.data,
                metadata,
                previous,
            )
        )
    return forged


def test_a_sound_stream_gets_the_same_verdicts_either_way() -> None:
    events = _as_read(recorded_stream(4, deals=3))
    assert _parsed_without_floats(events)
    fast, walked = _audited(events, True), _audited(events, False)
    assert fast == walked
    assert fast[0] == () and fast[2] == 3


def test_a_forged_float_still_fails_the_chain_as_not_canonical() -> None:
    events = _with_float_forged(_as_read(recorded_stream(4, deals=2)), version=9)
    assert not _parsed_without_floats(events)
    fast, walked = _audited(events, True), _audited(events, False)
    assert fast == walked
    assert any(name == "chain" and "float" in detail for name, detail, *_ in fast[0]), fast[0]

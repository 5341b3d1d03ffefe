"""The chain's and the event reader's faster forms give exactly what the reference forms give:
the walk over parsed events, events made without ``__init__``, and the chain hashed from the
canonical text a line gave (split from test_audit_fast_paths.py along that seam)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from dataclasses import MISSING
from typing import Any

import pytest

from sapsam.audit.event_lines import canonical_event, exported_event
from sapsam.audit.export_format import ExportedEvent
from sapsam.log.canonical_json import CanonicalJsonError, canonical_json
from sapsam.log.chain import (
    GENESIS_HASH,
    _verify_chain,
    canonical_event_bytes,
    chain_hash,
    verify_chain_of_stream,
)


def _chain_events(
    stream_id: str, contents: list[tuple[str, dict[str, Any], dict[str, Any]]]
) -> list[ExportedEvent]:
    """Events with a correct chain where the content has a canonical form, a dummy hash where
    it has none."""
    events: list[ExportedEvent] = []
    previous = GENESIS_HASH
    for version, (event_type, data, metadata) in enumerate(contents, start=1):
        try:
            digest = chain_hash(
                previous,
                canonical_event_bytes(stream_id, version, event_type, 1, data, metadata),
            )
        except CanonicalJsonError:
            digest = bytes(32)
        events.append(ExportedEvent(version * 10, version, event_type, 1, data, metadata, digest))
        previous = digest
    return events


_ODD_CONTENTS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("DealStarted", {"deal_number": 1, "b": [1, "x", None, True]}, {"actor": "a"}),
    ("Odd", {"text": "\x00 in data"}, {}),
    ("Odd", {"text": "ok"}, {"note": "\x00 in metadata"}),
    ("Odd", {"text": "\ud800 lone surrogate"}, {}),
    ("Odd", {"text": "both \ud800 and \x00"}, {"m": "\ud800"}),
    ("Odd", {"text": "a backslash-u0000 \\u0000 written out"}, {}),
    ("Odd\ud800", {"text": "type without UTF-8"}, {}),
    ("Odd", {"é": "ünïcode ♠", "nested": {"z": 1, "a": [{"y": 2, "b": 3}]}}, {}),
    ("Odd\x00", {"text": "type with a NUL"}, {"k": "v"}),
    # Beyond orjson (integers over 64 bits) and its escapes (control characters, DEL, U+2028).
    ("Odd", {"big": 2**64, "small": -(2**63) - 1, "edge": 2**64 - 1}, {"actor": "a"}),
    ("Odd", {"text": '\x01\x1f\x7f\u2028\t"\\'}, {"big": 10**30}),
    ("Odd", {"\U00010000": 1, "\uffff": 2, "\ue000": 3}, {"deep": [[[{"b": 1, "a": 2}]]]}),
]


@pytest.mark.parametrize("stream_id", ["table-1", "table-\x00", "table-\ud800", "tàble-♠"])
def test_parsed_chain_walk_reports_what_the_general_walk_reports(stream_id: str) -> None:
    events = _chain_events(stream_id, _ODD_CONTENTS)
    tampered = [
        *events[:2],
        dataclasses.replace(events[2], data={"text": "changed"}),
        *events[3:5],
        dataclasses.replace(events[5], version=9),
        *events[6:],
    ]
    for chain in (events, tampered, tampered[3:], []):
        for anchor_hash, anchor_version in ((GENESIS_HASH, 0), (events[2].hash, 3)):
            fast = verify_chain_of_stream(stream_id, chain, anchor_hash, anchor_version, True)
            general = _verify_chain(stream_id, chain, anchor_hash, anchor_version, True, False)
            checked = _verify_chain(stream_id, chain, anchor_hash, anchor_version, False, False)
            assert fast == general == checked


def test_exported_event_made_without_init_is_the_same_event() -> None:
    values = (7, 3, "DealStarted", 1, {"deal_number": 1}, {"actor": "a"}, bytes(range(32)))
    fast = exported_event(*values[:-1], values[-1].hex())
    reference = ExportedEvent(*values)
    assert type(fast) is ExportedEvent
    assert fast == reference
    assert repr(fast) == repr(reference)
    # ``canonical_content`` is not set by ``__init__`` (not an argument): the class's None.
    assert vars(fast) == {**vars(reference), "canonical_content": None}
    assert dataclasses.astuple(fast) == (*values, None, None)  # no inclusion proof, no text
    # The fast form fills exactly the dataclass's fields: a new field (or a default, or a
    # __post_init__) must be added there too.
    assert [field.name for field in dataclasses.fields(ExportedEvent)] == list(vars(fast))
    # Two defaults, ``inclusion`` and ``canonical_content`` (None), which the fast form fills
    # explicitly as well.
    defaults = [f.name for f in dataclasses.fields(ExportedEvent) if f.default is not MISSING]
    assert defaults == ["inclusion", "canonical_content"]
    assert vars(fast)["inclusion"] is None and vars(fast)["canonical_content"] is None
    assert not hasattr(ExportedEvent, "__post_init__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.version = 4  # type: ignore[misc]
    assert dataclasses.replace(fast, version=4) == dataclasses.replace(reference, version=4)


def test_the_canonical_content_a_line_gave_is_kept_out_of_everything_else() -> None:
    values = (7, 3, "DealStarted", 1, {"deal_number": 1}, {"actor": "a"}, "ab" * 32)
    content = b'{"data":{"deal_number":1},"metadata":{"actor":"a"}}'
    fast = exported_event(*values, None, content)
    plain = exported_event(*values)
    assert fast is not None and plain is not None
    assert fast.canonical_content == content and plain.canonical_content is None
    # Not compared, not shown, not an argument: an event made or replaced in code has none, so
    # its text can never disagree with data changed by replace.
    assert fast == plain and repr(fast) == repr(plain)
    assert dataclasses.replace(fast, data={"deal_number": 2}).canonical_content is None
    assert dataclasses.replace(fast).canonical_content is None


_GENESIS: dict[str, Any] = {
    "previous_hash": GENESIS_HASH,
    "previous_version": 0,
    "parsed_json": True,
}


def _read_again(event: ExportedEvent) -> ExportedEvent:
    """The event read back from its line in the log's spelling (keys in the order given)."""
    fields = {
        "data": event.data,
        "hash": event.hash.hex(),
        "metadata": event.metadata,
        "position": event.position,
        "schema_version": event.schema_version,
        "type": event.type,
        "version": event.version,
    }
    read = canonical_event(json.dumps(fields, separators=(",", ":")))
    assert read is not None and read.canonical_content is not None
    return read


def test_a_chain_read_from_lines_is_hashed_from_their_text_with_the_same_outcome() -> None:
    """Events read from their lines carry their data and metadata's canonical text, which the
    chain hashes (``quick_canonical_joined``): the same report as events made without it, for
    lines in the log's spelling with odd contents, keys out of order, and tampered ones."""
    stream_id = "table-1"
    unsorted = {"z": 1, "a": {"y": [{"b": 1, "a": 2}], "x": 0}}
    plain_contents: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("DealStarted", {"deal_number": 1}, {"actor": "a"}),
        ("Odd", unsorted, {"m": 1, "b": 2}),
        ("Odd", {"text": '\x01\x1f\t"\\ /'}, {}),
        ("Odd", {"list": [[], {}, [{}]], "none": None, "yes": True}, {"n": -(2**53) + 1}),
    ]
    # Every line of the first chain is read in one step and carries its text.
    intact = verify_chain_of_stream(
        stream_id, [_read_again(e) for e in _chain_events(stream_id, plain_contents)], **_GENESIS
    )
    assert intact.intact and intact.events_checked == len(plain_contents)
    events = _chain_events(stream_id, plain_contents + _ODD_CONTENTS)
    for tampered in (False, True):
        read_events: list[ExportedEvent] = []
        for event in events:
            fields = {
                "position": event.position,
                "version": event.version,
                "type": event.type,
                "schema_version": event.schema_version,
                "data": {"text": "changed"} if tampered and event.version == 3 else event.data,
                "metadata": event.metadata,
                "hash": event.hash.hex(),
            }
            try:
                # The shortest spelling, keys in the order given (unsorted ones too).
                line = json.dumps(fields, separators=(",", ":"))
            except ValueError:
                continue
            read = canonical_event(line)
            if read is None:
                continue
            with contextlib.suppress(CanonicalJsonError):  # a NUL: the chain's checks decide
                content = canonical_json({"data": read.data, "metadata": read.metadata})
                assert read.canonical_content == content
            read_events.append(read)
        # Lines beyond ASCII, or not spelled by orjson, take the usual path (no text kept).
        assert len(read_events) >= 5
        plain = [dataclasses.replace(event) for event in read_events]
        for anchor_hash, anchor_version in ((GENESIS_HASH, 0), (events[2].hash, 3)):
            for chain in (read_events, read_events[2:], read_events[-1:]):
                fast = verify_chain_of_stream(stream_id, chain, anchor_hash, anchor_version, True)
                general = _verify_chain(
                    stream_id,
                    plain[len(read_events) - len(chain) :],
                    anchor_hash,
                    anchor_version,
                    False,
                    False,
                )
                assert fast == general

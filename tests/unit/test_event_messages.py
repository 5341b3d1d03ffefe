"""The event feed's converters: one per table event type, each filling its own payload field;
an event's record time on the wire."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from sapsam.api import event_messages
from sapsam.api.common_messages import timestamp_from_text
from sapsam.domain.event_codec import FAMILY_EVENT_TYPES
from sapsam.domain.events import EVENT_TYPES
from sapsam.store.append_parts import recorded_at_now
from sapsam_proto.v1 import table_event_pb2


def test_every_table_event_type_has_a_converter() -> None:
    converters = event_messages._CONVERTERS
    assert sorted(kind.TYPE for kind in EVENT_TYPES if kind not in converters) == []
    assert sorted(kind.__name__ for kind in converters if kind not in EVENT_TYPES) == []


def test_every_table_event_type_has_its_payload_field() -> None:
    # The feed's TableEvent carries one payload per event type of every family, named after it
    # in snake case.
    payloads = {field.name for field in table_event_pb2.TableEvent.DESCRIPTOR.oneofs[0].fields}
    names = {
        "".join(f"_{c.lower()}" if c.isupper() else c for c in kind.TYPE).lstrip("_")
        for kind in (*EVENT_TYPES, *FAMILY_EVENT_TYPES)
    }
    assert names == payloads


def test_a_record_time_is_the_timestamp_protobuf_parses() -> None:
    # The store's own form takes a fast path; it must agree with protobuf's parser, and any
    # other text still goes through protobuf's.
    texts = [
        "2026-12-02T04:00:00.123456Z",
        "2026-12-02T04:00:59.999999Z",
        "1970-01-01T00:00:00.000000Z",
        "2024-02-29T23:59:59.000001Z",
        recorded_at_now(),
        "2026-12-02T04:00:00Z",
        "2026-12-02T04:00:00.5+01:00",
    ]
    for text in texts:
        expected = Timestamp()
        expected.FromJsonString(text)
        assert timestamp_from_text(text) == expected, text
    assert timestamp_from_text("") == Timestamp()

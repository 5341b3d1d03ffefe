"""The event feed's converters: one per table event type, each filling its own payload field."""

from __future__ import annotations

from sapsam.api import event_messages
from sapsam.domain.events import EVENT_TYPES
from sapsam_proto.v1 import table_event_pb2


def test_every_table_event_type_has_a_converter() -> None:
    converters = event_messages._CONVERTERS
    assert sorted(kind.TYPE for kind in EVENT_TYPES if kind not in converters) == []
    assert sorted(kind.__name__ for kind in converters if kind not in EVENT_TYPES) == []


def test_every_table_event_type_has_its_payload_field() -> None:
    # The feed's TableEvent carries one payload per event type, named after it in snake case.
    payloads = {field.name for field in table_event_pb2.TableEvent.DESCRIPTOR.oneofs[0].fields}
    names = {
        "".join(f"_{c.lower()}" if c.isupper() else c for c in kind.TYPE).lstrip("_")
        for kind in EVENT_TYPES
    }
    assert names == payloads

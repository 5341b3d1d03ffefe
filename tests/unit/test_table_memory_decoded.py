"""The domain events a process keeps with a table's latest recorded events
(``sapsam.app.table_memory``): found by the recorded event's chained hash, at most
``DECODED_EVENTS`` a table, gone with the table."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from sapsam.app.table_memory import DECODED_EVENTS, TableMemory
from sapsam.domain.events import PlayerSeated
from sapsam.domain.table import INITIAL_STATE
from sapsam.log.records import RecordedEvent, recorded_event

TABLE = uuid.UUID(int=7)


def recorded(version: int) -> RecordedEvent:
    return recorded_event(
        version,
        f"table-{TABLE}",
        version,
        PlayerSeated.TYPE,
        1,
        {"seat": version, "player_id": f"p{version}"},
        {},
        version.to_bytes(32, "big"),
    )


def seated(version: int) -> PlayerSeated:
    return PlayerSeated(seat=version, player_id=f"p{version}")


def test_the_latest_decoded_events_are_found_by_their_recorded_event() -> None:
    memory = TableMemory()
    state = INITIAL_STATE
    for version in range(1, DECODED_EVENTS + 11):
        state = dataclasses.replace(state, version=version)
        memory.remember(TABLE, state, 1, [recorded(version)], [seated(version)])
    assert memory.decoded(TABLE, recorded(DECODED_EVENTS + 10)) == seated(DECODED_EVENTS + 10)
    assert memory.decoded(TABLE, recorded(11)) == seated(11)
    assert memory.decoded(TABLE, recorded(10)) is None  # older than the latest DECODED_EVENTS
    memory.forget(TABLE)
    assert memory.decoded(TABLE, recorded(DECODED_EVENTS + 10)) is None


def test_a_recorded_event_without_its_domain_event_is_refused() -> None:
    with pytest.raises(ValueError):
        TableMemory().remember(TABLE, INITIAL_STATE, 1, [recorded(1), recorded(2)], [seated(1)])

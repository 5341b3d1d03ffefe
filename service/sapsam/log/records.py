"""What the event log holds, as plain values: events to append, events as recorded, results.

Pure: no database imports, so the offline verifier and the audit can use these types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from sapsam.frozen import from_fields

# JSON as it goes into and comes out of a jsonb column. No floats: canonical bytes must round-trip
# exactly through PostgreSQL, and jsonb rewrites float text (1.0 comes back as 1.0 or 1 by type).
JsonValue: TypeAlias = bool | int | str | Sequence["JsonValue"] | Mapping[str, "JsonValue"] | None
JsonObject: TypeAlias = Mapping[str, JsonValue]


@dataclass(frozen=True)
class NewEvent:
    """An event to append: its stable type name, schema version and JSON data."""

    type: str
    data: JsonObject
    schema_version: int = 1


@dataclass(frozen=True)
class RecordedEvent:
    """An event as the log holds it.

    ``position`` is the global order over every stream; ``version`` counts 1, 2, 3 … within the
    stream. ``metadata`` holds ``request_id``, ``actor`` and ``recorded_at`` (ISO 8601, UTC) plus
    whatever the caller added. ``hash`` chains the event to the previous event of its stream (see
    ``sapsam.log.chain``).
    """

    position: int
    stream_id: str
    version: int
    type: str
    schema_version: int
    data: JsonObject
    metadata: JsonObject
    hash: bytes


def recorded_event(
    position: int,
    stream_id: str,
    version: int,
    event_type: str,
    schema_version: int,
    data: JsonObject,
    metadata: JsonObject,
    event_hash: bytes,
) -> RecordedEvent:
    """``RecordedEvent(...)`` without the frozen dataclass's ``__init__``, which sets each of the
    eight fields through ``object.__setattr__``: reads and appends make them by the thousand
    (tests/store/test_store_read_decoding.py holds them to the constructor's)."""
    return from_fields(
        RecordedEvent,
        {
            "position": position,
            "stream_id": stream_id,
            "version": version,
            "type": event_type,
            "schema_version": schema_version,
            "data": data,
            "metadata": metadata,
            "hash": event_hash,
        },
    )


@dataclass(frozen=True)
class AppendResult:
    """What one append did (or, for a retried request id, what the original append did).

    ``replayed`` is True when the request id had already been processed and nothing was appended;
    the other fields then describe the original append. ``response`` is the JSON value the caller
    stored with the original append, so an API can answer a retry identically.
    """

    stream_id: str
    request_id: str
    first_version: int
    last_version: int
    first_position: int
    last_position: int
    response: JsonValue = None
    replayed: bool = False
    events: tuple[RecordedEvent, ...] = field(default=(), compare=False)

    @property
    def version(self) -> int:
        """The stream version after this append: the expected version for the next one."""
        return self.last_version


class StoreError(Exception):
    """Base of the errors the event store raises on purpose."""


class DatabaseOpenError(RuntimeError):
    """The database cannot be opened or used as configured: unreachable, not startable, or a
    schema this role may not read or migrate. The message says why, for a person."""


class ConcurrencyConflict(StoreError):  # noqa: N818 - the name the API layer maps
    """The stream moved on since the caller read it: reload and decide again.

    Carries the stream's current version so the caller can report or retry.
    """

    def __init__(self, stream_id: str, expected_version: int, current_version: int) -> None:
        super().__init__(
            f"stream {stream_id!r} is at version {current_version}, "
            f"the append expected version {expected_version}"
        )
        self.stream_id = stream_id
        self.expected_version = expected_version
        self.current_version = current_version


class RequestIdReused(StoreError):  # noqa: N818 - the name the API layer maps
    """A request id already processed was sent again with a different stream or payload.

    A genuine retry repeats the same stream and the same events; anything else is a client bug, and
    answering it with the first result would hide that bug.
    """

    def __init__(self, request_id: str, detail: str) -> None:
        super().__init__(f"request id {request_id!r} was already used {detail}")
        self.request_id = request_id

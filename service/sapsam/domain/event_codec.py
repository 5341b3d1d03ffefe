"""Reading and writing events: (type, schema version, JSON data) and back, old versions upcast.

``EventCodec`` decodes stored data into the event classes of ``sapsam.domain.events`` (and of the
other game families, ``FAMILY_EVENT_TYPES``); ``DEFAULT_CODEC`` is the one every reader uses, with
every upcaster registered: a release that changes an event's shape raises its ``SCHEMA_VERSION``
and adds an upcaster here, and stored events are never rewritten.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias

from sapsam.domain.event_base import Event, JsonValue
from sapsam.domain.events import EVENT_TYPES, PairScored, SeatRows, SeatStanding
from sapsam.domain.open_face.events import OPEN_FACE_EVENT_TYPES
from sapsam.domain.typed_decoding import TypedDecoder, typed_decoder
from sapsam.frozen import from_fields

# Nested records, by the event field that holds a tuple of them.
_NESTED: dict[tuple[str, str], type[Any]] = {
    ("DealScored", "pairs"): PairScored,
    ("DealScored", "solver_arrangements"): SeatRows,
    ("SeriesCompleted", "standings"): SeatStanding,
}

Upcaster: TypeAlias = Callable[[dict[str, JsonValue]], dict[str, JsonValue]]


class UnknownEventError(ValueError):
    """Stored data names an event type or schema version this code cannot read."""


class EventCodec:
    """Turns events into (type, schema version, data) and back, upcasting old versions on read."""

    def __init__(
        self, event_types: tuple[type[Event], ...] = EVENT_TYPES, one_call: bool = True
    ) -> None:
        self._upcasters: dict[tuple[str, int], Upcaster] = {}
        # Per type name, what decode needs in one lookup, worked out once (decode is hot): the
        # class, its schema version, each field's name and nested record type, and whether an
        # instance is made by filling its fields in one step (see _made_by_fields).
        self._decoding: dict[
            str, tuple[type[Event], int, tuple[tuple[str, type[Any] | None], ...], bool]
        ] = {
            event_type.TYPE: (
                event_type,
                event_type.SCHEMA_VERSION,
                tuple(
                    (field.name, _NESTED.get((event_type.TYPE, field.name)))
                    for field in dataclasses.fields(event_type)
                ),
                _made_by_fields(event_type),
            )
            for event_type in event_types
        }
        # Per type name, the one-call decoder where it gives the walk's instance (None: walk;
        # ``one_call=False``: always, for the tests that hold the two to each other), worked
        # out when the type is first decoded (not at start-up: a one-deal verification reads
        # few of the types).
        self._one_call = one_call
        self._typed: dict[str, TypedDecoder | None] = {}

    def _typed_decoder(
        self,
        event_type: type[Event],
        fields: tuple[tuple[str, type[Any] | None], ...],
        by_fields: bool,
    ) -> TypedDecoder | None:
        # Only a plain dataclass (the one made by its fields, see _made_by_fields): msgspec
        # fills the fields as that does, and would skip a constructor of the type's own.
        one_call = self._one_call and by_fields
        typed = typed_decoder(event_type, dict(fields)) if one_call else None
        self._typed[event_type.TYPE] = typed
        return typed

    def register_upcaster(self, type_name: str, from_version: int, upcaster: Upcaster) -> None:
        """Teach the codec to read ``type_name`` data of ``from_version`` as the next version."""
        self._upcasters[(type_name, from_version)] = upcaster

    def encode(self, event: Event) -> tuple[str, int, dict[str, JsonValue]]:
        """The event's type name, schema version and JSON-ready data."""
        return event.TYPE, event.SCHEMA_VERSION, event.to_data()

    def decode(self, type_name: str, schema_version: int, data: Mapping[str, JsonValue]) -> Event:
        """The event for stored data, upcast to the current schema version first."""
        decoding = self._decoding.get(type_name)
        if decoding is None:
            raise UnknownEventError(f"unknown event type {type_name!r}")
        event_type, current_version, fields, by_fields = decoding
        current = data
        version = schema_version
        while version < current_version:
            upcaster = self._upcasters.get((type_name, version))
            if upcaster is None:
                raise UnknownEventError(f"no upcaster for {type_name} schema version {version}")
            current = upcaster(dict(current))
            version += 1
        if version != current_version:
            raise UnknownEventError(
                f"{type_name} schema version {schema_version} is newer than this code reads"
            )
        typed = self._typed.get(type_name, _UNDECIDED)
        if typed is _UNDECIDED:
            typed = self._typed_decoder(event_type, fields, by_fields)
        if typed is not None:
            # One msgspec call where it gives what the walk below gives (typed_decoding).
            event = typed(current)
            if event is not None:
                return event  # type: ignore[no-any-return]
        values: dict[str, Any] = {}
        for name, nested in fields:
            value = current[name]
            if nested is not None:
                # A nested list may hold nulls (a seat without one) or be null as a whole.
                values[name] = (
                    None
                    if value is None
                    else tuple(
                        [None if item is None else nested(**_from_json(item)) for item in value]
                    )
                )
            elif isinstance(value, _CONTAINERS):
                values[name] = _from_json(value)
            else:
                values[name] = value
        if by_fields:
            # Every field is in ``values`` (a missing one raised KeyError above), so filling the
            # new instance's __dict__ gives what the frozen dataclass's __init__ gives, without
            # its object.__setattr__ per field (tests/domain holds the two to each other).
            return from_fields(event_type, values)
        return event_type(**values)


_UNDECIDED: Final[Any] = object()


def _made_by_fields(event_type: type[Event]) -> bool:
    """Whether an instance equal to the constructor's is made by filling its ``__dict__`` with
    every field: a dataclass without ``__slots__`` or ``__post_init__`` whose ``__init__`` is the
    one dataclass generated (made from source text) and takes exactly the fields (no
    ``InitVar``). Any other type is built by its constructor."""
    if not dataclasses.is_dataclass(event_type) or hasattr(event_type, "__post_init__"):
        return False
    if any("__slots__" in vars(klass) for klass in event_type.__mro__[:-1]):
        return False
    init = vars(event_type).get("__init__")
    code = getattr(init, "__code__", None)
    if code is None or code.co_filename != "<string>":
        return False
    parameters: tuple[str, ...] = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]
    return parameters == tuple(field.name for field in dataclasses.fields(event_type))


def _table_created_v1_to_v2(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return {**data, "after_series": "close"}


def _deal_scored_v1_to_v2(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    # Not recorded then (None for the whole field, not per seat): the earlier scheme.
    return {**data, "solver_arrangements": None}


def _committed_v1_to_v2(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    # Before schemes were recorded every commitment was of scheme 1.
    return {**data, "scheme": 1}


def _unsigned(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    # Recorded before players signed their moves.
    return {**data, "player_key": None, "signature": None}


def _announced_v1_to_v2(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    # Recorded before announcements (open face's moves) were signed: unsigned, and no
    # signature is expected of it.
    return {**data, "player_key": None, "signature": None, "signing_scheme": 1}


def _no_timeout_actor(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    # Recorded before a timeout named who made it (the sweep or the operator): unknown.
    return {**data, "timed_out_by": None}


def _confirmed_v1_to_v2(data: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return {**data, "scheme": 1}


FAMILY_EVENT_TYPES: Final[tuple[type[Event], ...]] = OPEN_FACE_EVENT_TYPES
"""The events only a game family other than the closed game records (docs/architecture.md):
the default codec reads them beside ``EVENT_TYPES``, so a stream of any family is one log."""

DEFAULT_CODEC = EventCodec((*EVENT_TYPES, *FAMILY_EVENT_TYPES))
DEFAULT_CODEC.register_upcaster("TableCreated", 1, _table_created_v1_to_v2)
DEFAULT_CODEC.register_upcaster("DealScored", 1, _deal_scored_v1_to_v2)
DEFAULT_CODEC.register_upcaster("ArrangementCommitted", 1, _committed_v1_to_v2)
DEFAULT_CODEC.register_upcaster("ArrangementCommitted", 2, _unsigned)
DEFAULT_CODEC.register_upcaster("SeatConfirmed", 1, _confirmed_v1_to_v2)
DEFAULT_CODEC.register_upcaster("ArrangementRevealed", 1, _unsigned)
DEFAULT_CODEC.register_upcaster("SurrenderAnnounced", 1, _announced_v1_to_v2)
# Open face's own moves, signed from schema 2 on (docs/fairness.md §19): read the same way.
for _signed_move in (
    "CardsPlaced",
    "FantasylandCommitted",
    "FantasylandRevealed",
    "DiscardsRevealed",
):
    DEFAULT_CODEC.register_upcaster(_signed_move, 1, _announced_v1_to_v2)
# A timeout names who made it from CardsPlaced 3, FantasylandTimedOut 2, DiscardsRevealed 3 on.
DEFAULT_CODEC.register_upcaster("CardsPlaced", 2, _no_timeout_actor)
DEFAULT_CODEC.register_upcaster("FantasylandTimedOut", 1, _no_timeout_actor)
DEFAULT_CODEC.register_upcaster("DiscardsRevealed", 2, _no_timeout_actor)


# JSON scalar types: a list holding only these is copied into a tuple as it is.
_SCALARS: Final = frozenset({str, int, bool, float, type(None)})
# A tuple rather than ``list | dict``, which builds a new union object each time it is evaluated.
_CONTAINERS: Final = (list, dict)


def _from_json(value: JsonValue) -> Any:
    # Scalars are taken as they are without a call each; lists and dicts are walked.
    if isinstance(value, list):
        if _SCALARS.issuperset(map(type, value)):
            return tuple(value)
        return tuple(
            [_from_json(item) if isinstance(item, _CONTAINERS) else item for item in value]
        )
    if isinstance(value, dict):
        return {
            key: _from_json(item) if isinstance(item, _CONTAINERS) else item
            for key, item in value.items()
        }
    return value

"""The base of every table event, and its JSON form: a module of its own so that each game
family's events (``sapsam.domain.open_face.events``) subclass it without importing the table's
event catalogue (``sapsam.domain.events``), which in turn lists theirs in the default codec."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, TypeAlias

__all__ = ["Event", "JsonValue"]

JsonValue: TypeAlias = Any


@dataclass(frozen=True)
class Event:
    """Base of all table events."""

    TYPE: ClassVar[str] = ""
    SCHEMA_VERSION: ClassVar[int] = 1

    def to_data(self) -> dict[str, JsonValue]:
        """The event's content as a JSON-ready dict (tuples become lists)."""
        return {name: _to_json(getattr(self, name)) for name in _field_names(type(self))}


# Every write encodes its events: the exact JSON types are told apart by ``type(...) is``
# first, and a dataclass's field names are looked up once per class, not per value
# (``dataclasses.fields`` and the ``Mapping`` ABC check made a reveal's encoding ~100 µs).
_JSON_PLAIN: Final = frozenset({str, int, bool, type(None)})
_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(record_type: type[Any]) -> tuple[str, ...]:
    """A dataclass's field names in order, worked out once per class."""
    names = _FIELD_NAMES.get(record_type)
    if names is None:
        names = _FIELD_NAMES[record_type] = tuple(
            field.name for field in dataclasses.fields(record_type)
        )
    return names


def _to_json(value: Any) -> JsonValue:
    kind = type(value)
    if kind in _JSON_PLAIN:
        return value
    if kind is tuple or kind is list:
        return [item if type(item) in _JSON_PLAIN else _to_json(item) for item in value]
    if kind is dict:
        return {key: _to_json(item) for key, item in value.items()}
    # Anything else as the general rules say (subclasses, mappings, records, floats refused).
    if isinstance(value, float):
        raise TypeError("events carry no floats")
    if isinstance(value, tuple | list):
        return [_to_json(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _to_json(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: _to_json(getattr(value, name)) for name in _field_names(type(value))}
    return value

"""Frozen dataclass instances made from their fields without ``__init__``.

The replay and the audit make such records by the thousand, and a frozen dataclass's ``__init__``
sets each field through ``object.__setattr__``. For a dataclass with no ``__post_init__``, no
``__slots__`` and every field given, setting the instance's ``__dict__`` in one step gives an
equal instance with the same attributes. Each caller's tests hold its records to the constructor.
Imports nothing of sapsam, so every layer may use it.
"""

from __future__ import annotations

from typing import Any, TypeVar

_Record = TypeVar("_Record")
_new = object.__new__
_set_attribute = object.__setattr__


def from_fields(record_type: type[_Record], fields: dict[str, Any]) -> _Record:
    """An instance of ``record_type`` whose fields are exactly ``fields`` (taken, not copied)."""
    record: _Record = _new(record_type)
    _set_attribute(record, "__dict__", fields)
    return record

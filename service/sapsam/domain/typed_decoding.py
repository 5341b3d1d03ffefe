"""An event's data turned into its dataclass in one msgspec call, where that gives exactly what
``EventCodec.decode``'s field-by-field walk gives (``sapsam.domain.events``).

The walk takes each field's value as it is (a JSON array as a tuple, a nested record's object
through the record's constructor) and checks no types: a value of the wrong type is left for its
reader to refuse. msgspec's ``convert`` builds the same instance in C, checking every type on the
way. So for an event type whose fields are all of plain kinds (``int``, ``str``, ``bool``,
``None``, unions and tuples of them, and the nested records the codec knows, themselves of plain
kinds, and at least one tuple among them: for scalars alone the walk is as fast), a conversion
that succeeds gives the walk's instance: the same values, the arrays as
tuples, the records built. Where it does not succeed (a value of another type, ``true`` for an
``int``, a field missing) the caller takes the walk, which decides as it always did. Two things
msgspec does that the walk does not are ruled out before and after: a missing field with a
default is filled by msgspec but is a ``KeyError`` to the walk (so every field must be present),
and an unknown key in a nested record's object is skipped by msgspec but refused by the record's
constructor (so each such object must hold exactly the record's fields, none of which has a
default). Unknown keys of the event's own data are skipped by both.

Imports nothing of sapsam (msgspec is a dependency of the package).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

__all__ = ["TypedDecoder", "typed_decoder"]

TypedDecoder = Callable[[Mapping[str, Any]], Any]
"""The event of ``data``, or None: the walk decides."""

_PLAIN: Final = frozenset({int, str, bool, type(None)})
_convert: Final = msgspec.convert
_REFUSED: Final = (msgspec.ValidationError, TypeError, ValueError)


def _plain(hint: Any) -> bool:
    """Whether a field of this annotation is of a plain kind: a scalar, a union of them, or a
    tuple of them."""
    if hint in _PLAIN:
        return True
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return all(_plain(argument) for argument in arguments)
    if origin is tuple:
        return all(argument is Ellipsis or _plain(argument) for argument in arguments)
    return False


def _holds_tuple(hint: Any) -> bool:
    """Whether a plain annotation is, or may be, a tuple (the walk turns such a list into one)."""
    if typing.get_origin(hint) is tuple:
        return True
    return any(_holds_tuple(argument) for argument in typing.get_args(hint))


def _plain_record(record: type[Any]) -> bool:
    """A nested record msgspec builds as its constructor does: a dataclass of plain fields
    without defaults or ``__post_init__``."""
    if not dataclasses.is_dataclass(record) or hasattr(record, "__post_init__"):
        return False
    hints = typing.get_type_hints(record)
    return all(
        field.default is dataclasses.MISSING
        and field.default_factory is dataclasses.MISSING
        and _plain(hints[field.name])
        for field in dataclasses.fields(record)
    )


def _records_hint(hint: Any, record: type[Any]) -> bool:
    """``tuple[record, ...]`` or ``tuple[record | None, ...]``, possibly ``| None`` as a whole:
    what the codec's nested fields are."""
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return all(
            argument is type(None) or _records_hint(argument, record) for argument in arguments
        )
    if origin is not tuple or len(arguments) != 2 or arguments[1] is not Ellipsis:
        return False
    item = arguments[0]
    return item is record or set(typing.get_args(item)) == {record, type(None)}


def typed_decoder(
    event_type: type[Any], nested: Mapping[str, type[Any] | None]
) -> TypedDecoder | None:
    """The one-call decoder of ``event_type``'s current data, or None if its fields are not
    all of plain kinds. ``nested`` names, per field, the record type the codec builds its
    items as (None for a field without)."""
    if not dataclasses.is_dataclass(event_type) or hasattr(event_type, "__post_init__"):
        return None
    try:
        hints = typing.get_type_hints(event_type)
    except (NameError, TypeError):  # pragma: no cover - every event's annotations resolve
        return None
    names: list[str] = []
    records: list[tuple[str, int]] = []
    for field in dataclasses.fields(event_type):
        record = nested.get(field.name)
        hint = hints[field.name]
        if record is None:
            if not _plain(hint):
                return None
        elif _plain_record(record) and _records_hint(hint, record):
            records.append((field.name, len(dataclasses.fields(record))))
        else:
            return None
        names.append(field.name)
    if not records and not any(_holds_tuple(hints[name]) for name in names):
        # Only scalars: the walk takes them as they are, as fast as msgspec (and making
        # msgspec's view of the type costs a one-file verification more than it saves).
        return None
    required = frozenset(names)
    nested_fields = tuple(records)

    def decode(data: Mapping[str, Any]) -> Any:
        if not required <= data.keys():
            return None
        try:
            event = _convert(data, event_type, strict=True)
        except _REFUSED:
            return None
        for name, width in nested_fields:
            items = data[name]
            # Converted, so a list of objects (or None); each must hold exactly the fields.
            if items is not None and any(item is not None and len(item) != width for item in items):
                return None
        return event

    return decode

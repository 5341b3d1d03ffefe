"""Canonical JSON: the one byte form of a value that the log hashes, signs and fingerprints.

RFC 8785 (the JSON Canonicalization Scheme, JCS) restricted to what events hold
(docs/fairness.md §18): keys sorted by their UTF-16 code units, no whitespace, strings escaped as
JCS escapes them, integers only, within ±(2^53 − 1); a float, a NUL character, a lone surrogate,
a key that is not a string are refused. Any JCS library gives the same bytes for whatever this
module accepts (tests/audit/test_canonical_jcs.py holds it to the ``rfc8785`` package).

Why apart: the hash chain (``sapsam.log.chain``) is one user of these bytes among several (request
fingerprints, exports, signatures); this module is the encoding alone, orjson first and a plain
reference encoder wherever orjson cannot stand for JCS. Pure: no database imports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Final

import orjson

from sapsam.log.records import JsonValue

# JSON numbers are IEEE 754 doubles to JCS (and to JavaScript): the integers it writes exactly.
MAX_SAFE_INTEGER: Final = 2**53 - 1


class CanonicalJsonError(ValueError):
    """A value that has no canonical JSON form here (a float, a non-string key, NaN …)."""


def _utf8(text: str) -> bytes:
    # A lone surrogate (JSON "\ud800") parses into a str but has no UTF-8 form: not canonical.
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise CanonicalJsonError(
            "not canonical JSON: a lone surrogate, which has no UTF-8 form"
        ) from None


def _first_problem(value: object) -> str | None:
    """What in ``value`` would not survive a jsonb round trip byte for byte, if anything.

    Walks the value with an explicit stack and exact type checks first: this runs on every event
    appended, so it is kept cheap: a container's plain str and int members are checked where they
    are met instead of pushed, and nothing calls ``typing.cast`` (a real call at run time).
    int and str subclasses (a Card, an IntEnum) are fine. Integers beyond ±(2^53 − 1) are not
    looked for here: orjson refuses them (``OPT_STRICT_INTEGER``) and ``_reference_bytes`` says
    so, which keeps this walk as cheap as it was.
    """
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            for key in item:
                # Exactly str: a subclass could make two equal-looking keys, one of which jsonb
                # would drop, and orjson refuses it anyway.
                if type(key) is not str:
                    return f"an object key that is not a string ({key!r})"
                if "\x00" in key:
                    return "a NUL character in an object key (jsonb cannot store it)"
            members = item.values()
        elif kind is list or kind is tuple:
            members = item
        elif kind is int or kind is bool or item is None:
            continue
        elif kind is str:
            if "\x00" in item:
                return "a NUL character (jsonb cannot store it)"
            continue
        elif isinstance(item, float):
            return f"a float ({item!r}); events carry integers only"
        elif isinstance(item, str):
            if "\x00" in item:
                return "a NUL character (jsonb cannot store it)"
            continue
        elif isinstance(item, int):
            continue
        elif isinstance(item, dict):
            stack.append(dict(item))
            continue
        elif isinstance(item, list | tuple):
            stack.extend(item)
            continue
        else:
            return f"a {kind.__name__}, which is not JSON here (use dict, list, str, int, bool)"
        for member in members:
            member_kind = type(member)
            if member_kind is str:
                if "\x00" in member:
                    return "a NUL character (jsonb cannot store it)"
            elif member_kind is not int and member_kind is not bool and member is not None:
                stack.append(member)
    return None


# The reference encoder: keys in the order given (``_jcs_ordered`` puts them in JCS order), no
# spaces, non-ASCII as itself, and json's string escapes, which are JCS's: \" \\ \b \f \n \r \t
# and \u00xx (lower-case hex) for the other characters below U+0020, nothing else escaped.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _utf16_units(key: str) -> bytes:
    # Big-endian UTF-16 bytes compare as the code units do (RFC 8785 §3.2.3). surrogatepass: a
    # lone surrogate still sorts, and _utf8 refuses it afterwards with its own message.
    return key.encode("utf-16-be", "surrogatepass")


def integer_out_of_range(number: int) -> CanonicalJsonError:
    return CanonicalJsonError(
        f"not canonical JSON: the integer {number} is outside ±(2^53 - 1), which JSON numbers "
        "(IEEE 754 doubles) cannot all hold exactly"
    )


def _jcs_ordered(value: Any) -> Any:
    """A copy of a value the walk passed with every object's keys in JCS order (by UTF-16 code
    units), so that an encoder writing keys in the order given writes JCS; an integer outside
    ±(2^53 − 1) raises ``CanonicalJsonError``. An explicit stack, not recursion: the reference
    takes over from orjson exactly where nesting is deep."""
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, slot = stack.pop()
        item = holder[slot]
        if isinstance(item, dict):
            ordered = {key: item[key] for key in sorted(item, key=_utf16_units)}
            holder[slot] = ordered
            stack.extend((ordered, key) for key in ordered)
        elif isinstance(item, list | tuple):
            copied = list(item)
            holder[slot] = copied
            stack.extend((copied, index) for index in range(len(copied)))
        elif (
            isinstance(item, int)
            and not isinstance(item, bool)
            and not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER
        ):
            raise integer_out_of_range(item)
    return root[0]


def _reference_bytes(value: Any) -> bytes:
    """The canonical bytes of a value the walk passed, the slow and plain way: what orjson's
    bytes are held to, and what decides where orjson cannot stand for it."""
    return _utf8(_ENCODER.encode(_jcs_ordered(value)))


_ORJSON_DUMPS: Final = orjson.dumps
# Sorted keys (by code point, which is JCS's order unless a key holds a character beyond U+FFFF:
# see _checked_bytes) and integers refused beyond ±(2^53 - 1), as JCS requires.
_ORJSON_OPTIONS: Final = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
_ORJSON_REFUSED: Final = orjson.JSONEncodeError
# A UTF-8 lead byte of a character beyond U+FFFF (4 bytes, 0xF0-0xF4).
_ASTRAL_LEAD: Final = re.compile(b"[\xf0-\xf4]").search


def quick_canonical_bytes(event_object: dict[str, JsonValue]) -> bytes | None:
    """``canonical_event_bytes`` of a parsed event's object (``sapsam.log.chain``) in one orjson
    call, or None where that cannot stand for it (orjson refuses a part, such as an integer beyond
    ±(2^53 − 1); a ``\\u0000`` appears; a character beyond U+FFFF appears, which may sort a key
    otherwise): the checked path decides those. The event object's keys sort as in the
    definition, and orjson writes each part as ``_checked_bytes`` does, so the bytes are the
    same."""
    try:
        event_bytes = _ORJSON_DUMPS(event_object, option=_ORJSON_OPTIONS)
    except _ORJSON_REFUSED:
        return None
    return event_bytes if _orjson_stands(event_bytes) else None


def quick_canonical_joined(head: bytes, rest: dict[str, JsonValue]) -> bytes | None:
    """``quick_canonical_bytes`` of the object whose first members are those of ``head``, an
    object's text as orjson spells it with sorted keys (at least one member), and whose other
    members are ``rest``'s, every key of which sorts after ``head``'s: the same bytes, without
    spelling ``head``'s members again (an export's event line gave them, ``sapsam.log.chain``)."""
    try:
        tail = _ORJSON_DUMPS(rest, option=_ORJSON_OPTIONS)
    except _ORJSON_REFUSED:
        return None
    # Sorted keys: the whole object's text is head's members, a comma, then tail's.
    joined = b",".join((head[:-1], tail[1:]))
    return joined if _orjson_stands(joined) else None


def _orjson_stands(encoded: bytes) -> bool:
    """Whether orjson's sorted text of a value is its canonical JSON: no ``\\u0000`` (which the
    checked path refuses) and no character beyond U+FFFF (which may sort a key otherwise)."""
    # find, not ``in``: bytes' ``in`` first tries its operand as an integer, and formats and
    # clears a TypeError for every bytes operand (a few thousand instructions an event).
    if encoded.find(b"\\u0000") >= 0:
        return False
    return encoded.isascii() or _ASTRAL_LEAD(encoded) is None


def json_string(text: str) -> bytes:
    """A string as canonical JSON (quoted and escaped), UTF-8."""
    return _utf8(_ENCODER.encode(text))


def _checked_bytes(value: JsonValue) -> bytes:
    """The canonical bytes of a value ``_first_problem`` passed.

    orjson first. For such a value (dict with string keys, list or tuple, str, int, bool, None,
    and their subclasses: an IntEnum, a Card, written as their int or text as json writes them)
    orjson with sorted keys writes JCS's bytes: the same escapes, separators and integers, and
    keys in code point order, which is JCS's UTF-16 order unless a key holds a character beyond
    U+FFFF (its surrogates sort below U+E000-U+FFFF in UTF-16). So where the output holds such a
    character at all, or orjson refuses (an integer beyond ±(2^53 − 1), a lone surrogate,
    nesting deeper than 254), ``_reference_bytes`` decides. tests/audit/test_canonical_jcs.py
    holds both to the ``rfc8785`` package.
    """
    try:
        encoded = _ORJSON_DUMPS(value, option=_ORJSON_OPTIONS)
    except _ORJSON_REFUSED:
        return _reference_bytes(value)
    if encoded.isascii() or _ASTRAL_LEAD(encoded) is None:
        return encoded
    return _reference_bytes(value)


def canonical_json(value: JsonValue) -> bytes:
    """The canonical JSON bytes of a value (RFC 8785, restricted: see the module docstring)."""
    problem = _first_problem(value)
    if problem is not None:
        raise CanonicalJsonError(f"not canonical JSON: {problem}")
    return _checked_bytes(value)


def canonical_json_each(values: Sequence[JsonValue]) -> list[bytes]:
    """``canonical_json`` of each value, checked in one walk (the append path's batches)."""
    problem = _first_problem(list(values))
    if problem is not None:
        raise CanonicalJsonError(f"not canonical JSON: {problem}")
    return [_checked_bytes(value) for value in values]

"""An export's event lines read by msgspec in one call, types checked in C (docs/audit.md §2).

Pure. Two readers, each giving the event ``sapsam.audit.export_reading`` would make of the line, or
None where that is not certain (the line then takes the usual path, which names what is wrong):

- :func:`quick_event`, for a line already held to the limits (``export_limits.check_line``);
- :func:`canonical_event`, for a line as the log writes it (canonical JSON: no spaces, no repeated
  keys, no escapes beyond those needed), *before* the limits: it gives an event only where
  ``check_line`` certainly passes the line, so the whole line (three quarters of it an inclusion
  proof's hex) is not scanned.

Why :func:`canonical_event` may skip the scan. Every JSON spelling of a value is at least as long
as orjson's spelling of the value parsed from it (keys in the order read): a space, an escape
beyond the needed ones, a ``\u00e9`` where orjson writes the character's UTF-8 bytes, a repeated
key (whose first value the parse drops) or an explicit ``"inclusion":null`` only adds characters,
and a JSON integer has one spelling. So an ASCII line exactly as long as its fields' names and
their values spelled that way, with one colon and comma each, is that spelling: its ``data`` and
``metadata`` texts are orjson's bytes of the parsed objects, and the rest of it integers and
strings. Outside its strings (whose content no limit counts) it then holds no number of more than
19 digits: orjson spells the objects only if their integers are within ±(2^53 − 1) (16 digits at
most), and the line's own integers are held below 10**19. And it nests no deeper than the two
texts' opening brackets, inside strings or not, and the one or two objects around them. So
``check_line`` passes the line when that count is within the limit; anything else (a longer line,
a big integer, a bracket too many, a character beyond ASCII) declines, and ``check_line`` decides
as ever. tests/audit/test_event_lines.py holds both readers to the usual path.

:func:`canonical_object` does the same for any line of one JSON object (the export's header line,
read as a plain value): the same argument in the line's UTF-8 bytes, where orjson writes a
character beyond ASCII as itself (fewer bytes than any escape of it). The header always takes
``check_line``'s careful path otherwise: the genesis anchor's hash is 64 zeros, a run of digits
the scan cannot tell from a number without finding the line's strings.
"""

from __future__ import annotations

from binascii import a2b_hex as _a2b_hex
from typing import Any, Final

import msgspec
import orjson

from sapsam.audit.export_format import EventInclusion, ExportedEvent
from sapsam.audit.export_limits import MAX_NESTING_DEPTH, MAX_NUMBER_DIGITS, check_line
from sapsam.audit.proof_format import HASH_HEX, MAX_INCLUSION_HASHES, MAX_LEAF_INDEX
from sapsam.log.records import JsonObject

# sapsam.frozen.from_fields' two steps, called here directly.
_new: Final = object.__new__
_set_attribute: Final = object.__setattr__


def refuse_float(text: str) -> Any:
    """msgspec's float hook: an export holds no floats (the usual path refuses them too)."""
    raise ValueError(f"a float ({text})")


QUICK_REFUSED: Final = (msgspec.MsgspecError, RecursionError, UnicodeEncodeError)
"""What msgspec raises for a line it does not read (the usual path then decides)."""


# gc=False: a line's parse lives only while its event is made, and a value parsed from JSON holds
# no reference cycle, so the collector need not track it (fewer steps to make and free each).
class _InclusionLine(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An event's ``inclusion`` as msgspec reads it (docs/audit.md §2.5)."""

    leaf_index: int
    proof: str


class _EventLine(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An event line as msgspec reads it when every field is there with its type and no other
    (msgspec would skip an unknown field's value unread, a float in it included; such a line
    takes the usual path, which ignores extra fields but refuses a float anywhere)."""

    position: int
    version: int
    type: str
    schema_version: int
    data: dict[str, Any]
    metadata: dict[str, Any]
    hash: str
    inclusion: _InclusionLine | None = None


_EVENT_DECODE: Final = msgspec.json.Decoder(_EventLine, float_hook=refuse_float).decode
_VALUE_DECODE: Final = msgspec.json.Decoder(float_hook=refuse_float).decode

# orjson's spelling of a parsed object (refusing what it cannot spell: an integer beyond
# ±(2^53 − 1), a lone surrogate, nesting deeper than 254). An object's spelling has the same
# length whatever the order of its keys; an event's data and metadata are spelled with sorted
# keys, as the chain spells them (``ExportedEvent.canonical_content``).
_DUMPS: Final = orjson.dumps
_DUMPS_OPTIONS: Final = orjson.OPT_STRICT_INTEGER
_CONTENT_OPTIONS: Final = orjson.OPT_STRICT_INTEGER | orjson.OPT_SORT_KEYS
_DUMPS_REFUSED: Final = orjson.JSONEncodeError

# The shortest spelling's characters besides the values (names, quotes, colons, commas, braces),
# and those of the object ``{"data":…,"metadata":…}`` spelled for them.
_FRAME: Final = len(
    '{"data":,"hash":"","metadata":,"position":,"schema_version":,"type":"","version":}'
)
_VALUES_FRAME: Final = len('{"data":,"metadata":}')
_INCLUSION_FRAME: Final = len(',"inclusion":{"leaf_index":,"proof":""}')
# What a line holds beyond that object's spelling and its other values, without and with an
# inclusion proof.
_LINE_FRAME: Final = _FRAME - _VALUES_FRAME
_INCLUDED_LINE_FRAME: Final = _LINE_FRAME + _INCLUSION_FRAME
_CANONICAL_MOST_CHARS: Final = 1 << 16
"""Longer lines (the log's are about 1 KB) take the usual path, limits first."""
_DIGITS_BOUND: Final = 10**MAX_NUMBER_DIGITS
"""An integer below it in magnitude has at most 19 digits (``MAX_NUMBER_DIGITS``)."""


def _event(parsed: _EventLine, content: bytes | None = None) -> ExportedEvent | None:
    """The event of a line read with its types, if its type is named, its hash is 64 hex digits
    and its inclusion is within bounds (every line of an export takes this path).

    The inclusion as ``proof_format.inclusion_from_value`` accepts it (a leaf index in range,
    whole hashes of hex digits only, at most ``MAX_INCLUSION_HASHES``) written out
    here (one call a line fewer), the event by :func:`exported_event` (``content``: the canonical
    text of its data and metadata, where known); None sends the line to the named checks."""
    included = parsed.inclusion
    inclusion = None
    if included is not None:
        leaf_index, proof = included.leaf_index, included.proof
        if (
            not 0 <= leaf_index <= MAX_LEAF_INDEX
            or len(proof) % HASH_HEX
            or len(proof) > MAX_INCLUSION_HASHES * HASH_HEX
        ):
            return None
        try:
            raw = _a2b_hex(proof)  # hex digits only (proof_bytes' test): a space is refused too
        except ValueError:
            return None
        inclusion = _new(EventInclusion)
        _set_attribute(inclusion, "__dict__", {"leaf_index": leaf_index, "proof": raw})
    return exported_event(
        parsed.position,
        parsed.version,
        parsed.type,
        parsed.schema_version,
        parsed.data,
        parsed.metadata,
        parsed.hash,
        inclusion,
        content,
    )


def exported_event(
    position: int,
    version: int,
    event_type: str,
    schema_version: int,
    data: JsonObject,
    metadata: JsonObject,
    hash_text: str,
    inclusion: EventInclusion | None = None,
    content: bytes | None = None,
) -> ExportedEvent | None:
    """The event of fields whose types hold, if the type is named and the hash is 64 hex
    digits; None sends the line to the checks that name the bad field.

    Made for the many lines of an export without the frozen dataclass's ``__init__``, which sets
    each field through ``object.__setattr__``: the class has no ``__post_init__`` and its two
    defaults (``inclusion``, and ``canonical_content``, which ``__init__`` leaves to the class)
    are filled here, so filling the new instance's ``__dict__`` gives an equal instance with the
    same attributes (tests/audit/test_audit_fast_paths.py holds the two to each other).
    ``content``: the canonical text of the data and metadata, where the line gave it."""
    if not event_type or len(hash_text) != 64:
        return None
    try:
        digest = bytes.fromhex(hash_text)
    except ValueError:
        return None
    event: ExportedEvent = _new(ExportedEvent)
    _set_attribute(
        event,
        "__dict__",
        {
            "position": position,
            "version": version,
            "type": event_type,
            "schema_version": schema_version,
            "data": data,
            "metadata": metadata,
            "hash": digest,
            "inclusion": inclusion,
            "canonical_content": content,
        },
    )
    return event


def quick_event(line: str) -> ExportedEvent | None:
    """``_well_formed_event(_parse_line(line))`` of ``sapsam.audit.export_reading`` in one msgspec
    call with the types checked in C; None where that is not certain (a field missing or of
    another type, a float, bad JSON …). msgspec's ``int`` takes JSON integers only (no ``true``),
    and the last of duplicate keys wins, as in json (tests/audit/test_export_parsing.py compares
    the two paths)."""
    try:
        parsed = _EVENT_DECODE(line)
    except QUICK_REFUSED:
        return None
    return _event(parsed)


def canonical_event(line: str) -> ExportedEvent | None:
    """``quick_event(line)`` for a line in the shortest spelling whose limits hold (the module
    docstring says why no other check is needed); None for any other line, which must then be
    held to the limits (``check_line``) and read as usual."""
    if len(line) > _CANONICAL_MOST_CHARS or not line.isascii():
        return None  # ASCII: a character is a byte, so orjson's bytes count as the line's
    try:
        parsed = _EVENT_DECODE(line)
    except QUICK_REFUSED:
        return None
    return _canonical_parsed(line, parsed)


def limited_event(line: str, number: int) -> ExportedEvent | None:
    """The event of line ``number`` held to the limits: ``canonical_event``'s one step where it
    holds, else ``check_line`` (raising ``ExportLimitError``) and then ``quick_event``; None
    where the usual path decides (a blank line, too). msgspec reads the line once on the way:
    a line the canonical step parsed is read from that parse, and one it could not parse
    ``quick_event`` (the same decoder) could not either."""
    if len(line) > _CANONICAL_MOST_CHARS or not line.isascii():
        check_line(line, number)
        return quick_event(line)
    try:
        parsed = _EVENT_DECODE(line)
    except QUICK_REFUSED:
        check_line(line, number)
        return None
    event = _canonical_parsed(line, parsed)
    if event is None:
        check_line(line, number)
        return _event(parsed)
    return event


def _canonical_parsed(line: str, parsed: _EventLine) -> ExportedEvent | None:
    """``canonical_event`` of a line msgspec has read (an ASCII line of at most 64 KiB)."""
    try:
        values_text = _DUMPS(
            {"data": parsed.data, "metadata": parsed.metadata}, option=_CONTENT_OPTIONS
        )
    except _DUMPS_REFUSED:
        return None
    position, version, schema_version = parsed.position, parsed.version, parsed.schema_version
    included = parsed.inclusion
    if included is None:
        leaf, proof, enclosing = 0, "", 0  # the values' object stands for the line's own
        numbers = f"{position}{version}{schema_version}"  # their digits, as the line spells them
        frame = _LINE_FRAME
    else:
        leaf, proof, enclosing = included.leaf_index, included.proof, 1
        numbers = f"{position}{version}{schema_version}{leaf}"
        frame = _INCLUDED_LINE_FRAME
    shortest = frame + len(values_text) + len(parsed.hash) + len(parsed.type) + len(numbers)
    if (
        shortest + len(proof) != (len(line) - 1 if line.endswith("\n") else len(line))  # as read
        # The integers spelled together in at most 19 characters: none has more digits (a
        # log's usual line, where positions and leaves have 6 digits or so, compares none).
        or (
            len(numbers) > MAX_NUMBER_DIGITS
            and not (
                -_DIGITS_BOUND < position < _DIGITS_BOUND
                and -_DIGITS_BOUND < version < _DIGITS_BOUND
                and -_DIGITS_BOUND < schema_version < _DIGITS_BOUND
                and -_DIGITS_BOUND < leaf < _DIGITS_BOUND
            )
        )
        or values_text.count(b"[") + values_text.count(b"{") + enclosing > MAX_NESTING_DEPTH
    ):
        return None
    return _event(parsed, values_text)


def canonical_object(line: str) -> dict[str, Any] | None:
    """The object of a line holding one JSON object in the shortest spelling whose limits hold,
    as ``export_reading._parse_line`` reads it (msgspec, floats refused); None for any other line,
    which must then be held to the limits (``check_line``) and read as usual. The module docstring
    says why no other check is needed: outside its strings such a line holds integers of at most
    16 digits, and it nests no deeper than the opening brackets orjson writes for it."""
    if len(line) > _CANONICAL_MOST_CHARS:
        return None
    try:
        value = _VALUE_DECODE(line)
    except QUICK_REFUSED:
        return None
    if type(value) is not dict:
        return None
    try:
        text = _DUMPS(value, option=_DUMPS_OPTIONS)
        size = len(line) if line.isascii() else len(line.encode())  # strict: no lone surrogate
    except (_DUMPS_REFUSED, UnicodeEncodeError):
        return None
    if (
        len(text) != (size - 1 if line.endswith("\n") else size)  # as read from a file
        or text.count(b"[") + text.count(b"{") > MAX_NESTING_DEPTH
    ):
        return None
    return value

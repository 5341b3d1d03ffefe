"""Reading an audit export's header line (its first; the format is in
``sapsam.audit.export_format``): the usual well-formed header in one pass, anything else through
the checks that name the bad field (``ExportFormatError``). Pure: no database or network imports.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any, Final

from sapsam.audit.export_fields import (
    hex_field,
    int_field,
    int_list_field,
    object_field,
    require_field,
)
from sapsam.audit.export_format import (
    FORMAT_TAG,
    FORMAT_VERSION,
    ChainAnchor,
    ExportFormatError,
    ExportHeader,
    Segment,
    display_names_from,
)
from sapsam.audit.proof_format import (
    quick_transparency,
    transparency_from_value,
)
from sapsam.frozen import from_fields

__all__ = ["header_from_dict"]


# The header line's fields in one call (a missing field sends it to the named checks).
_HEADER_FIELDS: Final = operator.itemgetter(
    "format",
    "format_version",
    "segments",
    "table_id",
    "stream_id",
    "scope",
    "withheld",
    "deals",
    "finished_deals",
    "rule_set",
    "seat_count",
)


_SEGMENT_FIELDS: Final = operator.itemgetter("anchor", "first_version", "last_version", "last_hash")


_ANCHOR_FIELDS: Final = operator.itemgetter("version", "hash")


def _digest(text: object) -> bytes | None:
    """``hex_field(text, ...)`` of a well-formed 32-byte hash, None for anything else."""
    if type(text) is not str:
        return None
    try:
        digest = bytes.fromhex(text)
    except ValueError:
        return None
    return digest if len(digest) == 32 else None


def _well_formed_header(value: Mapping[str, Any]) -> ExportHeader | None:
    """``header_from_dict(value)`` for the usual, well-formed header of plain JSON types, tested
    without formatting a field's place for each test; None sends it to the checks that name the
    bad field."""
    if type(value) is not dict:
        return None
    try:
        (
            tag,
            version,
            segments,
            table_id,
            stream_id,
            scope,
            withheld,
            deals,
            finished_deals,
            rule_set,
            seat_count,
        ) = _HEADER_FIELDS(value)
    except KeyError:
        return None
    if not (
        tag == FORMAT_TAG
        and type(version) is int
        and version == FORMAT_VERSION
        and type(segments) is list
        and segments
        and type(table_id) is str
        and type(stream_id) is str
        and type(scope) is str
        and type(withheld) is str
        and type(deals) is list
        and all(type(number) is int for number in deals)
        and type(finished_deals) is list
        and all(type(number) is int for number in finished_deals)
        and type(rule_set) is dict
        and type(seat_count) is int
    ):
        return None
    parsed: list[Segment] = []
    for raw in segments:
        if type(raw) is not dict:
            return None
        try:
            anchor, first_version, last_version, last_hash = _SEGMENT_FIELDS(raw)
            if type(anchor) is not dict:
                return None
            anchor_version, anchor_hash = _ANCHOR_FIELDS(anchor)
        except KeyError:
            return None
        anchor_digest = _digest(anchor_hash)
        last_digest = _digest(last_hash)
        if (
            type(anchor_version) is not int
            or anchor_digest is None
            or type(first_version) is not int
            or type(last_version) is not int
            or last_digest is None
        ):
            return None
        # Segment(ChainAnchor(...), ...) without the frozen __init__'s setattr per field (neither
        # class has a __post_init__; tests/audit/test_audit_fast_paths.py holds the two alike).
        anchor_record = from_fields(ChainAnchor, {"version": anchor_version, "hash": anchor_digest})
        parsed.append(
            from_fields(
                Segment,
                {
                    "anchor": anchor_record,
                    "first_version": first_version,
                    "last_version": last_version,
                    "last_hash": last_digest,
                },
            )
        )
    transparency = None
    if "transparency" in value:
        transparency = quick_transparency(value["transparency"])
        if transparency is None:
            return None  # read by the named checks, which name what is wrong
    try:
        labels = display_names_from(value["display_names"], "") if "display_names" in value else ()
    except ExportFormatError:
        return None  # named by header_from_dict
    # ExportHeader(...) likewise, every field given in the class's order.
    return from_fields(
        ExportHeader,
        {
            "table_id": table_id,
            "stream_id": stream_id,
            "scope": scope,
            "deals": tuple(deals),
            "finished_deals": tuple(finished_deals),
            "rule_set": rule_set,
            "seat_count": seat_count,
            "segments": tuple(parsed),
            "withheld": withheld,
            "format_version": version,
            "transparency": transparency,
            "display_names": labels,
        },
    )


def header_from_dict(value: Mapping[str, Any], where: str = "line 1") -> ExportHeader:
    """Read the header line's object; raises ``ExportFormatError`` naming the bad field."""
    well_formed = _well_formed_header(value)
    if well_formed is not None:
        return well_formed
    require_field(value.get("format") == FORMAT_TAG, where, f"format must be {FORMAT_TAG!r}")
    version = int_field(value.get("format_version"), f"{where} format_version")
    require_field(version == FORMAT_VERSION, where, f"format_version {version} is not supported")
    segments = value.get("segments")
    require_field(isinstance(segments, list) and bool(segments), where, "segments must be a list")
    assert isinstance(segments, list)
    parsed: list[Segment] = []
    for index, raw in enumerate(segments):
        at = f"{where} segments[{index}]"
        segment = object_field(raw, at)
        anchor = object_field(segment.get("anchor"), f"{at}.anchor")
        parsed.append(
            Segment(
                anchor=ChainAnchor(
                    int_field(anchor.get("version"), f"{at}.anchor.version"),
                    hex_field(anchor.get("hash"), f"{at}.anchor.hash"),
                ),
                first_version=int_field(segment.get("first_version"), f"{at}.first_version"),
                last_version=int_field(segment.get("last_version"), f"{at}.last_version"),
                last_hash=hex_field(segment.get("last_hash"), f"{at}.last_hash"),
            )
        )
    for name in ("table_id", "stream_id", "scope", "withheld"):
        require_field(isinstance(value.get(name), str), where, f"{name} must be a string")
    return ExportHeader(
        table_id=str(value["table_id"]),
        stream_id=str(value["stream_id"]),
        scope=str(value["scope"]),
        deals=int_list_field(value.get("deals"), f"{where} deals"),
        finished_deals=int_list_field(value.get("finished_deals"), f"{where} finished_deals"),
        rule_set=object_field(value.get("rule_set"), f"{where} rule_set"),
        seat_count=int_field(value.get("seat_count"), f"{where} seat_count"),
        segments=tuple(parsed),
        withheld=str(value["withheld"]),
        format_version=version,
        transparency=(
            transparency_from_value(value["transparency"], f"{where} transparency")
            if "transparency" in value
            else None
        ),
        display_names=(
            display_names_from(value["display_names"], where) if "display_names" in value else ()
        ),
    )

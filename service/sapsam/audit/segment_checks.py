"""The checks of an export's segments (docs/audit.md §4): ``chain``, ``anchor`` and ``coverage``.

Pure. An export holds one or more segments of its stream, each a run of versions hung on an
anchor (the hash of the event just before it, or the genesis hash): :func:`split_segments` gives
each segment's events, :func:`chain_check` recomputes every hash from its segment's anchor,
:func:`anchor_check` ties the segments to the stream's start and to each other, and
:func:`coverage_check` holds the events to exactly the versions the header names.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Final

from sapsam.audit.export_format import AuditExport, ExportedEvent, Segment
from sapsam.audit.export_reading import OPENING_TYPES
from sapsam.audit.report import AuditCheck, Status, make_check
from sapsam.log.chain import ChainReport, verify_chain_of_stream
from sapsam.plurals import numbered, plural

__all__ = ["anchor_check", "chain_check", "coverage_check", "forget_chains", "split_segments"]


def split_segments(export: AuditExport) -> list[list[ExportedEvent]]:
    """The events of each segment, in file order, by the segment's version range."""
    return [
        [
            event
            for event in export.events
            if segment.first_version <= event.version <= segment.last_version
        ]
        for segment in export.header.segments
    ]


# A segment of opening events shared with an export verified before (a table's deal exports
# share it: ``export_reading._OPENINGS_READ``), hung on the same anchor of the same stream, has the
# same chain: its report is kept by the events' identities, which the entry holds (so no id is
# reused while kept). At most _CHAINS_KEPT segments (then all are forgotten).
_ChainKey = tuple[str, bytes, int, bool, tuple[int, ...]]
_CHAINS: dict[_ChainKey, tuple[list[ExportedEvent], ChainReport]] = {}
_CHAINS_KEPT: Final = 1024


def forget_chains() -> None:
    """Forget the segments' chains kept so far."""
    _CHAINS.clear()


def _segment_chain(
    stream_id: str, segment: Segment, events: list[ExportedEvent], parsed_json: bool
) -> ChainReport:
    anchor = segment.anchor
    if not all(event.type in OPENING_TYPES for event in events):  # a deal's: never shared
        return verify_chain_of_stream(stream_id, events, anchor.hash, anchor.version, parsed_json)
    key = (stream_id, anchor.hash, anchor.version, parsed_json, tuple(map(id, events)))
    kept = _CHAINS.get(key)
    if kept is not None and all(map(operator.is_, kept[0], events)):
        return kept[1]
    report = verify_chain_of_stream(stream_id, events, anchor.hash, anchor.version, parsed_json)
    if len(_CHAINS) >= _CHAINS_KEPT:
        _CHAINS.clear()
    _CHAINS[key] = (list(events), report)
    return report


def chain_check(export: AuditExport, segment_events: Sequence[list[ExportedEvent]]) -> AuditCheck:
    stream_id = export.header.stream_id
    checked = 0
    for index, (segment, events) in enumerate(
        zip(export.header.segments, segment_events, strict=True), start=1
    ):
        report = _segment_chain(stream_id, segment, events, export.parsed_json)
        checked += report.events_checked
        if not report.intact:
            problem = report.problems[0]
            kind = next((e.type for e in events if e.version == problem.version), "?")
            return make_check(
                "chain",
                Status.FAILED,
                f"segment {index}, the {kind} event at version {problem.version}: "
                f"{problem.reason}; it was altered, or events before it were removed, added or "
                "reordered",
            )
    return make_check(
        "chain",
        Status.PASSED,
        f"{plural(checked, 'event')} in {plural(len(segment_events), 'segment')}, each hash"
        " recomputed from its anchor",
    )


def anchor_check(
    segments: Sequence[Segment], segment_events: Sequence[list[ExportedEvent]]
) -> AuditCheck:
    first = segments[0]
    if not first.anchor.is_genesis or first.first_version != 1:
        return make_check(
            "anchor",
            Status.FAILED,
            "the export must start at the stream's first event (version 1, anchored on the "
            f"genesis hash); it starts at version {first.first_version} on anchor version "
            f"{first.anchor.version}",
        )
    stated: list[str] = []
    for index in range(1, len(segments)):
        segment, previous = segments[index], segments[index - 1]
        if segment.anchor.version != segment.first_version - 1:
            return make_check(
                "anchor",
                Status.FAILED,
                f"segment {index + 1} names anchor version {segment.anchor.version} but starts "
                f"at version {segment.first_version}",
            )
        if segment.anchor.version < previous.last_version:
            return make_check(
                "anchor",
                Status.FAILED,
                f"segment {index + 1} overlaps segment {index}",
            )
        if segment.anchor.version == previous.last_version:
            previous_events = segment_events[index - 1]
            last_hash = previous_events[-1].hash if previous_events else previous.last_hash
            if segment.anchor.hash != last_hash:
                return make_check(
                    "anchor",
                    Status.FAILED,
                    f"segment {index + 1} hangs on version {segment.anchor.version} with a hash "
                    f"that is not that event's hash in segment {index}",
                    expected=last_hash.hex(),
                    found=segment.anchor.hash.hex(),
                )
        else:
            stated.append(
                f"segment {index + 1} hangs on version {segment.anchor.version} "
                f"(hash {segment.anchor.hash.hex()[:16]}…), which is outside the export"
            )
    detail = "the export starts at the genesis"
    if stated:
        detail += (
            "; "
            + "; ".join(stated)
            + " (confirm it against the server: sapsam audit verify --table T --deal N)"
        )
    return make_check("anchor", Status.PASSED, detail)


def coverage_check(
    export: AuditExport, segment_events: Sequence[list[ExportedEvent]]
) -> AuditCheck:
    covered = sum(len(events) for events in segment_events)
    if covered != len(export.events):
        outside = [
            event.version
            for event in export.events
            if not any(
                s.first_version <= event.version <= s.last_version for s in export.header.segments
            )
        ]
        return make_check(
            "coverage",
            Status.FAILED,
            (
                f"the events at {numbered('version', outside)} lie"
                if outside
                else "an event repeated lies"
            )
            + " outside the segments the header names (an event was added or the versions do"
            " not match the header)",
        )
    for index, (segment, events) in enumerate(
        zip(export.header.segments, segment_events, strict=True), start=1
    ):
        wanted = segment.last_version - segment.first_version + 1
        if len(events) != wanted:
            return make_check(
                "coverage",
                Status.FAILED,
                f"segment {index} should hold versions {segment.first_version}.."
                f"{segment.last_version} ({plural(wanted, 'event')}) but holds {len(events)}: "
                "events are missing or repeated",
            )
        if not events:
            return make_check("coverage", Status.FAILED, f"segment {index} names no version at all")
        if events[-1].version != segment.last_version or events[-1].hash != segment.last_hash:
            return make_check(
                "coverage",
                Status.FAILED,
                f"segment {index} should end on version {segment.last_version} with hash "
                f"{segment.last_hash.hex()[:16]}…; it ends on version {events[-1].version}",
            )
    return make_check(
        "coverage",
        Status.PASSED,
        f"{plural(covered, 'event')}, exactly the versions the header names",
    )

"""Choosing what an export holds: the events, segments and deals a requester may have.

Why apart: the format (``sapsam.audit.export_format``) is what both sides share, the exporter and
the offline verifier; this is the exporter's side alone, from a table's stream read in full: who
may export (a seated player, the operator), which deals are finished, running or voided, where a
running deal must stop (``_withheld_reveals``: nothing a seat may not see yet), and the segments
that tie the chosen events to the chain. Pure: no database or network imports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sapsam.audit.export_format import (
    GENESIS_ANCHOR,
    OPENING_TYPES,
    STREAM_PREFIX,
    AuditExport,
    ChainAnchor,
    ExportAccessError,
    ExportedEvent,
    ExportHeader,
    NothingToExportError,
    Requester,
    Segment,
)
from sapsam.log.records import RecordedEvent
from sapsam.rules.open_face.parameters import HAND_CARDS


def _deal_of(event: RecordedEvent) -> int | None:
    number = event.data.get("deal_number")
    return number if isinstance(number, int) else None


@dataclass(frozen=True)
class _DealSpan:
    """Where one deal's events lie in the stream (list indexes, inclusive)."""

    number: int
    first: int
    last: int
    finished: bool
    voided: bool = False
    """Ended by ``DealVoided``: over, unscored, its seed published; not a running deal."""

    @property
    def running(self) -> bool:
        """Neither scored nor voided: still being played."""
        return not self.finished and not self.voided


def _deal_spans(events: Sequence[RecordedEvent]) -> list[_DealSpan]:
    spans: list[_DealSpan] = []
    for index, event in enumerate(events):
        if event.type == "DealStarted":
            number = _deal_of(event)
            if number is not None:
                spans.append(_DealSpan(number, index, index, False))
        elif spans:
            current = spans[-1]
            finished = current.finished or (
                event.type == "DealScored" and _deal_of(event) == current.number
            )
            voided = current.voided or (
                event.type == "DealVoided" and _deal_of(event) == current.number
            )
            # SeriesCompleted (and SeriesStarted) follow the last deal's DealScored and belong to
            # that deal.
            spans[-1] = _DealSpan(current.number, current.first, index, finished, voided)
    return spans


def _opening_end(events: Sequence[RecordedEvent]) -> int:
    """Index of the last event before the first deal (the table's opening)."""
    last = 0
    for index, event in enumerate(events):
        if event.type not in OPENING_TYPES:
            break
        last = index
    return last


def _check_table(events: Sequence[RecordedEvent], requester: Requester, table_id: str) -> None:
    if not events or events[0].type != "TableCreated":
        raise NothingToExportError("TABLE_NOT_FOUND", f"no table {table_id}")
    if requester.is_operator:
        return
    seated = any(
        event.type in ("PlayerSeated", "SeatReplaced")
        and event.data.get("player_id") == requester.player_id
        for event in events
    )
    if not seated:
        raise ExportAccessError(
            "NOT_SEATED", f"you do not hold a seat at table {table_id}: only its players may"
        )


def _merged(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Inclusive index ranges (in order), those that touch merged."""
    merged: list[tuple[int, int]] = []
    for first, last in ranges:
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return merged


def _segments(events: Sequence[RecordedEvent], merged: Sequence[tuple[int, int]]) -> list[Segment]:
    """Segments for merged inclusive index ranges (``_merged``)."""
    segments = []
    for first, last in merged:
        anchor = (
            GENESIS_ANCHOR
            if first == 0
            else ChainAnchor(events[first - 1].version, events[first - 1].hash)
        )
        segments.append(
            Segment(anchor, events[first].version, events[last].version, events[last].hash)
        )
    return segments


def _build(
    events: Sequence[RecordedEvent],
    scope: str,
    ranges: Sequence[tuple[int, int]],
    spans: Sequence[_DealSpan],
) -> AuditExport:
    created = events[0]
    merged = _merged(ranges)
    segments = _segments(events, merged)
    # Sliced by index, once: not a walk of the whole stream per segment (a deal export after
    # many SeatReplaced has a segment for each).
    chosen = [event for first, last in merged for event in events[first : last + 1]]
    table_id = str(created.data.get("table_id", created.stream_id.removeprefix(STREAM_PREFIX)))
    rule_set = created.data.get("rule_set")
    seat_count = created.data.get("seat_count")
    header = ExportHeader(
        table_id=table_id,
        stream_id=created.stream_id,
        scope=scope,
        deals=tuple(span.number for span in spans),
        finished_deals=tuple(span.number for span in spans if span.finished),
        rule_set=rule_set if isinstance(rule_set, dict) else {},
        seat_count=seat_count if isinstance(seat_count, int) else 0,
        segments=tuple(segments),
    )
    return AuditExport(
        header=header,
        events=tuple(
            ExportedEvent(
                position=event.position,
                version=event.version,
                type=event.type,
                schema_version=event.schema_version,
                data=event.data,
                metadata=event.metadata,
                hash=event.hash,
            )
            for event in chosen
        ),
    )


def select_table(
    events: Sequence[RecordedEvent], requester: Requester, table_id: str = ""
) -> AuditExport:
    """The export of a whole table (its series) from the table's stream, read in full.

    The operator gets every event, a running deal included up to its first reveal (its seed is not
    in the log; see ``_withheld_reveals``). A player of the table gets the events up to the end of
    the last finished deal: a running deal is left out entirely.
    """
    _check_table(events, requester, table_id)
    spans = _deal_spans(events)
    last = len(events) - 1
    running = [span for span in spans if span.running]
    if running and not requester.is_operator:
        last = running[0].first - 1
        spans = [span for span in spans if not span.running]
    elif running:
        last = _withheld_reveals(events, running[0])
    return _build(events, "table", [(0, last)], spans)


def select_deal(
    events: Sequence[RecordedEvent], deal_number: int, requester: Requester, table_id: str = ""
) -> AuditExport:
    """The export of one deal: the table's opening plus the deal's consecutive events.

    A player may export only a finished deal of a table where they hold a seat
    (``ExportAccessError`` otherwise); the operator may export a running deal too, up to its first
    reveal (``_withheld_reveals``).
    """
    _check_table(events, requester, table_id)
    spans = [span for span in _deal_spans(events) if span.number == deal_number]
    if not spans:
        raise NothingToExportError(
            "DEAL_NOT_FOUND", f"table {table_id or events[0].stream_id} has no deal {deal_number}"
        )
    span = spans[0]
    if span.running and not requester.is_operator:
        raise ExportAccessError(
            "DEAL_NOT_FINISHED",
            f"deal {deal_number} is still being played: players may export it once it is scored",
        )
    last = span.last if not span.running else _withheld_reveals(events, span)
    # The seats given to other players before the deal: whose commitments its seats hold.
    replaced = [
        (index, index)
        for index, event in enumerate(events[: span.first])
        if event.type == "SeatReplaced"
    ]
    ranges = [(0, _opening_end(events)), *replaced, (span.first, last)]
    return _build(events, "deal", ranges, [span])


def _withheld_reveals(events: Sequence[RecordedEvent], running: _DealSpan) -> int:
    """Index of the last event of a running deal that may be exported: the one before its first
    ``ArrangementRevealed``, or, at an open-face table while a Fantasyland hand is still being
    set, the one before its first ``CardsPlaced``.

    A reveal carries a seat's rows and nonce, which nobody may see before the deal is scored (the
    API's views hold them back until then too), the operator included; the export stops there, so
    its chain stays whole and the deal reads as pending. Open face's placements are face up, but
    while a Fantasyland hand is neither committed nor timed out every other seat's placements are
    shown to their own seat only (``deal_views.may_see_board``; 001: the others place while the
    Fantasyland hand is set, hidden until it is committed), so they stay out of the export too.
    """
    unset: set[int] = set()
    first_placement: int | None = None
    for index in range(running.first, running.last + 1):
        event = events[index]
        if event.type == "ArrangementRevealed":
            return index - 1
        if event.type == "StreetDealt" and event.data.get("street") == 0:
            # A Fantasyland seat is dealt a whole hand (13 cards or more) on the first street.
            counts = event.data.get("card_counts")
            unset = {
                seat
                for seat, count in enumerate(counts if isinstance(counts, list) else ())
                if isinstance(count, int) and count >= HAND_CARDS
            }
        elif event.type in ("FantasylandCommitted", "FantasylandTimedOut"):
            seat = event.data.get("seat")
            if isinstance(seat, int):
                unset.discard(seat)
        elif event.type == "CardsPlaced" and first_placement is None:
            first_placement = index
    if unset and first_placement is not None:
        return first_placement - 1
    return running.last

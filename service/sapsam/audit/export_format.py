"""The audit export: a table's events as JSON lines, with what ties them to the hash chain.

Pure: no database or network imports. The DB-backed exporter (``sapsam.audit.database``) reads a
stream and calls :func:`select_table` or :func:`select_deal`; the offline verifier reads a file
with ``sapsam.audit.export_reading.read_export``, within the documented input limits. The format
is specified in docs/audit.md; in short::

    {"format": "sapsam-audit-export", "format_version": 1, "table_id": ..., "stream_id": ...,
     "scope": "deal" | "table", "deals": [...], "finished_deals": [...], "rule_set": {...},
     "seat_count": N, "segments": [{"anchor": {"version": V, "hash": H}, "first_version": F,
     "last_version": L, "last_hash": X}, ...], "withheld": "..."}
    {"position": P, "version": 1, "type": "TableCreated", "schema_version": 1, "data": {...},
     "metadata": {...}, "hash": "...", "inclusion": {"leaf_index": I, "proof": "<hex>"}}
    ...

An export that carries its proof (docs/audit.md §2.5) has a ``transparency`` object in its header:
the signed checkpoint of the transparency log (docs/transparency.md) and any consistency proofs
from it to other tree sizes; and each event anchored under that checkpoint has an ``inclusion``:
its leaf index and the RFC 9162 inclusion proof of its chained hash. Both are optional: an event
without ``inclusion`` is not anchored (the tree trails the log by a few seconds).

A segment is a run of consecutive stream versions; its anchor is the version and hash of the event
just before its first one (version 0 and 32 zero bytes, the genesis hash, for a segment that starts
the stream). A whole-table export is one segment from the genesis. A deal export is the table's
opening (``TableCreated`` to ``DealerChosen``, from the genesis) plus the deal's own consecutive
events (``DealStarted`` to ``DealScored``, and ``SeriesCompleted`` when it ends a series, then
``SeriesStarted`` at a ``new_series`` table); when the two touch (deal 1) they are one segment.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from sapsam.log.canonical_json import canonical_json
from sapsam.log.chain import GENESIS_HASH
from sapsam.log.records import JsonObject, RecordedEvent
from sapsam.rules.open_face.parameters import HAND_CARDS

FORMAT_TAG: Final = "sapsam-audit-export"
FORMAT_VERSION: Final = 1
STREAM_PREFIX: Final = "table-"
WITHHELD_NOTE: Final = (
    "the secret seed of a running deal is kept outside the log and is never exported; "
    "it appears only in SeedRevealed once the deal ends"
)
# Event types that belong to the table's opening, before any deal.
OPENING_TYPES: Final = frozenset({"TableCreated", "PlayerSeated", "DealerChosen"})


class ExportFormatError(ValueError):
    """The input is not a well-formed audit export; the message names the line and field."""


class ExportAccessError(PermissionError):
    """The requester may not export this: not their table, or a deal still being played.

    ``reason`` is a stable code (``NOT_SEATED``, ``DEAL_NOT_FINISHED``); ``message`` explains.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field: str | None = None


class NothingToExportError(LookupError):
    """The table or the deal does not exist."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field: str | None = None


@dataclass(frozen=True)
class Requester:
    """Who asks for an export: a player by id, or the operator."""

    player_id: str | None
    is_operator: bool = False

    @classmethod
    def operator(cls) -> Requester:
        """The operator: may export anything (running deals without their secrets)."""
        return cls(player_id=None, is_operator=True)

    @classmethod
    def player(cls, player_id: str) -> Requester:
        """A player: may export finished deals of tables where they hold a seat."""
        return cls(player_id=player_id, is_operator=False)


@dataclass(frozen=True)
class ChainAnchor:
    """The version and hash of the event just before a segment (0 and the genesis hash)."""

    version: int
    hash: bytes

    @property
    def is_genesis(self) -> bool:
        """True for the start of the stream."""
        return self.version == 0 and self.hash == GENESIS_HASH


GENESIS_ANCHOR: Final = ChainAnchor(0, GENESIS_HASH)


@dataclass(frozen=True)
class Segment:
    """Consecutive stream versions ``first_version..last_version`` and where they hang."""

    anchor: ChainAnchor
    first_version: int
    last_version: int
    last_hash: bytes


@dataclass(frozen=True)
class EventInclusion:
    """Where an event's chained hash is in the transparency log's tree, and the proof:
    ``proof`` is the RFC 9162 inclusion proof's hashes, 32 bytes each, concatenated."""

    leaf_index: int
    proof: bytes


@dataclass(frozen=True)
class ConsistencyProof:
    """The RFC 9162 consistency proof from the tree of ``old_size`` leaves to the tree of
    ``new_size`` (hashes of 32 bytes each, concatenated). One side is the export's checkpoint."""

    old_size: int
    new_size: int
    proof: bytes


@dataclass(frozen=True)
class ExportTransparency:
    """The header's ``transparency`` object: the signed checkpoint (a C2SP signed note: the
    checkpoint text, a blank line, the signature lines) the events' inclusion proofs lead to, and
    consistency proofs between its tree and others (to link a reader's own checkpoint)."""

    checkpoint: str
    consistency: tuple[ConsistencyProof, ...] = ()


@dataclass(frozen=True)
class ExportedEvent:
    """One event line: a recorded event without its stream (the header names it), and its place
    in the transparency log's tree when the export carries it."""

    position: int
    version: int
    type: str
    schema_version: int
    data: JsonObject
    metadata: JsonObject
    hash: bytes
    inclusion: EventInclusion | None = None

    def recorded(self, stream_id: str) -> RecordedEvent:
        """As the store's record type, for the chain functions."""
        return RecordedEvent(
            position=self.position,
            stream_id=stream_id,
            version=self.version,
            type=self.type,
            schema_version=self.schema_version,
            data=self.data,
            metadata=self.metadata,
            hash=self.hash,
        )


@dataclass(frozen=True)
class ExportHeader:
    """The first line: what the export covers and how it is anchored."""

    table_id: str
    stream_id: str
    scope: str
    deals: tuple[int, ...]
    finished_deals: tuple[int, ...]
    rule_set: JsonObject
    seat_count: int
    segments: tuple[Segment, ...]
    withheld: str = WITHHELD_NOTE
    format_version: int = FORMAT_VERSION
    transparency: ExportTransparency | None = None
    display_names: tuple[tuple[str, str], ...] = ()
    """(player id, display name) of the players seated in the export, as the server's player
    directory names them: **labels, not verified** (no hash, signature or check covers them; the
    player ids in the events are what the checks bind). Shown beside the ids, never instead."""


@dataclass(frozen=True)
class AuditExport:
    """A parsed export: the header and the event lines in order."""

    header: ExportHeader
    events: tuple[ExportedEvent, ...] = field(default=())
    # True when the events came from ``read_export``: parsed from JSON with floats and NaN
    # refused, so the chain check may hash them without walking them first (same outcome). Not
    # compared: it says how the export was obtained, not what it holds.
    parsed_json: bool = field(default=False, compare=False)


# -- writing -------------------------------------------------------------------------------------


def _anchor_json(anchor: ChainAnchor) -> dict[str, Any]:
    return {"version": anchor.version, "hash": anchor.hash.hex()}


def transparency_to_dict(transparency: ExportTransparency) -> dict[str, Any]:
    """The header's ``transparency`` object."""
    return {
        "checkpoint": transparency.checkpoint,
        "consistency": [
            {"old_size": proof.old_size, "new_size": proof.new_size, "proof": proof.proof.hex()}
            for proof in transparency.consistency
        ],
    }


def header_to_dict(header: ExportHeader) -> dict[str, Any]:
    """The header line's JSON object (``transparency`` only when the export carries it)."""
    value = _header_dict(header)
    if header.display_names:
        value["display_names"] = dict(header.display_names)
    if header.transparency is not None:
        value["transparency"] = transparency_to_dict(header.transparency)
    return value


def _header_dict(header: ExportHeader) -> dict[str, Any]:
    return {
        "format": FORMAT_TAG,
        "format_version": header.format_version,
        "table_id": header.table_id,
        "stream_id": header.stream_id,
        "scope": header.scope,
        "deals": list(header.deals),
        "finished_deals": list(header.finished_deals),
        "rule_set": dict(header.rule_set),
        "seat_count": header.seat_count,
        "segments": [
            {
                "anchor": _anchor_json(segment.anchor),
                "first_version": segment.first_version,
                "last_version": segment.last_version,
                "last_hash": segment.last_hash.hex(),
            }
            for segment in header.segments
        ],
        "withheld": header.withheld,
    }


def event_to_dict(event: ExportedEvent) -> dict[str, Any]:
    """An event line's JSON object (``inclusion`` only for an event the export anchors)."""
    value: dict[str, Any] = {
        "position": event.position,
        "version": event.version,
        "type": event.type,
        "schema_version": event.schema_version,
        "data": event.data,
        "metadata": event.metadata,
        "hash": event.hash.hex(),
    }
    if event.inclusion is not None:
        value["inclusion"] = {
            "leaf_index": event.inclusion.leaf_index,
            "proof": event.inclusion.proof.hex(),
        }
    return value


def write_lines(export: AuditExport) -> Iterator[str]:
    """The export as JSON lines (no trailing newlines): the header, then one line per event.

    Lines are canonical JSON (sorted keys, no spaces, UTF-8), so the same export always gives the
    same bytes.
    """
    yield canonical_json(header_to_dict(export.header)).decode("utf-8")
    for event in export.events:
        yield canonical_json(event_to_dict(event)).decode("utf-8")


def export_text(export: AuditExport) -> str:
    """The whole export as one text, one line per record, ending with a newline."""
    return "".join(line + "\n" for line in write_lines(export))


# -- display names: labels the export carries, never checked ------------------------------------

MAX_DISPLAY_NAMES: Final = 64
"""At most this many labels in a header (a table seats at most a few players, replacements too)."""
MAX_DISPLAY_NAME_LENGTH: Final = 64
"""A label's length at most (the player directory's limit, sapsam.api.players)."""
SEATING_TYPES: Final = frozenset({"PlayerSeated", "SeatReplaced"})


def display_names_from(value: object, where: str) -> tuple[tuple[str, str], ...]:
    """The header's ``display_names`` object (player id to display name) as sorted pairs;
    ``ExportFormatError`` naming the field for anything else or beyond the limits."""
    field_name = f"{where} display_names"
    if type(value) is not dict or len(value) > MAX_DISPLAY_NAMES:
        raise ExportFormatError(
            f"{field_name} must be an object of at most {MAX_DISPLAY_NAMES} player ids and names"
        )
    for player_id, name in value.items():
        if type(name) is not str or not 0 < len(name) <= MAX_DISPLAY_NAME_LENGTH:
            raise ExportFormatError(
                f"{field_name}: the name of a player must be 1 to {MAX_DISPLAY_NAME_LENGTH}"
                " characters"
            )
        if not 0 < len(player_id) <= MAX_DISPLAY_NAME_LENGTH:
            raise ExportFormatError(f"{field_name}: a player id must be 1 to 64 characters")
    return tuple(sorted(value.items()))


def seated_players(events: Sequence[ExportedEvent] | Sequence[RecordedEvent]) -> list[str]:
    """The player ids the events seat (``PlayerSeated``, ``SeatReplaced``), first seen first."""
    players: list[str] = []
    for event in events:
        player = event.data.get("player_id") if event.type in SEATING_TYPES else None
        if isinstance(player, str) and player not in players:
            players.append(player)
    return players


def with_display_names(export: AuditExport, names: Mapping[str, str]) -> AuditExport:
    """``export`` labelled with the display names of the players it seats (others left out)."""
    seated = seated_players(export.events)
    labels = tuple(
        sorted(
            (player, names[player][:MAX_DISPLAY_NAME_LENGTH])
            for player in seated
            if names.get(player)
        )
    )
    return replace(export, header=replace(export.header, display_names=labels))


# -- selecting what to export (from a stream read by the caller) ---------------------------------


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


def _segments(events: Sequence[RecordedEvent], ranges: Sequence[tuple[int, int]]) -> list[Segment]:
    """Segments for inclusive index ranges (in order), merging ranges that touch."""
    merged: list[tuple[int, int]] = []
    for first, last in ranges:
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
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
    segments = _segments(events, ranges)
    chosen = [
        event
        for segment in segments
        for event in events
        if segment.first_version <= event.version <= segment.last_version
    ]
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

"""The audit export: a table's events as JSON lines, with what ties them to the hash chain.

Pure: no database or network imports. The DB-backed exporter (``sapsam.audit.database``) reads a
stream and calls ``select_table`` or ``select_deal`` (``sapsam.audit.export_selection``, which
chooses what an export holds); the offline verifier reads a file with
``sapsam.audit.export_reading.read_export``, within the documented input limits. The format is
specified in docs/audit.md; in short::

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
    canonical_content: bytes | None = field(default=None, init=False, repr=False, compare=False)
    """The canonical JSON of ``{"data": data, "metadata": metadata}`` where the reader had it
    (``event_lines``: a line in the log's own spelling), for the chain to hash without spelling
    the two again; None otherwise. Not an argument: an event made or ``replace``d in code has
    None, so it can never disagree with the data."""

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

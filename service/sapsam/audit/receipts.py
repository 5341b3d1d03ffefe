"""An export against the receipts a player kept (docs/transparency.md §9.2): every receipt of the
export's stream must be signed by a pinned server key, and every event it names must be in the
export unchanged (same version, position, type and chained hash).

A re-chained forgery — a reveal replaced by a timeout and every later hash recomputed, a deal
re-cut, a deleted last deal — passes the export's own checks, since whoever rewrites the log can
recompute its chain; it cannot recompute the server's signature on a receipt the player holds.

Kept receipts are JSON lines with a ``signed_note`` field (what the SDK writes,
``sapsam_client.receipts``); only the signed note counts, the other fields are ignored. A bare
signed note is also read (a file holding one note). Pure: the caller reads the files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from sapsam.audit.export_format import AuditExport, ExportedEvent
from sapsam.audit.report import AuditCheck, Status
from sapsam.log.receipt import HEADER, Receipt, ReceiptEvent, open_receipt
from sapsam.log.signed_note import NoteError, VerifierKey, parse_note
from sapsam.plurals import plural

CHECK_NAME: Final = "receipts"


@dataclass(frozen=True)
class KeptReceipt:
    """A signed receipt note and where it was found (``file:line``)."""

    source: str
    note: str


@dataclass(frozen=True)
class ReceiptsResult:
    """What the receipts said about one export."""

    checked: int = 0
    """Receipts of the export's stream whose events were compared."""
    events: int = 0
    """Receipted events found in the export unchanged."""
    other_streams: int = 0
    """Receipts of other streams (ignored)."""
    not_covered: int = 0
    """Receipts of the stream outside a deal export's segments (other deals)."""
    problems: tuple[str, ...] = field(default=())
    """Each failure, naming the receipt (source, request id) and the event."""

    def checks(self) -> list[AuditCheck]:
        """The report's ``receipts`` checks: one failure per problem, or one pass."""
        if self.problems:
            return [
                AuditCheck(CHECK_NAME, Status.FAILED, detail=problem) for problem in self.problems
            ]
        detail = (
            f"{plural(self.checked, 'receipt')} of this stream"
            f" {'holds' if self.checked == 1 else 'hold'}:"
            f" {plural(self.events, 'receipted event')} in the export unchanged"
        )
        if self.not_covered:
            detail += f"; {plural(self.not_covered, 'receipt')} of other deals not in this export"
        if self.other_streams:
            detail += f"; {plural(self.other_streams, 'receipt')} of other streams ignored"
        status = Status.PASSED if self.checked else Status.NOT_COVERED
        return [AuditCheck(CHECK_NAME, status, detail=detail)]


def parse_kept_receipts(text: str, source: str) -> tuple[list[KeptReceipt], list[str]]:
    """The receipts in one kept file: JSON lines with ``signed_note`` (the SDK's), or one bare
    signed note. Returns them and a problem for each line that is neither."""
    if text.startswith(HEADER + "\n"):
        return [KeptReceipt(source, text)], []
    kept: list[KeptReceipt] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            problems.append(f"{source}:{number}: not a JSON line")
            continue
        note = value.get("signed_note") if isinstance(value, dict) else None
        if not isinstance(note, str):
            problems.append(f"{source}:{number}: no signed_note")
            continue
        kept.append(KeptReceipt(f"{source}:{number}", note))
    return kept, problems


def _covered(export: AuditExport) -> list[tuple[int, int]]:
    return [(segment.first_version, segment.last_version) for segment in export.header.segments]


def _name(kept: KeptReceipt, receipt: Receipt) -> str:
    return (
        f"receipt {kept.source} (request {receipt.request_id!r}, versions"
        f" {receipt.first_version}..{receipt.last_version}, recorded {receipt.time})"
    )


def _event_text(event: ReceiptEvent | ExportedEvent) -> str:
    return f"{event.type} at position {event.position}, hash {event.hash.hex()}"


def _compare(
    kept: KeptReceipt, receipt: Receipt, by_version: dict[int, ExportedEvent]
) -> tuple[int, list[str]]:
    problems = []
    for event in receipt.events:
        found = by_version.get(event.version)
        if found is None:
            problems.append(
                f"{_name(kept, receipt)}: version {event.version} ({_event_text(event)}) is"
                " missing from the export"
            )
        elif (found.position, found.type, found.hash) != (event.position, event.type, event.hash):
            problems.append(
                f"{_name(kept, receipt)}: version {event.version} was {_event_text(event)};"
                f" the export has {_event_text(found)}"
            )
    return len(receipt.events) - len(problems), problems


def check_receipts(
    export: AuditExport, kept: Sequence[KeptReceipt], keys: Sequence[VerifierKey]
) -> ReceiptsResult:
    """Every kept receipt of the export's stream against ``keys`` (the pinned server keys,
    current and retired) and the export. A table export must hold every receipted event; a deal
    export those of receipts that start inside its segments (a receipt of another deal is not
    covered). Problems name the receipt."""
    stream = export.header.stream_id
    whole_table = export.header.scope == "table"
    covered = _covered(export)
    by_version = {event.version: event for event in export.events}
    checked = events = other = not_covered = 0
    problems: list[str] = []
    seen: set[str] = set()
    for item in kept:
        try:
            receipt = Receipt.parse(parse_note(item.note).text)
        except NoteError as error:
            problems.append(f"receipt {item.source}: not a signed receipt ({error})")
            continue
        if receipt.stream != stream:
            other += 1
            continue
        if item.note in seen:  # a retry's receipt: the same bytes again
            continue
        seen.add(item.note)
        try:
            open_receipt(item.note, keys)
        except NoteError as error:
            problems.append(f"{_name(item, receipt)}: the signature does not verify ({error})")
            continue
        starts_inside = any(low <= receipt.first_version <= high for low, high in covered)
        if not whole_table and not starts_inside:
            not_covered += 1
            continue
        checked += 1
        held, found = _compare(item, receipt, by_version)
        events += held
        problems.extend(found)
    return ReceiptsResult(checked, events, other, not_covered, tuple(problems))

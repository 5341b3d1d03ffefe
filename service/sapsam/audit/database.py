"""The audit against the database: exports, online verification, and the whole-database audit.

This is the only audit module (with ``projection_audit``) that touches PostgreSQL. It reads the
log with ``sapsam.store.reads`` and hands the events to the same pure code the offline verifier
runs, so a deal verified online and its exported file verified offline pass exactly the same
checks. Nothing here reads ``deal_secrets``: the seed of a running deal is never exported.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from sapsam.audit.export_format import (
    AuditExport,
    NothingToExportError,
    Requester,
    select_deal,
    select_table,
)
from sapsam.audit.projection_audit import compare_projections, default_projectors
from sapsam.audit.report import AuditCheck, AuditReport, Status, merge
from sapsam.audit.verifier import verify_audit_export
from sapsam.domain.events import DEFAULT_CODEC, EventCodec
from sapsam.store.chain import verify_stream_chain
from sapsam.store.projections import Projector
from sapsam.store.reads import read_stream
from sapsam.store.records import RecordedEvent

Connection = psycopg.Connection[Any]
Progress = Callable[[int, int], None]
"""Called with (deals done, deals in all) as the whole-database audit goes."""

STREAM_PREFIX = "table-"


def table_stream(table_id: uuid.UUID) -> str:
    """The log stream of a table."""
    return f"{STREAM_PREFIX}{table_id}"


def _table_events(
    connection: Connection, table_id: uuid.UUID, through_deal: int | None = None
) -> list[RecordedEvent]:
    """The table's stream, or with ``through_deal`` only up to the end of that deal."""
    stream_id = table_stream(table_id)
    last: int | None = None
    if through_deal is not None:
        # Nothing after the deal is needed: stop before the next deal's DealStarted.
        row = connection.execute(
            "SELECT min(version) FROM events WHERE stream_id = %s AND type = 'DealStarted'"
            " AND data->>'deal_number' = %s",
            [stream_id, str(through_deal + 1)],
        ).fetchone()
        last = None if row is None or row[0] is None else int(row[0]) - 1
    events = read_stream(connection, stream_id, 1, last)
    if not events:
        raise NothingToExportError("TABLE_NOT_FOUND", f"no table {table_id}")
    return events


def export_table(connection: Connection, table_id: uuid.UUID, requester: Requester) -> AuditExport:
    """The whole table (its series) as an export; see ``select_table`` for who gets what."""
    return select_table(_table_events(connection, table_id), requester, str(table_id))


def export_deal(
    connection: Connection, table_id: uuid.UUID, deal_number: int, requester: Requester
) -> AuditExport:
    """One deal as an export; ``ExportAccessError`` if the requester may not have it."""
    events = _table_events(connection, table_id, deal_number)
    return select_deal(events, deal_number, requester, str(table_id))


def _stream_check(events: Sequence[RecordedEvent], last_version: int) -> AuditCheck:
    """The stored chain from the genesis up to the export's end: confirms its anchors."""
    prefix = [event for event in events if event.version <= last_version]
    report = verify_stream_chain(prefix)
    if report.intact:
        return AuditCheck(
            "stored_chain",
            Status.PASSED,
            f"the database's chain holds from the genesis to version {last_version}, so every "
            "anchor of the export is the stored event's hash",
        )
    problem = report.problems[0]
    return AuditCheck(
        "stored_chain",
        Status.FAILED,
        f"the database's chain breaks at version {problem.version}: {problem.reason}",
    )


def verify_deal_online(
    connection: Connection,
    table_id: uuid.UUID,
    deal_number: int,
    requester: Requester | None = None,
    codec: EventCodec = DEFAULT_CODEC,
) -> AuditReport:
    """Verify one deal from the database: the offline checks on its export, plus the stored chain
    from the genesis (which confirms the anchors an offline verifier must take as stated).

    ``requester`` (default: the operator) must be allowed to export the deal.
    """
    events = _table_events(connection, table_id, deal_number)
    export = select_deal(events, deal_number, requester or Requester.operator(), str(table_id))
    offline = verify_audit_export(export, codec)
    last = export.header.segments[-1].last_version
    stored = AuditReport(offline.subject, (_stream_check(events, last),))
    return merge(offline.subject, [offline, stored])


def verify_table_online(
    connection: Connection, table_id: uuid.UUID, codec: EventCodec = DEFAULT_CODEC
) -> AuditReport:
    """Verify a whole table from the database (every finished deal and the series)."""
    events = _table_events(connection, table_id)
    return verify_audit_export(select_table(events, Requester.operator(), str(table_id)), codec)


@dataclass(frozen=True)
class StreamSummary:
    """A stream of the log and how many of its events are finished deals' scores."""

    stream_id: str
    events: int
    finished_deals: int


def list_streams(connection: Connection) -> list[StreamSummary]:
    """Every stream of the log, in stream order."""
    rows = connection.execute(
        "SELECT stream_id, count(*), count(*) FILTER (WHERE type = 'DealScored')"
        " FROM events GROUP BY stream_id ORDER BY stream_id"
    ).fetchall()
    return [StreamSummary(str(row[0]), int(row[1]), int(row[2])) for row in rows]


def _verify_stream(
    connection: Connection, stream: StreamSummary, codec: EventCodec
) -> tuple[AuditReport, bool]:
    """One stream's report and whether it is a table (its chain is checked by the export)."""
    events = read_stream(connection, stream.stream_id)
    if events and events[0].type == "TableCreated":
        export = select_table(events, Requester.operator(), stream.stream_id)
        return verify_audit_export(export, codec), True
    report = verify_stream_chain(events)
    check = (
        AuditCheck("chain", Status.PASSED, f"{len(events)} events")
        if report.intact
        else AuditCheck(
            "chain",
            Status.FAILED,
            f"breaks at version {report.problems[0].version}: {report.problems[0].reason}",
        )
    )
    return AuditReport(stream.stream_id, (check,), events_checked=len(events)), False


def audit_database(
    connection: Connection,
    progress: Progress | None = None,
    projectors: Sequence[Projector] | None = None,
    codec: EventCodec = DEFAULT_CODEC,
) -> AuditReport:
    """Re-verify every stream's chain and every finished deal, then the read models.

    The report holds a summary check for chains, deals and series, one failed check per problem
    found (named after its stream), and the projection comparison (``projection_audit``).
    """
    streams = list_streams(connection)
    total_deals = sum(stream.finished_deals for stream in streams)
    done = 0
    problems: list[AuditCheck] = []
    events_checked = 0
    deals_verified = 0
    tables = 0
    broken_chains = 0
    for stream in streams:
        report, is_table = _verify_stream(connection, stream, codec)
        tables += is_table
        events_checked += report.events_checked
        deals_verified += report.deals_verified
        for check in report.failed:
            problems.append(
                AuditCheck(
                    f"{stream.stream_id}: {check.label}",
                    Status.FAILED,
                    check.detail,
                    check.expected,
                    check.found,
                )
            )
            broken_chains += check.name == "chain"
        done += stream.finished_deals
        if progress is not None:
            progress(done, total_deals)
    summary = [
        AuditCheck(
            "chains",
            Status.FAILED if broken_chains else Status.PASSED,
            f"{len(streams)} stream(s), {events_checked} events: "
            f"{len(streams) - broken_chains} chain(s) intact, {broken_chains} broken",
        ),
        AuditCheck(
            "deals",
            Status.PASSED if deals_verified == total_deals else Status.FAILED,
            f"{deals_verified} of {total_deals} finished deal(s) in {tables} table(s) verified",
        ),
    ]
    chosen = default_projectors() if projectors is None else projectors
    projection_checks = compare_projections(connection, chosen)
    return AuditReport(
        subject="the whole database",
        checks=(*summary, *problems, *projection_checks),
        deals_verified=deals_verified,
        events_checked=events_checked,
    )

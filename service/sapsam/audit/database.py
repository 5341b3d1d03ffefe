"""The audit against the database: exports, online verification, and the whole-database audit.

This is the only audit module (with ``projection_audit``) that touches PostgreSQL. It reads the
log with ``sapsam.store.reads`` and hands the events to the same pure code the offline verifier
runs, so a deal verified online and its exported file verified offline pass exactly the same
checks. Nothing here reads ``deal_secrets``: the seed of a running deal is never exported.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from sapsam.audit.anchoring import Trust
from sapsam.audit.database_checks import acknowledged_request_checks, deals_in_play_checks
from sapsam.audit.export_format import (
    AuditExport,
    NothingToExportError,
    Requester,
    seated_players,
    with_display_names,
)
from sapsam.audit.export_selection import select_deal, select_table
from sapsam.audit.projection_audit import ProjectionComparison, default_projectors
from sapsam.audit.report import AuditCheck, AuditReport, Status, merge
from sapsam.audit.stream_audit import StreamResult, audit_in_workers, audit_stream
from sapsam.audit.verifier import verify_audit_export
from sapsam.domain.event_codec import DEFAULT_CODEC, EventCodec
from sapsam.log.chain import verify_stream_chain
from sapsam.log.records import RecordedEvent
from sapsam.plurals import plural
from sapsam.store.offline_reads import read_stream
from sapsam.store.projection_folds import Row
from sapsam.store.projections import Projector
from sapsam.store.queries import query

Connection = psycopg.Connection[Any]
Progress = Callable[[int, int], None]
"""Called with (deals done, deals in all) as the whole-database audit goes."""

STREAM_PREFIX = "table-"


def table_stream(table_id: uuid.UUID) -> str:
    """The log stream of a table."""
    return f"{STREAM_PREFIX}{table_id}"


NEXT_DEAL_START = (
    "SELECT min(version) FROM events WHERE stream_id = %s AND type = 'DealStarted'"
    " AND data->>'deal_number' = %s"
)
"""Where the deal after a given one starts (parameters: the stream, that next deal's number)."""


def deal_end(row: Sequence[Any] | None) -> int | None:
    """The last version of a deal, from ``NEXT_DEAL_START``'s row (None: the stream's end)."""
    return None if row is None or row[0] is None else int(row[0]) - 1


def found_events(events: list[RecordedEvent], table_id: uuid.UUID) -> list[RecordedEvent]:
    """``events``, unless there are none: then the table does not exist."""
    if not events:
        raise NothingToExportError("TABLE_NOT_FOUND", f"no table {table_id}")
    return events


def _table_events(
    connection: Connection, table_id: uuid.UUID, through_deal: int | None = None
) -> list[RecordedEvent]:
    """The table's stream, or with ``through_deal`` only up to the end of that deal."""
    stream_id = table_stream(table_id)
    last: int | None = None
    if through_deal is not None:
        # Nothing after the deal is needed: stop before the next deal's DealStarted.
        row = connection.execute(NEXT_DEAL_START, [stream_id, str(through_deal + 1)]).fetchone()
        last = deal_end(row)
    return found_events(read_stream(connection, stream_id, 1, last), table_id)


def export_table(connection: Connection, table_id: uuid.UUID, requester: Requester) -> AuditExport:
    """The whole table (its series) as an export, labelled with its players' display names;
    see ``select_table`` for who gets what."""
    export = select_table(_table_events(connection, table_id), requester, str(table_id))
    return with_display_names(export, display_names(connection, seated_players(export.events)))


def export_deal(
    connection: Connection, table_id: uuid.UUID, deal_number: int, requester: Requester
) -> AuditExport:
    """One deal as an export; ``ExportAccessError`` if the requester may not have it."""
    events = _table_events(connection, table_id, deal_number)
    export = select_deal(events, deal_number, requester, str(table_id))
    return with_display_names(export, display_names(connection, seated_players(export.events)))


def display_names(connection: Connection, player_ids: Sequence[str]) -> dict[str, str]:
    """The player directory's display names of these players (ids of registered players; the
    ids of a table made without the directory, such as the sample tables, have none)."""
    registered = [player for player in player_ids if is_uuid(player)]
    if not registered:
        return {}
    rows = connection.execute(query("players.display_names"), {"players": registered}).fetchall()
    return {str(player): str(name) for player, name in rows}


def is_uuid(text: str) -> bool:
    """Whether ``text`` is a UUID (the ids the player directory gives)."""
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


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
    return verify_deal_events(events, table_id, deal_number, requester, codec)


def verify_deal_events(
    events: Sequence[RecordedEvent],
    table_id: uuid.UUID,
    deal_number: int,
    requester: Requester | None = None,
    codec: EventCodec = DEFAULT_CODEC,
) -> AuditReport:
    """``verify_deal_online`` on the table's events as read (through the deal)."""
    export = select_deal(events, deal_number, requester or Requester.operator(), str(table_id))
    return verify_selected_deal(events, export, codec)


def verify_selected_deal(
    events: Sequence[RecordedEvent],
    export: AuditExport,
    codec: EventCodec = DEFAULT_CODEC,
    trust: Trust | None = None,
) -> AuditReport:
    """The checks of ``export`` (a deal selected from ``events``, perhaps given its proof; with
    ``trust``, its anchoring too), plus the stored chain from the genesis to its end."""
    offline = verify_audit_export(export, codec, trust)
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
    """A stream of the log: its events, how many are finished deals' scores, its last version."""

    stream_id: str
    events: int
    finished_deals: int
    head: int = 0


def list_streams(connection: Connection) -> list[StreamSummary]:
    """Every stream of the log, in stream order."""
    rows = connection.execute(
        "SELECT stream_id, count(*), count(*) FILTER (WHERE type = 'DealScored'), max(version)"
        " FROM events GROUP BY stream_id ORDER BY stream_id"
    ).fetchall()
    return [StreamSummary(str(row[0]), int(row[1]), int(row[2]), int(row[3])) for row in rows]


def audit_database(
    connection: Connection,
    progress: Progress | None = None,
    projectors: Sequence[Projector] | None = None,
    codec: EventCodec = DEFAULT_CODEC,
    now_ms: int | None = None,
    workers: int = 1,
) -> AuditReport:
    """Re-verify every stream's chain and every finished deal, every acknowledged request against
    the log, the deals still in play, then the read models.

    One REPEATABLE READ snapshot for all of it (``connection`` in autocommit mode, outside a
    transaction; rolled back at the end), so the parts agree with each other while appends go on.
    Each stream is read once: verified, and folded into the read models it feeds
    (``projection_audit``), so the cost grows linearly with the log. With ``workers`` > 1 (and a
    log of more than ``PARALLEL_FROM_EVENTS`` events) the streams are spread over that many
    processes sharing the snapshot (``stream_audit``). The report holds summary checks (chains,
    deals, acknowledged requests, deals in play), one check per problem found or deal in play
    (named after its stream), and one per read model.
    """
    chosen = default_projectors() if projectors is None else projectors
    now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    with connection.transaction() as transaction:
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        report = _audit_snapshot(connection, progress, chosen, codec, now, workers)
        raise psycopg.Rollback(transaction)
    return report


# Below this many events, starting worker processes (about a second) costs more than it saves.
PARALLEL_FROM_EVENTS = 50_000


@dataclass
class _Tally:
    """The streams-and-deals pass so far."""

    total_deals: int
    progress: Progress | None
    done: int = 0
    events_checked: int = 0
    deals_verified: int = 0
    tables: int = 0
    broken_chains: int = 0

    def __post_init__(self) -> None:
        self.problems: list[AuditCheck] = []
        self.table_rows: list[tuple[str, Row]] = []
        self.finished: dict[str, int] = {}

    def add(self, result: StreamResult) -> None:
        self.tables += result.is_table
        self.events_checked += result.events_checked
        self.deals_verified += result.deals_verified
        if result.table_row is not None:
            self.table_rows.append((result.stream_id, result.table_row))
        for check in result.failed:
            self.problems.append(
                AuditCheck(
                    f"{result.stream_id}: {check.label}",
                    Status.FAILED,
                    check.detail,
                    check.expected,
                    check.found,
                )
            )
            self.broken_chains += check.name == "chain"
        self.done += self.finished.get(result.stream_id, 0)
        if self.progress is not None:
            self.progress(self.done, self.total_deals)


def _audit_snapshot(
    connection: Connection,
    progress: Progress | None,
    projectors: Sequence[Projector],
    codec: EventCodec,
    now_ms: int,
    workers: int,
) -> AuditReport:
    streams = list_streams(connection)
    tally = _Tally(sum(stream.finished_deals for stream in streams), progress)
    tally.finished = {stream.stream_id: stream.finished_deals for stream in streams}
    comparison = ProjectionComparison(projectors)
    heads = {stream.stream_id: stream.head for stream in streams}
    requests: list[AuditCheck] = []

    def read_the_rest() -> None:
        # What needs only the snapshot, not the streams' verdicts.
        requests.extend(acknowledged_request_checks(connection, heads))
        comparison.read_live(connection)

    if (
        workers > 1
        and codec is DEFAULT_CODEC
        and sum(s.events for s in streams) >= PARALLEL_FROM_EVENTS
    ):
        sizes = [(stream.stream_id, stream.events) for stream in streams]
        comparison.add(
            audit_in_workers(connection, sizes, comparison.names, workers, tally.add, read_the_rest)
        )
    else:
        for stream in streams:
            events = read_stream(connection, stream.stream_id)
            tally.add(audit_stream(stream.stream_id, events, comparison.local, codec))
        read_the_rest()
    summary = [
        AuditCheck(
            "chains",
            Status.FAILED if tally.broken_chains else Status.PASSED,
            f"{plural(len(streams), 'stream')}, {plural(tally.events_checked, 'event')}: "
            f"{plural(len(streams) - tally.broken_chains, 'chain')} intact,"
            f" {tally.broken_chains} broken",
        ),
        AuditCheck(
            "deals",
            Status.PASSED if tally.deals_verified == tally.total_deals else Status.FAILED,
            f"{tally.deals_verified} of {plural(tally.total_deals, 'finished deal')} in"
            f" {plural(tally.tables, 'table')} verified",
        ),
    ]
    in_play = deals_in_play_checks(sorted(tally.table_rows, key=lambda item: item[0]), now_ms)
    projection_checks = comparison.checks(connection)
    return AuditReport(
        subject="the whole database",
        checks=(
            *summary,
            requests[0],
            in_play[0],
            *sorted(tally.problems, key=lambda check: check.name.split(":")[0]),
            *requests[1:],
            *in_play[1:],
            *projection_checks,
        ),
        deals_verified=tally.deals_verified,
        events_checked=tally.events_checked,
    )

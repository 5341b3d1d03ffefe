"""One stream of the whole-database audit, and worker processes that audit many at once.

``audit_stream`` is what ``sapsam audit verify --all`` does with each stream it reads: verify it
(a table's whole-table export, any other stream's chain), fold it into the in-memory read models
(``projection_audit.StreamFolds``) and note the table's phase (for the deals in play). Streams are
independent of each other, so ``audit_in_workers`` spreads them over processes: each opens its own
connection and imports the audit's snapshot (``SET TRANSACTION SNAPSHOT``), so every process reads
exactly the log the main one reads, and sends back only verdicts and folded rows.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from sapsam.audit.export_format import Requester
from sapsam.audit.export_selection import select_table
from sapsam.audit.projection_audit import FoldedReadModels, StreamFolds
from sapsam.audit.report import AuditCheck, AuditReport, Status, merge
from sapsam.audit.verifier import verify_audit_export
from sapsam.domain.event_codec import DEFAULT_CODEC, EventCodec
from sapsam.log.chain import GENESIS_HASH, verify_stream_chain
from sapsam.log.records import RecordedEvent
from sapsam.plurals import plural
from sapsam.store.offline_reads import read_stream
from sapsam.store.projection_folds import Row, table_state_row

Connection = psycopg.Connection[Any]
# Streams per task handed to a worker: enough to amortise the round trip, few enough to balance.
EVENTS_PER_TASK = 20_000


@dataclass(frozen=True)
class StreamResult:
    """What the whole-database audit keeps of one stream."""

    stream_id: str
    failed: tuple[AuditCheck, ...]
    events_checked: int
    deals_verified: int
    is_table: bool
    table_row: Row | None  # table_state as the log makes it (None: not a table)


def chain_check(
    name: str, events: Sequence[RecordedEvent], anchor: tuple[bytes, int]
) -> AuditCheck:
    """The stream's stored chain from ``anchor`` (hash, version) over ``events``."""
    report = verify_stream_chain(events, anchor[0], anchor[1])
    if report.intact:
        return AuditCheck(name, Status.PASSED, plural(len(events), "event"))
    problem = report.problems[0]
    return AuditCheck(name, Status.FAILED, f"breaks at version {problem.version}: {problem.reason}")


def verify_events(
    stream_id: str, events: Sequence[RecordedEvent], codec: EventCodec
) -> tuple[AuditReport, bool]:
    """One stream's report and whether it is a table (its chain is checked by the export).

    A table's whole-table export stops before the first reveal of a deal still being played
    (``select_table``); the rest of its stream is chained on from the export's last hash here.
    """
    if events and events[0].type == "TableCreated":
        export = select_table(events, Requester.operator(), stream_id)
        report = verify_audit_export(export, codec)
        exported = len(export.events)
        if exported < len(events):
            last = export.header.segments[-1]
            tail = chain_check("chain", events[exported:], (last.last_hash, last.last_version))
            if tail.failed:
                report = merge(report.subject, [report, AuditReport(stream_id, (tail,))])
        return report, True
    check = chain_check("chain", events, (GENESIS_HASH, 0))
    return AuditReport(stream_id, (check,), events_checked=len(events)), False


def audit_stream(
    stream_id: str, events: Sequence[RecordedEvent], folds: StreamFolds, codec: EventCodec
) -> StreamResult:
    """Verify one whole stream and fold it into ``folds``."""
    report, is_table = verify_events(stream_id, events, codec)
    folds.fold_stream(events)
    row = None
    if is_table:
        # The table_state fold has just made this row (a table's stream is folded once): take
        # it rather than fold the stream a second time. Without that fold, fold it here.
        row = folds.table_row(stream_id)
        if row is None and not folds.folds_table_state(stream_id):
            try:
                row = table_state_row(events)
            except (KeyError, TypeError, ValueError, AssertionError, AttributeError):
                row = None  # malformed: the deal checks say what is wrong with it
    return StreamResult(
        stream_id,
        report.failed,
        report.events_checked,
        report.deals_verified,
        is_table,
        row,
    )


# -- worker processes -----------------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _start_worker(conninfo: str, snapshot: str, names: Sequence[str]) -> None:
    connection = psycopg.connect(conninfo, autocommit=True)
    connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    connection.execute(sql.SQL("SET TRANSACTION SNAPSHOT {}").format(sql.Literal(snapshot)))
    _WORKER.update(connection=connection, names=tuple(names))


def _audit_task(stream_ids: Sequence[str]) -> tuple[list[StreamResult], FoldedReadModels]:
    connection: Connection = _WORKER["connection"]
    folds = StreamFolds(_WORKER["names"])
    results = [
        audit_stream(stream_id, read_stream(connection, stream_id), folds, DEFAULT_CODEC)
        for stream_id in stream_ids
    ]
    return results, folds.result()


def _tasks(streams: Sequence[tuple[str, int]]) -> Iterator[list[str]]:
    """Stream ids in groups of about ``EVENTS_PER_TASK`` events, the longest streams first."""
    task: list[str] = []
    size = 0
    for stream_id, events in sorted(streams, key=lambda stream: -stream[1]):
        task.append(stream_id)
        size += events
        if size >= EVENTS_PER_TASK:
            yield task
            task, size = [], 0
    if task:
        yield task


def worker_start_method() -> str:
    """``fork`` when this process runs one thread, else ``spawn``.

    A forked worker starts at once with the audit's modules already imported (spawning one
    imports them again: about a second of CPU per worker, a seventh of the whole audit's budget
    on a 2,000-deal-per-second log). It inherits the parent's connection but never uses it, and
    leaves through ``os._exit``, so it never closes it either. With other threads running, a fork
    could copy a lock one of them holds: spawn then, as before.
    """
    return "fork" if threading.active_count() == 1 else "spawn"


def worker_conninfo(connection: Connection) -> str:
    """How a worker connects as this connection did (its password included, which ``dsn``
    leaves out)."""
    password = connection.info.password
    dsn = connection.info.dsn
    return make_conninfo(dsn, password=password) if password else dsn


def audit_in_workers(
    connection: Connection,
    streams: Sequence[tuple[str, int]],
    names: Sequence[str],
    workers: int,
    on_result: Callable[[StreamResult], None],
    meanwhile: Callable[[], None] | None = None,
) -> FoldedReadModels:
    """Audit ``streams`` (id, event count) in ``workers`` processes reading the snapshot of
    ``connection``'s transaction (which must be REPEATABLE READ and stay open meanwhile).

    ``on_result`` gets each stream's result as it comes; returns the folded read models.
    ``meanwhile`` runs in this process once the tasks are handed out, while the workers verify
    (the audit's own reads of the snapshot, which would otherwise leave a core idle after them).
    """
    row = connection.execute("SELECT pg_export_snapshot()").fetchone()
    assert row is not None
    folded = FoldedReadModels()
    context = multiprocessing.get_context(worker_start_method())
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_start_worker,
        initargs=(worker_conninfo(connection), str(row[0]), tuple(names)),
    ) as pool:
        pending: list[Future[tuple[list[StreamResult], FoldedReadModels]]] = [
            pool.submit(_audit_task, task) for task in _tasks(streams)
        ]
        if meanwhile is not None:
            meanwhile()
        for future in as_completed(pending):
            results, part = future.result()
            folded.merge(part)
            for result in results:
                on_result(result)
    return folded

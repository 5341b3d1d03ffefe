"""Reading the event log: one stream from a version, or every stream in global order.

Why reading the global order by ``position > checkpoint`` never skips an event, although appends
run concurrently and may commit out of position order.

Most pages need no proof: a page whose positions run on from the checkpoint without a hole
(``checkpoint + 1, checkpoint + 2, ...``) holds only committed events, and no other event can ever
take one of those positions, so such a page is returned as read, in one statement.

A page with a hole (an append still in flight below a committed one, or the positions of a
rolled-back append) asks the database for a *proven high-water mark* (``sapsam_safe_position()``,
defined by the migrations) and is read again at or below it, in a separate statement so its
snapshot is taken after the proof. Every insert into ``events`` holds a shared advisory lock from
before it draws positions until it ends; the function reads the last position drawn, then waits
for the transactions holding that lock at that moment to end. After that, no transaction can still
commit a position at or below the mark: those that drew one have committed or rolled back. Gaps in
the positions below the mark are rolled-back appends and stay gaps for ever.

The cost: a reader that meets a hole may wait for in-flight appends to finish (about one commit).
Appends never wait for readers. ``read_all`` must not run inside a REPEATABLE READ or SERIALIZABLE
transaction (its second statement needs a fresh snapshot); it checks.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import AsyncIterator, Generator, Sequence
from typing import Any, Final, cast

import msgspec
import psycopg
from psycopg.pq import TransactionStatus

from sapsam.app.store_interface import TypedPage
from sapsam.log.records import RecordedEvent, recorded_event
from sapsam.store.queries import query
from sapsam.store.stream_heads import remember

Connection = psycopg.AsyncConnection[Any]


def event_from_row(row: Sequence[Any]) -> RecordedEvent:
    """Turn a row (position, stream_id, version, type, schema_version, data, metadata, hash).

    The columns come back from psycopg already as int, str, dict and bytes, in the order of
    RecordedEvent's fields.
    """
    return RecordedEvent(*row)


# json's C scanner, the reference: jsonb's text straight to it skips json.loads' encoding sniffing
# and whitespace matching.
_SCAN_JSON = json.scanner.make_scanner(cast(Any, json.JSONDecoder()))  # typeshed's stub is off
_QUICK_DECODE: Final = msgspec.json.decode
_QUICK_REFUSED: Final = (msgspec.MsgspecError, RecursionError, UnicodeError)


def decode_json(data: bytes | bytearray | memoryview | str) -> Any:
    """Decode well-formed JSON as jsonb prints it (or canonical JSON), fast.

    msgspec's C parser (about twice as fast as json's, which dominated replays) gives the value
    json gives for any well-formed JSON it accepts (tests/store/test_store_read_decoding.py
    compares them, floats included); what it refuses (an integer of thousands of digits, say)
    json's scanner decides.
    """
    try:
        return _QUICK_DECODE(data)
    except _QUICK_REFUSED:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        return _SCAN_JSON(text, 0)[0]


# The columns of a read, in RecordedEvent's field order. data and metadata come as jsonb's text,
# decoded by ``recorded_events`` for the whole page at once; the other columns travel in binary
# (ints and bytes need no parsing).
EVENT_COLUMNS = (
    "position, stream_id, version, type, schema_version, data::text, metadata::text, hash"
)

# The first ``limit`` events in ``after < position <= high_water``, by position. The page is taken
# along the primary key bounded below only, and the high-water mark then filters it (PostgreSQL
# never moves a condition into a subquery with a LIMIT): the same rows, since those at or below
# the mark come first in position order. Why not both bounds inside: on a table without planner
# statistics yet (a log just filled, before autovacuum analyses it) a range bounded on both sides
# gets a fixed guess of a few hundred rows, and for that guess PostgreSQL plans a bitmap scan of
# the whole rest of the log and a sort, for every page: a whole replay measured three times slower.
READ_ALL_QUERY = (
    f"SELECT * FROM (SELECT {EVENT_COLUMNS} FROM events"
    " WHERE position > %s ORDER BY position LIMIT %s) page"
    " WHERE position <= %s ORDER BY position"
)


def recorded_events(rows: Sequence[Sequence[Any]]) -> list[RecordedEvent]:
    """Events from rows of ``EVENT_COLUMNS``, equal to ``event_from_row`` of the decoded row.

    jsonb prints well-formed JSON, so a page's data and metadata texts joined by commas are one
    JSON list: one ``decode_json`` call decodes them all, instead of two Python-level
    loader calls per row. The events of one append carry the same metadata (request id, actor,
    time): each distinct metadata text is decoded once and its events share that dict, as the
    events ``append`` returns do.
    """
    if not rows:
        return []
    positions, stream_ids, versions, types, schema_versions, data_texts, metadata_texts, hashes = (
        zip(*rows, strict=True)
    )
    distinct_metadata = list(dict.fromkeys(metadata_texts))
    values = decode_json("[" + ",".join(data_texts) + "," + ",".join(distinct_metadata) + "]")
    count = len(rows)
    if len(values) != count + len(distinct_metadata):  # pragma: no cover - one value per text
        raise RuntimeError(f"{len(values)} JSON values decoded for {count} events")
    metadata_by_text = dict(zip(distinct_metadata, values[count:], strict=True))
    return list(
        map(
            recorded_event,
            positions,
            stream_ids,
            versions,
            types,
            schema_versions,
            values[:count],
            map(metadata_by_text.__getitem__, metadata_texts),
            hashes,
        )
    )


STREAM_CONDITION = "stream_id = %s AND version >= %s AND version <= %s ORDER BY version"
"""The events of one stream in a range of versions (``stream_parameters``), in order."""


NO_MARK: Final = 2**63 - 1
"""The high-water mark of ``READ_ALL_QUERY``'s first try: none."""


def without_hole(rows: Sequence[Sequence[Any]], after_position: int) -> bool:
    """Whether a page of ``READ_ALL_QUERY`` runs on from ``after_position`` with no hole: then
    every position up to its last one is committed (see the module docstring)."""
    return not rows or rows[-1][0] == after_position + len(rows)


def stream_parameters(stream_id: str, from_version: int, to_version: int | None) -> list[Any]:
    """The parameters of ``STREAM_CONDITION``."""
    return [stream_id, from_version, to_version if to_version is not None else 2**31 - 1]


async def select_events(
    connection: Connection, condition: str, parameters: Sequence[Any]
) -> list[RecordedEvent]:
    """The events matching ``condition`` (SQL after ``WHERE``, with its ORDER BY), decoded the
    one fast way every read of the log uses."""
    cursor = connection.cursor(binary=True)
    await cursor.execute(f"SELECT {EVENT_COLUMNS} FROM events WHERE {condition}", parameters)
    return recorded_events(await cursor.fetchall())


async def read_stream(
    connection: Connection,
    stream_id: str,
    from_version: int = 1,
    to_version: int | None = None,
) -> list[RecordedEvent]:
    """The events of one stream with ``from_version <= version [<= to_version]``, in order."""
    events = await select_events(
        connection, STREAM_CONDITION, stream_parameters(stream_id, from_version, to_version)
    )
    if events and to_version is None:
        # The stream's head: an append right after this read can chain without another query.
        remember(connection, stream_id, events[-1].version, events[-1].hash)
    return events


async def read_stream_tails(
    connection: Connection, from_versions: Sequence[tuple[str, int]]
) -> dict[str, list[RecordedEvent]]:
    """Each named stream's events from its own ``from_version`` on, in version order, in one
    statement (a listing of many tables reads all their tails at once, not one query each)."""
    if not from_versions:
        return {}
    stream_ids, versions = zip(*from_versions, strict=True)
    cursor = connection.cursor(binary=True)
    await cursor.execute(
        f"SELECT {EVENT_COLUMNS} FROM unnest(%s::text[], %s::int[])"
        " AS wanted(wanted_stream, from_version)"
        " JOIN events ON stream_id = wanted_stream AND version >= from_version"
        " ORDER BY stream_id, version",
        [list(stream_ids), list(versions)],
    )
    events = recorded_events(await cursor.fetchall())
    tails: dict[str, list[RecordedEvent]] = {stream_id: [] for stream_id in stream_ids}
    for event in events:
        tails[event.stream_id].append(event)
    for stream_id, tail in tails.items():
        if tail:
            remember(connection, stream_id, tail[-1].version, tail[-1].hash)
    return tails


async def safe_position(connection: Connection) -> int:
    """The proven high-water mark: no event at or below it can still appear (see above)."""
    cursor = await connection.execute(query("events.safe_position"))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


ReadPlan = Generator[tuple[str, Sequence[Any]], list[tuple[Any, ...]], list[RecordedEvent]]
"""A read of the log as its statements: it yields (SQL, parameters), is sent the rows (from a
binary cursor), and returns the events. The asynchronous ``read_all`` here and the synchronous one
(``sapsam.store.offline_reads``) drive the same plan, so the proof is written once."""

_ISOLATION_CHECK = "SELECT current_setting('transaction_isolation') <> 'read committed'"


def read_all_plan(
    in_transaction: bool, after_position: int, limit: int, stream_id: str | None
) -> ReadPlan:
    """``read_all``'s statements and decisions, for either driver (see ``ReadPlan``)."""
    if stream_id is None:
        rows = yield from _page_plan(in_transaction, READ_ALL_QUERY, (), after_position, limit)
        return recorded_events(rows)
    if in_transaction:
        yield from _check_isolation()
    rows = yield query("events.safe_position"), ()
    high_water = int(rows[0][0]) if rows else 0
    if high_water <= after_position:
        return []
    rows = yield (
        f"SELECT {EVENT_COLUMNS} FROM events WHERE stream_id = %s AND position > %s"
        " AND position <= %s ORDER BY position LIMIT %s",
        (stream_id, after_position, high_water, limit),
    )
    return recorded_events(rows)


Rows = list[tuple[Any, ...]]


def _check_isolation() -> Generator[tuple[str, Sequence[Any]], Rows, None]:
    rows = yield _ISOLATION_CHECK, ()
    if rows and rows[0][0] is True:
        raise RuntimeError("read_all needs READ COMMITTED: each statement must see a new snapshot")


def _page_plan(
    in_transaction: bool,
    page_query: str,
    leading: Sequence[Any],
    after_position: int,
    limit: int,
) -> Generator[tuple[str, Sequence[Any]], Rows, Rows]:
    """The rows of a page of the global order (``page_query``: ``READ_ALL_QUERY`` or one like
    it, position first, parameters ``*leading, after, limit, high_water``), proven to skip
    nothing: as read if it has no hole, else read again at or below the proven mark."""
    if in_transaction:
        yield from _check_isolation()
    rows = yield page_query, (*leading, after_position, limit, NO_MARK)
    if without_hole(rows, after_position):
        return rows
    marks = yield query("events.safe_position"), ()
    high_water = int(marks[0][0]) if marks else 0
    if high_water <= after_position:
        return []
    rows = yield page_query, (*leading, after_position, limit, high_water)
    return rows


# ``READ_ALL_QUERY`` for readers that want only some event types: every position of the page
# still comes back (the proof that nothing is skipped needs them), but the others' columns are
# NULL, so they cost neither the transfer nor the decoding. The second column says which is which.
READ_TYPES_QUERY = (
    "SELECT position, wanted, CASE WHEN wanted THEN stream_id END, version, type,"
    " schema_version, CASE WHEN wanted THEN data::text END,"
    " CASE WHEN wanted THEN metadata::text END, CASE WHEN wanted THEN hash END"
    " FROM (SELECT position, type = ANY(%s::text[]) AS wanted, stream_id, version, type,"
    " schema_version, data, metadata, hash FROM events"
    " WHERE position > %s ORDER BY position LIMIT %s) page"
    " WHERE position <= %s ORDER BY position"
)


def read_types_plan(
    in_transaction: bool, after_position: int, limit: int, types: Sequence[str]
) -> Generator[tuple[str, Sequence[Any]], Rows, TypedPage]:
    """``read_all_of_types``' statements and decisions (see ``ReadPlan``)."""
    rows = yield from _page_plan(
        in_transaction, READ_TYPES_QUERY, (list(types),), after_position, limit
    )
    return TypedPage(
        recorded_events([(row[0], *row[2:]) for row in rows if row[1]]),
        int(rows[-1][0]) if rows else after_position,
        len(rows) < limit,
    )


async def read_all(
    connection: Connection,
    after_position: int = 0,
    limit: int = 1000,
    stream_id: str | None = None,
) -> list[RecordedEvent]:
    """Up to ``limit`` events with ``position > after_position`` in global order.

    Use the last returned position as the next checkpoint. With ``stream_id`` only that stream's
    events are returned (still by global position). Never skips an event that commits late:
    see the module docstring.
    """
    in_transaction = connection.info.transaction_status != TransactionStatus.IDLE
    plan = read_all_plan(in_transaction, after_position, limit, stream_id)
    try:
        statement = next(plan)
        while True:
            cursor = connection.cursor(binary=True)
            await cursor.execute(*statement)
            statement = plan.send(await cursor.fetchall())
    except StopIteration as done:
        return cast(list[RecordedEvent], done.value)


async def read_all_of_types(
    connection: Connection, after_position: int, limit: int, types: Sequence[str]
) -> TypedPage:
    """The events of ``types`` among the next ``limit`` events after ``after_position`` in
    global order, as ``read_all`` reads them (never skipping one that commits late), without
    decoding the others: a reader that wants one type in twenty (the results process, which
    wants ``DealScored``) reads one row's columns where it read twenty."""
    in_transaction = connection.info.transaction_status != TransactionStatus.IDLE
    plan = read_types_plan(in_transaction, after_position, limit, types)
    try:
        statement = next(plan)
        while True:
            cursor = connection.cursor(binary=True)
            await cursor.execute(*statement)
            statement = plan.send(await cursor.fetchall())
    except StopIteration as done:
        return cast(TypedPage, done.value)


async def iterate_all(
    connection: Connection, after_position: int = 0, batch_size: int = 5000
) -> AsyncIterator[RecordedEvent]:
    """Every event after ``after_position`` in global order, read in batches (for replays)."""
    checkpoint = after_position
    while True:
        batch = await read_all(connection, checkpoint, batch_size)
        if not batch:
            return
        for event in batch:
            yield event
        checkpoint = batch[-1].position


async def stream_version(connection: Connection, stream_id: str) -> int:
    """The stream's current version: 0 for a stream with no events."""
    cursor = await connection.execute(query("events.stream_version"), {"stream": stream_id})
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def last_position(connection: Connection) -> int:
    """The highest committed global position, 0 for an empty log."""
    cursor = await connection.execute(query("events.last_position"))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0

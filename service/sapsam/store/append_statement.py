"""The append's statement: its text, its parameters, and the read-model writes that join it.

An append is one statement whenever it can be (``sapsam.store.appends``): ``INSERT_BATCH`` inserts
the events chained from the expected version's hash and records the request id; the registered
projectors' changes and the caller's own writes (a deal's secret kept or forgotten) join it as
data-modifying CTEs (``with_companions``), reading ``inserted(position, version)``. What cannot be
said as statements runs after the insert in the append's transaction (``run_after_insert``).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from functools import lru_cache
from typing import Any, Protocol, cast

import psycopg
from psycopg.pq import TransactionStatus

from sapsam.log.records import JsonObject, NewEvent, RecordedEvent
from sapsam.store.projections import (
    NOT_INLINED,
    BatchedPart,
    InlineStatement,
    NotInlined,
    PendingEvent,
    Projector,
)
from sapsam.store.queries import query

Connection = psycopg.AsyncConnection[Any]
ProjectCallback = Callable[[Connection, Sequence[RecordedEvent]], Awaitable[None]]

# Insert the batch and record the request id, as one statement. Rows are inserted in batch
# order, so positions follow versions. The guard inserts nothing unless the event we chain from
# is the one at the expected version (or the stream is new): a stale version or hash hint yields
# no rows instead of a broken chain; a version already taken fails on the unique key instead.
# Each row also says whether some listener wants a wake-up for these events: one that wants
# their event types (migration 0006), or one other than ``handed_to`` that wants their stream
# (migration 0012; ``handed_to`` is given the events by the caller, sapsam.store.appends).
INSERT_BATCH = """
WITH guard AS (
    SELECT 1 WHERE %(expected)s::int = 0 OR EXISTS (
        SELECT 1 FROM events WHERE stream_id = %(stream)s::text
            AND version = %(expected)s::int AND hash = %(previous)s::bytea)
), inserted AS (
    INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)
    SELECT %(stream)s::text, (e->>'v')::int, e->>'t', (e->>'s')::int, e->'d',
        %(metadata)s::jsonb, decode(e->>'h', 'hex')
    FROM guard, jsonb_array_elements(%(batch)s::jsonb) WITH ORDINALITY AS batch(e, n)
    ORDER BY n
    RETURNING position, version
), processed AS (
    INSERT INTO processed_requests (request_id, stream_id, fingerprint, first_version,
        last_version, first_position, last_position, response, request_digest)
    SELECT %(request)s::text, %(stream)s::text, %(fingerprint)s::bytea, min(version),
        max(version), min(position), max(position), %(response)s::jsonb, %(digest)s::bytea
    FROM inserted
    HAVING count(*) > 0
    RETURNING last_position
)
SELECT inserted.position, inserted.version, (EXISTS (
    SELECT 1 FROM wakeup_listeners WHERE expires_at > now()
        AND (event_types IS NULL
            OR event_types && ARRAY(SELECT jsonb_array_elements_text(%(types)s::jsonb))))
    OR EXISTS (
    SELECT 1 FROM wakeup_streams JOIN wakeup_listeners USING (listener)
    WHERE wakeup_streams.stream_id = %(stream)s::text AND expires_at > now()
        AND listener IS DISTINCT FROM %(handed_to)s::text)) AS wanted
FROM inserted ORDER BY inserted.version
"""
_RESULT_OF_INSERT = "\nSELECT inserted.position, inserted.version, (EXISTS ("
if _RESULT_OF_INSERT not in INSERT_BATCH:  # pragma: no cover - a guard on the text above
    raise RuntimeError("INSERT_BATCH no longer ends with the result its companions go before")


def insert_parameters(
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    request_id: str,
    canonical_data: Sequence[bytes],
    canonical_metadata: bytes,
    type_json: dict[str, bytes],
    fingerprint: bytes,
    previous_hash: bytes,
    hashes: Sequence[bytes],
    response_json: str,
    request_digest: bytes | None,
    handed_to: str | None = None,
    wake_type_listeners: bool = True,
) -> dict[str, Any]:
    """``INSERT_BATCH``'s parameters for events already chained (``hashes``); ``handed_to``:
    the listener the caller gives the events to itself, which needs no wake-up for them;
    ``wake_type_listeners`` False: the events' types are not offered to the listeners that
    follow types (``wanted`` then asks only for the stream's watchers elsewhere and the listeners
    of every append)."""
    # The batch travels as one JSON document built from the canonical parts: the server parses it
    # once, and no per-event adaptation runs in Python.
    batch = b",".join(
        b'{"d":%b,"h":"%b","s":%d,"t":%b,"v":%d}'
        % (
            data,
            event_hash.hex().encode(),
            event.schema_version,
            type_json[event.type],
            expected_version + offset,
        )
        for offset, (event, data, event_hash) in enumerate(
            zip(events, canonical_data, hashes, strict=True), start=1
        )
    )
    return {
        "stream": stream_id,
        "expected": expected_version,
        "previous": previous_hash,
        "metadata": canonical_metadata.decode("utf-8"),
        "batch": (b"[" + batch + b"]").decode("utf-8"),
        "request": request_id,
        "fingerprint": fingerprint,
        "digest": request_digest,
        "response": response_json,
        "handed_to": handed_to,
        # As one JSON text (the names are JSON already): a text parameter costs psycopg a
        # quarter of what adapting a list to text[] does.
        "types": (
            (b"[" + b",".join(type_json.values()) + b"]").decode("utf-8")
            if wake_type_listeners
            else "[]"
        ),
    }


def inline_where_possible(
    connection: Connection,
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    metadata: JsonObject,
    projectors: Sequence[Projector],
    project: ProjectCallback | None,
) -> tuple[Sequence[Projector], list[InlineStatement] | None]:
    """The projectors to apply after the insert, and the statements to run inside it instead
    (None: the append takes the transaction path).

    Projectors that never change for this stream are left out. An append on an idle autocommit
    connection with no ``project`` callback, whose every remaining
    projector can say its change for the batch as statements, becomes a single statement: the
    read models change inside the insert (no BEGIN, no COMMIT, no statement after it). Anything
    else is applied after the insert in the append's transaction, as always.
    """
    # The status from libpq directly: ``connection.info`` makes an object and an enum per read.
    if (
        project is not None
        or not connection.autocommit
        or connection.pgconn.transaction_status != TransactionStatus.IDLE
    ):
        return [projector for projector in projectors if projector.handles(stream_id)], None
    if not projectors:
        return (), []  # nothing to inline (inline_projectors' answer, without its pending events)
    return inline_projectors(stream_id, expected_version, events, metadata, projectors)


def inline_projectors(
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    metadata: JsonObject,
    projectors: Sequence[Projector],
) -> tuple[Sequence[Projector], list[InlineStatement] | None]:
    """``inline_where_possible`` for an append that will be a single autocommit statement."""
    handling = [projector for projector in projectors if projector.handles(stream_id)]
    pending = [
        PendingEvent(stream_id, expected_version + offset, event.type, event.data, metadata)
        for offset, event in enumerate(events, start=1)
    ]
    companions: list[InlineStatement] = []
    for projector in handling:
        statements = _inline_batch(projector, pending)
        if isinstance(statements, NotInlined):
            return handling, None
        companions.extend(statements)
    return (), companions


class _InlinesBatches(Protocol):
    def inline_batch(
        self, events: Sequence[PendingEvent]
    ) -> Sequence[InlineStatement] | NotInlined: ...


def _inline_batch(
    projector: Projector, events: Sequence[PendingEvent]
) -> Sequence[InlineStatement] | NotInlined:
    """The projector's statements for the batch (``SqlProjector.inline_batch``); a projector
    with only ``inline`` can say one event's change."""
    # hasattr, not isinstance on a runtime_checkable Protocol: that costs ~46 us a call here.
    if hasattr(projector, "inline_batch"):
        return cast(_InlinesBatches, projector).inline_batch(events)
    if len(events) != 1:
        return NOT_INLINED
    statement = projector.inline(events[0])
    if isinstance(statement, NotInlined):
        return NOT_INLINED
    return [] if statement is None else [statement]


def secret_companions(
    stream_id: str, keep: Sequence[tuple[int, bytes]], forget: Sequence[int]
) -> list[InlineStatement]:
    """The ``companions`` that keep a stream's new secret seeds and forget those its events
    publish (``deal_secrets``), atomically with the append."""
    kept = [
        InlineStatement(
            query("appends.keep_secret_with_append"),
            {"stream": stream_id, "number": number, "seed": seed},
            BatchedPart("keep_secret", _kept_secrets_sql(), {"number": number, "seed": seed.hex()}),
        )
        for number, seed in keep
    ]
    forgotten = [
        InlineStatement(
            query("appends.forget_secret_with_append"),
            {"stream": stream_id, "number": number},
            BatchedPart("forget_secret", _forgotten_secrets_sql(), {"number": number}),
        )
        for number in forget
    ]
    return [*kept, *forgotten]


@lru_cache(maxsize=1)
def _kept_secrets_sql() -> str:
    return f"keep_secret_written AS ({query('appends.keep_secrets_with_batch')})"


@lru_cache(maxsize=1)
def _forgotten_secrets_sql() -> str:
    return f"forget_secret_written AS ({query('appends.forget_secrets_with_batch')})"


async def run_after_insert(
    connection: Connection, statements: Sequence[InlineStatement], rows: Sequence[Any]
) -> None:
    """Companion statements on the transaction path: ``inserted`` is given as the rows."""
    for statement in statements:
        await connection.execute(
            "WITH inserted(position, version) AS ("
            " SELECT * FROM unnest(%(inserted_positions)s::bigint[], %(inserted_versions)s::int[]))"
            f" {statement.sql}",
            {
                **statement.parameters,
                "inserted_positions": [int(row[0]) for row in rows],
                "inserted_versions": [int(row[1]) for row in rows],
            },
        )


def with_companions(companions: Sequence[InlineStatement], parameters: dict[str, Any]) -> str:
    """``INSERT_BATCH`` with each companion as a data-modifying CTE. Each companion's parameters
    join ``parameters`` under its own prefix (``companion<i>_``), so companions may use the same
    names as each other and as the append."""
    for index, companion in enumerate(companions):
        prefix = f"companion{index}_"
        parameters.update({prefix + name: value for name, value in companion.parameters.items()})
    return _insert_with(tuple(companion.sql for companion in companions))


@lru_cache(maxsize=256)
def _insert_with(companion_sqls: tuple[str, ...]) -> str:
    """The statement text for these companions, written once per combination."""
    ctes = "".join(
        f", companion_{index} AS ({_prefixed(sql, f'companion{index}_')})"
        for index, sql in enumerate(companion_sqls)
    )
    return INSERT_BATCH.replace(_RESULT_OF_INSERT, ctes + _RESULT_OF_INSERT)


_PARAMETER = re.compile(r"%\((\w+)\)s")


def _prefixed(sql: str, prefix: str) -> str:
    """``sql`` with every named parameter ``%(name)s`` renamed ``%(<prefix>name)s``."""
    return _PARAMETER.sub(lambda match: f"%({prefix}{match.group(1)})s", sql)

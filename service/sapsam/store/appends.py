"""Appending to the event log: optimistic concurrency, idempotent request ids, atomic batches.

An append:

1. computes everything it can before touching the database: metadata, the canonical bytes of
   each event (refusing floats and the like), the request's fingerprint;
2. in one round trip, looks up the request id in ``processed_requests`` and the stream's last
   version and hash. A processed request id returns the original result and appends nothing (or
   raises ``RequestIdReused`` for another stream or another request: see ``same_request``); a
   version other than the expected one raises ``ConcurrencyConflict`` carrying the current
   version;
3. chains each event's hash to the previous one of its stream. The previous hash read in step 2
   is still the right one if the insert succeeds: events never change, and the insert only
   succeeds if nobody took the next version in between;
4. in one statement, inserts the batch and records the request id with the caller's
   ``response``;
5. applies the registered projectors and the caller's ``project`` callback in the same
   transaction, when there are any;
6. if some listener wants a wake-up for these events (``wakeup_listeners`` and
   ``wakeup_streams``, read by the insert's own statement; a listener the caller hands the events
   to itself, ``handed_to``, does not count), has ``NOTIFY sapsam_events`` (stream id and last
   position only) sent after its commit by the event loop's notifier task
   (``subscriptions.send_wakeup``), or sends it with the caller's commit when it runs inside the
   caller's transaction.

Nothing is locked while deciding: the database's unique keys settle every race. A writer that
took the expected version first makes our insert fail on (stream_id, version), reported as
``ConcurrencyConflict`` (never an overwrite); the same request id sent twice at once fails on
``processed_requests``' key, and the loser answers with the winner's result. Appends to different
streams commit concurrently and share disk flushes; how global readers still never skip an event
is explained in ``sapsam.store.reads``.

This module is the append's sequence; the statement's text, its parameters and the read-model
writes that join it are in ``sapsam.store.append_statement``, the head read and the answers to
retries and lost races in ``sapsam.store.append_retries``, the checked arguments, canonical bytes,
chain hashes and recorded events in ``sapsam.store.append_parts``, and the hand-over to the commit
group (with the append a session makes without a pooled connection, ``append_by_group``) in
``sapsam.store.group_appends``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import errors
from psycopg.pq import TransactionStatus

from sapsam.log.chain import GENESIS_HASH
from sapsam.log.records import AppendResult, JsonObject, JsonValue, NewEvent
from sapsam.store import write_stamps
from sapsam.store.append_count import APPENDED
from sapsam.store.append_parts import (
    append_result,
    chained_hashes,
    prepare_append,
    recorded_events,
)
from sapsam.store.append_retries import read_head, settle_unique_violation
from sapsam.store.append_statement import (
    INSERT_BATCH,
    ProjectCallback,
    inline_where_possible,
    insert_parameters,
    run_after_insert,
    with_companions,
)
from sapsam.store.batch_statement import batch_member
from sapsam.store.commit_group import CommitGroup
from sapsam.store.group_appends import run_single_statement
from sapsam.store.projections import InlineStatement, Projector, apply_projectors
from sapsam.store.stream_heads import forget, recall, remember
from sapsam.store.subscriptions import NOTIFY_CHANNEL, send_wakeup, wakeup_payload

Connection = psycopg.AsyncConnection[Any]


async def append(
    connection: Connection,
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    request_id: str,
    actor: str | None = None,
    *,
    metadata: JsonObject | None = None,
    response: JsonValue = None,
    projectors: Sequence[Projector] = (),
    project: ProjectCallback | None = None,
    request_digest: bytes | None = None,
    companions: Sequence[InlineStatement] = (),
    commit_group: CommitGroup | None = None,
    handed_to: str | None = None,
    wake_type_listeners: bool = True,
) -> AppendResult:
    """Append ``events`` to ``stream_id`` if it is at ``expected_version``; all or nothing.

    See ``_append`` for the arguments. Whatever the outcome, the stream's write stamp is bumped
    before this returns (``sapsam.store.write_stamps``): after the commit of an autocommit append,
    and, inside the caller's transaction, now and again when ``sapsam.store.session`` sees that
    transaction end, so a copy in memory is never taken for current once the write can be
    acknowledged.
    """
    try:
        result = await _append(
            connection,
            stream_id,
            expected_version,
            events,
            request_id,
            actor,
            metadata=metadata,
            response=response,
            projectors=projectors,
            project=project,
            request_digest=request_digest,
            companions=companions,
            commit_group=commit_group,
            handed_to=handed_to,
            wake_type_listeners=wake_type_listeners,
        )
        if not result.replayed:
            APPENDED.add(len(result.events))
        return result
    finally:
        write_stamps.stamps().bump(stream_id)
        if connection.pgconn.transaction_status != TransactionStatus.IDLE:
            write_stamps.bump_after_transaction(connection, stream_id)


async def _append(
    connection: Connection,
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    request_id: str,
    actor: str | None = None,
    *,
    metadata: JsonObject | None = None,
    response: JsonValue = None,
    projectors: Sequence[Projector] = (),
    project: ProjectCallback | None = None,
    request_digest: bytes | None = None,
    companions: Sequence[InlineStatement] = (),
    commit_group: CommitGroup | None = None,
    handed_to: str | None = None,
    wake_type_listeners: bool = True,
) -> AppendResult:
    """Append ``events`` to ``stream_id`` if it is at ``expected_version``; all or nothing.

    ``expected_version`` is the stream's version the caller decided on (0 for a new stream).
    ``request_id`` makes the append idempotent: a retry returns the original ``AppendResult``
    (``replayed=True``) and appends nothing. ``response`` is stored with the request id and
    returned on retries. ``projectors`` and ``project`` run inside the append's transaction with
    the recorded events, so read models, deal secrets and the like change atomically with the log.
    ``request_digest`` (32 bytes: the API's digest of the request as the client sent it) is kept
    with the request id; a retry is then the same request when its digest is the same, whatever
    events deciding it again would give (see ``same_request``). ``companions`` are the caller's
    own writes that go with the events (a deal's secret kept or forgotten), said as statements
    reading ``inserted(position, version)``: they run inside the insert's statement whenever the
    read models do, else after it in the append's transaction.

    ``commit_group``: where the append is one autocommit statement, it is handed to the group
    and committed with the other appends in flight (``sapsam.store.commit_group``); the result
    is the same, returned once that commit succeeded.

    ``handed_to``: the wake-up listener (``subscriptions.listener_id``) the caller gives the
    committed events to itself, as the server's table runner gives its appends to its process's
    event feed: that listener's wish for the stream's wake-ups is met without a NOTIFY.
    ``wake_type_listeners`` False: no listener is woken for the events' types (the results
    process follows ``DealScored`` for tournament tables; a caller that knows its table is in
    no tournament spares it the wake-up), only for the stream or for every append.

    Commits on a connection with no transaction open; inside the caller's transaction it becomes a
    savepoint and the caller commits. Raises ``ConcurrencyConflict`` (carrying the current
    version), ``RequestIdReused``, or ``ValueError`` for an empty batch, malformed metadata, or
    data, metadata or response without a canonical JSON form (a float, say).
    """
    prepared = prepare_append(
        stream_id, expected_version, events, request_id, actor, metadata, response, request_digest
    )
    canonical = prepared.canonical
    canonical_data = prepared.canonical_data
    canonical_metadata = prepared.canonical_metadata
    type_json = prepared.type_json
    fingerprint = prepared.fingerprint
    response_json = prepared.response_json
    projectors, inlined = inline_where_possible(
        connection,
        stream_id,
        expected_version,
        events,
        prepared.event_metadata,
        projectors,
        project,
    )
    after_insert: Sequence[InlineStatement] = ()
    if inlined is None:
        companions, after_insert = (), companions
    else:
        companions = [*inlined, *companions]

    # The hash to chain from: none needed for a new stream; else the remembered head (checked
    # by the insert itself), else one query, which also settles retries and stale versions.
    previous_hash = (
        GENESIS_HASH if expected_version == 0 else recall(connection, stream_id, expected_version)
    )
    for _attempt in range(2):
        if previous_hash is None:
            head = await read_head(
                connection, request_id, stream_id, expected_version, fingerprint, request_digest
            )
            if isinstance(head, AppendResult):
                return head
            previous_hash = head
        outcome = await _insert(
            connection,
            stream_id,
            expected_version,
            events,
            request_id,
            canonical,
            canonical_data,
            canonical_metadata,
            type_json,
            fingerprint,
            previous_hash,
            response,
            response_json,
            projectors,
            project,
            companions,
            request_digest,
            after_insert,
            commit_group,
            handed_to,
            wake_type_listeners,
        )
        if outcome is not None:
            remember(connection, stream_id, outcome.last_version, outcome.events[-1].hash)
            return outcome
        # The insert found no event at the expected version with that hash: the hint was stale.
        forget(connection, stream_id)
        previous_hash = None
    raise RuntimeError(f"stream {stream_id!r} changed under two attempts to append")


async def _insert(
    connection: Connection,
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    request_id: str,
    canonical: Sequence[bytes],
    canonical_data: Sequence[bytes],
    canonical_metadata: bytes,
    type_json: dict[str, bytes],
    fingerprint: bytes,
    previous_hash: bytes,
    response: JsonValue,
    response_json: str,
    projectors: Sequence[Projector],
    project: ProjectCallback | None,
    companions: Sequence[InlineStatement] = (),
    request_digest: bytes | None = None,
    after_insert: Sequence[InlineStatement] = (),
    commit_group: CommitGroup | None = None,
    handed_to: str | None = None,
    wake_type_listeners: bool = True,
) -> AppendResult | None:
    """Insert the batch chained from ``previous_hash``; None if that hash is not the head's.

    ``companions`` run inside the insert's own statement (only on the single-statement path),
    ``after_insert`` after it in its transaction."""
    hashes = chained_hashes(previous_hash, canonical)
    parameters = insert_parameters(
        stream_id,
        expected_version,
        events,
        request_id,
        canonical_data,
        canonical_metadata,
        type_json,
        fingerprint,
        previous_hash,
        hashes,
        response_json,
        request_digest,
        handed_to,
        wake_type_listeners,
    )
    owns_transaction = connection.pgconn.transaction_status == TransactionStatus.IDLE
    statement = INSERT_BATCH
    if companions:
        statement = with_companions(companions, parameters)
    try:
        if (
            owns_transaction
            and connection.autocommit
            and not projectors
            and project is None
            and not after_insert
        ):
            # A single statement on an idle autocommit connection is its own transaction, or
            # joins the commit group's next batch (sapsam.store.commit_group).
            member = None
            if commit_group is not None and all(c.batched is not None for c in companions):
                parts = [c.batched for c in companions if c.batched is not None]
                member = batch_member(parameters, parts)
            rows = await run_single_statement(
                connection, statement, parameters, stream_id, commit_group, member
            )
            if not rows:
                return None
            recorded = recorded_events(
                rows, stream_id, events, canonical_data, canonical_metadata, hashes
            )
        else:
            if companions:  # pragma: no cover - append only inlines on the path above
                raise RuntimeError("companion statements need the single-statement path")
            async with connection.transaction():
                rows = await (await connection.execute(INSERT_BATCH, parameters)).fetchall()
                if not rows:
                    raise _StaleHeadError
                recorded = recorded_events(
                    rows, stream_id, events, canonical_data, canonical_metadata, hashes
                )
                await apply_projectors(connection, projectors, recorded)
                await run_after_insert(connection, after_insert, rows)
                if project is not None:
                    await project(connection, recorded)
                if not owns_transaction and rows[0][2]:
                    # Inside the caller's transaction: the wake-up goes out with its commit.
                    await _notify(connection, stream_id, recorded[-1].position)
        if owns_transaction and rows[0][2]:
            # After our commit, by the event loop's notifier task on its own connection, not in
            # our transaction: PostgreSQL serialises the commits of all transactions that NOTIFY
            # (a global lock held through the commit's disk flush), which would stop concurrent
            # appends from sharing flushes. Should the wake-up be lost, followers still find the
            # events when they next poll. rows[0][2]: some listener wants this wake-up.
            send_wakeup(connection, stream_id, recorded[-1].position)
    except _StaleHeadError:
        return None
    except errors.UniqueViolation as error:
        # Lost a race: answered as a retry if it was against this very request, else a conflict.
        return await settle_unique_violation(
            connection, error, request_id, stream_id, expected_version, fingerprint, request_digest
        )
    return append_result(stream_id, request_id, response, recorded)


class _StaleHeadError(Exception):
    """The event at the expected version is missing or has another hash: re-read the head."""


async def _notify(connection: Connection, stream_id: str, position: int) -> None:
    # A wake-up signal only: followers read the log themselves, so the payload carries no data.
    await connection.execute(
        "SELECT pg_notify(%s, %s)", [NOTIFY_CHANNEL, wakeup_payload(stream_id, position)]
    )

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
retries and lost races in ``sapsam.store.append_retries``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import errors
from psycopg.pq import TransactionStatus

from sapsam.log.chain import (
    GENESIS_HASH,
    assemble_from_json_parts,
    canonical_json,
    canonical_json_each,
    chain_hash,
    json_string,
)
from sapsam.log.records import (
    AppendResult,
    JsonObject,
    JsonValue,
    NewEvent,
    RecordedEvent,
    recorded_event,
)
from sapsam.store import write_stamps
from sapsam.store.append_count import APPENDED
from sapsam.store.append_retries import read_head, settle_unique_violation
from sapsam.store.append_statement import INSERT_BATCH as INSERT_BATCH  # re-exported
from sapsam.store.append_statement import ProjectCallback as ProjectCallback  # re-exported
from sapsam.store.append_statement import (
    inline_projectors,
    inline_where_possible,
    insert_parameters,
    run_after_insert,
    with_companions,
)
from sapsam.store.append_statement import (
    secret_companions as secret_companions,  # re-exported
)
from sapsam.store.batch_statement import BatchMember, batch_member
from sapsam.store.commit_group import CommitGroup, RunAlone
from sapsam.store.processed_requests import ProcessedRequest as ProcessedRequest  # re-exported
from sapsam.store.processed_requests import find_processed_request as find_processed_request
from sapsam.store.processed_requests import fingerprint_of_parts
from sapsam.store.processed_requests import (
    prune_processed_requests as prune_processed_requests,  # re-exported
)
from sapsam.store.processed_requests import request_fingerprint as request_fingerprint
from sapsam.store.projections import InlineStatement, Projector, apply_projectors
from sapsam.store.reads import decode_json
from sapsam.store.stream_heads import (
    DatabaseKey,
    database_key,
    forget,
    recall,
    recall_in,
    remember,
    remember_in,
)
from sapsam.store.subscriptions import NOTIFY_CHANNEL as NOTIFY_CHANNEL  # re-exported
from sapsam.store.subscriptions import (
    WakeupTarget,
    send_wakeup,
    send_wakeup_to,
    wakeup_payload,
    wakeup_target,
)

Connection = psycopg.AsyncConnection[Any]

RESERVED_METADATA = frozenset({"request_id", "actor", "recorded_at"})

# Event type names as JSON strings: a handful of names, encoded once each instead of per event.
_type_json = lru_cache(maxsize=1024)(json_string)


def recorded_at_now() -> str:
    """The current UTC time as the metadata's ``recorded_at`` text (microseconds, ``Z``)."""
    microseconds = time.time_ns() // 1000
    seconds, fraction = divmod(microseconds, 1_000_000)
    # The text up to the second changes once a second: made then, not on every append
    # (datetime.now(UTC).isoformat() cost ~2.4 us a call; this ~0.5).
    global _second_text
    if _second_text[0] != seconds:
        _second_text = (seconds, datetime.fromtimestamp(seconds, UTC).isoformat()[:19])
    return f"{_second_text[1]}.{fraction:06d}Z"


_second_text: tuple[int, str] = (-1, "")


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
        )
        if not result.replayed:
            APPENDED.add(len(result.events))
        return result
    finally:
        write_stamps.stamps().bump(stream_id)
        if connection.info.transaction_status != TransactionStatus.IDLE:
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

    Commits on a connection with no transaction open; inside the caller's transaction it becomes a
    savepoint and the caller commits. Raises ``ConcurrencyConflict`` (carrying the current
    version), ``RequestIdReused``, or ``ValueError`` for an empty batch, malformed metadata, or
    data, metadata or response without a canonical JSON form (a float, say).
    """
    prepared = _prepare(
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
) -> AppendResult | None:
    """Insert the batch chained from ``previous_hash``; None if that hash is not the head's.

    ``companions`` run inside the insert's own statement (only on the single-statement path),
    ``after_insert`` after it in its transaction."""
    hashes = _chained(previous_hash, canonical)
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
    )
    owns_transaction = connection.info.transaction_status == TransactionStatus.IDLE
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
            rows = await _single_statement(
                connection, statement, parameters, stream_id, commit_group, member
            )
            if not rows:
                return None
            recorded = _recorded(
                rows, stream_id, events, canonical_data, canonical_metadata, hashes
            )
        else:
            if companions:  # pragma: no cover - append only inlines on the path above
                raise RuntimeError("companion statements need the single-statement path")
            async with connection.transaction():
                rows = await (await connection.execute(INSERT_BATCH, parameters)).fetchall()
                if not rows:
                    raise _StaleHeadError
                recorded = _recorded(
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
    return _appended(stream_id, request_id, response, recorded)


@dataclass(frozen=True)
class _Prepared:
    """What an append computes before touching the database."""

    event_metadata: dict[str, JsonValue]
    canonical_data: list[bytes]
    canonical_metadata: bytes
    response_json: str
    type_json: dict[str, bytes]
    canonical: list[bytes]
    fingerprint: bytes


def _prepare(
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    request_id: str,
    actor: str | None,
    metadata: JsonObject | None,
    response: JsonValue,
    request_digest: bytes | None,
) -> _Prepared:
    """Check the arguments and compute the metadata, the canonical bytes and the fingerprint."""
    if not events:
        raise ValueError("an append needs at least one event")
    if expected_version < 0:
        raise ValueError("expected_version must be 0 (new stream) or more")
    if request_digest is not None and len(request_digest) != 32:
        raise ValueError("a request digest is 32 bytes (SHA-256)")
    extra = dict(metadata or {})
    clash = RESERVED_METADATA & extra.keys()
    if clash:
        raise ValueError(f"metadata keys {sorted(clash)} are set by the store")
    event_metadata: dict[str, JsonValue] = {
        **extra,
        "request_id": request_id,
        "recorded_at": recorded_at_now(),
    }
    if actor is not None:
        event_metadata["actor"] = actor
    canonical_data = canonical_json_each([event.data for event in events])
    canonical_metadata = canonical_json(event_metadata)
    # Stored as jsonb like the metadata, and refused (before anything is written) for what has no
    # canonical JSON form, a float say, as event data is.
    response_json = canonical_json(response).decode("utf-8")
    stream_json = json_string(stream_id)
    type_json = {event.type: _type_json(event.type) for event in events}
    canonical = [
        assemble_from_json_parts(
            stream_json,
            expected_version + offset,
            type_json[event.type],
            event.schema_version,
            data,
            canonical_metadata,
        )
        for offset, (event, data) in enumerate(zip(events, canonical_data, strict=True), start=1)
    ]
    fingerprint = fingerprint_of_parts(stream_id, events, canonical_data)
    return _Prepared(
        event_metadata,
        canonical_data,
        canonical_metadata,
        response_json,
        type_json,
        canonical,
        fingerprint,
    )


@dataclass(frozen=True)
class Database:
    """The database a store's connections go to, as the stream heads and the wake-up notifiers
    know it: taken once from one of its connections (``Database.of``)."""

    heads: DatabaseKey
    wakeups: WakeupTarget

    @classmethod
    def of(cls, connection: Connection) -> Database:
        return cls(database_key(connection), wakeup_target(connection))


async def append_by_group(
    database: Database,
    commit_group: CommitGroup,
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    request_id: str,
    actor: str | None = None,
    *,
    response: JsonValue = None,
    projectors: Sequence[Projector] = (),
    request_digest: bytes | None = None,
    companions: Sequence[InlineStatement] = (),
    handed_to: str | None = None,
) -> AppendResult | None:
    """The append of ``append`` (same arguments, ``metadata`` and ``project`` left out),
    committed by ``commit_group`` without a connection of the caller's; None when it needs one.

    Why: a write on the ordinary path takes a pooled connection only to hand its statement to
    the commit group (psycopg_pool's hand-over both ways, its liveness check: ~13 % of a write's
    Python, bench/task_cpu_probe/write_path.py). Here the group, which owns its connection, is
    given the statement directly. None (nothing written, the stream's write stamp untouched)
    whenever this path cannot answer alone, and the caller then runs ``append`` on a connection
    of its own, which answers it as it always did: the stream's head is not remembered (a read
    is needed), a projector cannot be said as statements, the group declined the statement or
    did not commit it (``RunAlone``), or the member failed its guard (a retry, a stale head, a
    lost race: the head read tells which). Raises ``ValueError`` as ``append`` does.
    """
    prepared = _prepare(
        stream_id, expected_version, events, request_id, actor, None, response, request_digest
    )
    previous_hash = (
        GENESIS_HASH
        if expected_version == 0
        else recall_in(database.heads, stream_id, expected_version)
    )
    if previous_hash is None:
        return None
    _, inlined = inline_projectors(
        stream_id, expected_version, events, prepared.event_metadata, projectors
    )
    if inlined is None:
        return None
    companions = [*inlined, *companions]
    hashes = _chained(previous_hash, prepared.canonical)
    parameters = insert_parameters(
        stream_id,
        expected_version,
        events,
        request_id,
        prepared.canonical_data,
        prepared.canonical_metadata,
        prepared.type_json,
        prepared.fingerprint,
        previous_hash,
        hashes,
        prepared.response_json,
        request_digest,
        handed_to,
    )
    statement = with_companions(companions, parameters) if companions else INSERT_BATCH
    member = None
    if all(c.batched is not None for c in companions):
        member = batch_member(parameters, [c.batched for c in companions if c.batched is not None])
    try:
        rows = await commit_group.execute(statement, parameters, stream_id, member)
    except RunAlone:
        return None
    except BaseException:
        # Cancelled while the batch may commit it: as ``append`` does, whatever the outcome.
        write_stamps.stamps().bump(stream_id)
        raise
    if not rows:
        return None
    write_stamps.stamps().bump(stream_id)
    APPENDED.add(len(events))
    recorded = _recorded(
        rows, stream_id, events, prepared.canonical_data, prepared.canonical_metadata, hashes
    )
    remember_in(database.heads, stream_id, recorded[-1].version, recorded[-1].hash)
    if rows[0][2]:
        send_wakeup_to(database.wakeups, stream_id, recorded[-1].position)
    return _appended(stream_id, request_id, response, recorded)


def _chained(previous_hash: bytes, canonical: Sequence[bytes]) -> list[bytes]:
    """Each event's hash, chained from ``previous_hash``."""
    hashes: list[bytes] = []
    chained = previous_hash
    for event_bytes in canonical:
        chained = chain_hash(chained, event_bytes)
        hashes.append(chained)
    return hashes


class _StaleHeadError(Exception):
    """The event at the expected version is missing or has another hash: re-read the head."""


async def _single_statement(
    connection: Connection,
    statement: str,
    parameters: dict[str, Any],
    stream_id: str,
    commit_group: CommitGroup | None,
    member: BatchMember | None,
) -> list[tuple[Any, ...]]:
    """The rows of the append's one statement, committed: by the commit group when there is one
    and it takes it (``member``: the same append for its batch statement), else on the caller's
    own connection."""
    if commit_group is not None:
        try:
            return await commit_group.execute(statement, parameters, stream_id, member)
        except RunAlone:
            pass
    return await (await connection.execute(statement, parameters)).fetchall()


async def _notify(connection: Connection, stream_id: str, position: int) -> None:
    # A wake-up signal only: followers read the log themselves, so the payload carries no data.
    await connection.execute(
        "SELECT pg_notify(%s, %s)", [NOTIFY_CHANNEL, wakeup_payload(stream_id, position)]
    )


def _appended(
    stream_id: str, request_id: str, response: JsonValue, recorded: Sequence[RecordedEvent]
) -> AppendResult:
    """The answer to an append that wrote ``recorded`` (not a replayed request)."""
    return AppendResult(
        stream_id=stream_id,
        request_id=request_id,
        first_version=recorded[0].version,
        last_version=recorded[-1].version,
        first_position=recorded[0].position,
        last_position=recorded[-1].position,
        response=response,
        replayed=False,
        events=tuple(recorded),
    )


def _recorded(
    rows: Sequence[tuple[Any, ...]],
    stream_id: str,
    events: Sequence[NewEvent],
    canonical_data: Sequence[bytes],
    canonical_metadata: bytes,
    hashes: Sequence[bytes],
) -> list[RecordedEvent]:
    """The appended events exactly as a read will return them.

    Data and metadata are decoded from their canonical bytes rather than passed through, so
    tuples come back as lists and int subclasses as ints, as they do from the database.
    """
    if len(rows) != len(events):
        raise RuntimeError(f"inserted {len(rows)} rows for {len(events)} events")
    metadata = decode_json(canonical_metadata)
    # One decode for the whole batch: the canonical parts joined form a JSON list.
    decoded_data = decode_json(b"[" + b",".join(canonical_data) + b"]")
    return [
        recorded_event(
            int(position),
            stream_id,
            int(version),
            event.type,
            event.schema_version,
            data,
            metadata,
            event_hash,
        )
        for (position, version, _wanted), event, data, event_hash in zip(
            rows, events, decoded_data, hashes, strict=True
        )
    ]

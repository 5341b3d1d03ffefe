"""Appending to the event log: optimistic concurrency, idempotent request ids, atomic batches.

One append is one transaction that:

1. takes the append lock (a transaction-scoped advisory lock). Appends are serialised so that
   global positions are handed out in commit order: a reader that has seen position N can never
   later find a new event below N (see ``sapsam.store.reads``). The ``events_serialise_inserts``
   trigger takes the same lock for any other writer. The price is that appends do not share a
   disk flush (no group commit); bench/store.py measures it against a plain INSERT loop;
2. looks the request id up in ``processed_requests``: a retry gets the original result back and
   appends nothing; the same id with another stream or other events is ``RequestIdReused``;
3. checks the stream's current version against the expected one (``ConcurrencyConflict``);
4. inserts the batch, each event hash-chained to the previous one of its stream;
5. records the request id with the caller's ``response``;
6. applies the registered projectors and the caller's ``project`` callback (same transaction);
7. sends ``NOTIFY sapsam_events`` with the stream id and last position, delivered on commit.

The unique (stream_id, version) constraint backs step 3: should two writers ever pass the check
together, the loser's insert fails and is reported as ``ConcurrencyConflict``, never an overwrite.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import errors
from psycopg.types.json import Jsonb

from sapsam.store.chain import GENESIS_HASH, canonical_event_bytes, canonical_json, chain_hash
from sapsam.store.projections import APPEND_LOCK_KEY, Projector, apply_projectors
from sapsam.store.reads import event_from_row, stream_version
from sapsam.store.records import (
    AppendResult,
    ConcurrencyConflict,
    JsonObject,
    JsonValue,
    NewEvent,
    RecordedEvent,
    RequestIdReused,
)

Connection = psycopg.Connection[Any]
ProjectCallback = Callable[[Connection, Sequence[RecordedEvent]], None]

NOTIFY_CHANNEL = "sapsam_events"
RESERVED_METADATA = frozenset({"request_id", "actor", "recorded_at"})


def recorded_at_now() -> str:
    """The current UTC time as the metadata's ``recorded_at`` text (microseconds, ``Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def request_fingerprint(stream_id: str, events: Sequence[NewEvent]) -> bytes:
    """What makes two appends "the same request": the stream and each event's type and data.

    The expected version is left out on purpose: a client retrying after a timeout may have
    reloaded the stream, and its retry is still the same request.
    """
    return hashlib.sha256(
        canonical_json(
            {
                "stream": stream_id,
                "events": [
                    {"type": e.type, "schema_version": e.schema_version, "data": e.data}
                    for e in events
                ],
            }
        )
    ).digest()


def append(
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
) -> AppendResult:
    """Append ``events`` to ``stream_id`` if it is at ``expected_version``; all or nothing.

    ``expected_version`` is the stream's version the caller decided on (0 for a new stream).
    ``request_id`` makes the append idempotent: a retry returns the original ``AppendResult``
    (``replayed=True``) and appends nothing. ``response`` is stored with the request id and
    returned on retries. ``projectors`` and ``project`` run inside the append's transaction with
    the recorded events, so read models, deal secrets and the like change atomically with the log.

    Commits on a connection with no transaction open; inside the caller's transaction it becomes a
    savepoint and the caller commits. Raises ``ConcurrencyConflict`` (carrying the current
    version), ``RequestIdReused``, or ``ValueError`` for an empty batch or malformed metadata.
    """
    if not events:
        raise ValueError("an append needs at least one event")
    if expected_version < 0:
        raise ValueError("expected_version must be 0 (new stream) or more")
    extra = dict(metadata or {})
    clash = RESERVED_METADATA & extra.keys()
    if clash:
        raise ValueError(f"metadata keys {sorted(clash)} are set by the store")
    try:
        with connection.transaction():
            return _append_in_transaction(
                connection,
                stream_id,
                expected_version,
                events,
                request_id,
                actor,
                extra,
                response,
                projectors,
                project,
            )
    except errors.UniqueViolation as error:
        if error.diag.constraint_name == "events_stream_version_key":
            current = stream_version(connection, stream_id)
            raise ConcurrencyConflict(stream_id, expected_version, current) from error
        raise


def _append_in_transaction(
    connection: Connection,
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    request_id: str,
    actor: str | None,
    extra_metadata: Mapping[str, JsonValue],
    response: JsonValue,
    projectors: Sequence[Projector],
    project: ProjectCallback | None,
) -> AppendResult:
    # Taken before anything is read, so the version check and the idempotency check below see
    # every append that committed before ours, and positions follow commit order.
    connection.execute("SELECT pg_advisory_xact_lock(%s)", [APPEND_LOCK_KEY])
    fingerprint = request_fingerprint(stream_id, events)
    earlier = find_processed_request(connection, request_id)
    if earlier is not None:
        original_stream, original_fingerprint, result = earlier
        if original_stream != stream_id:
            raise RequestIdReused(request_id, f"for stream {original_stream!r}")
        if original_fingerprint != fingerprint:
            raise RequestIdReused(request_id, "with different events")
        return result

    last = connection.execute(
        "SELECT version, hash FROM events WHERE stream_id = %s ORDER BY version DESC LIMIT 1",
        [stream_id],
    ).fetchone()
    current_version, previous_hash = (int(last[0]), bytes(last[1])) if last else (0, GENESIS_HASH)
    if current_version != expected_version:
        raise ConcurrencyConflict(stream_id, expected_version, current_version)

    event_metadata: dict[str, JsonValue] = {
        **extra_metadata,
        "request_id": request_id,
        "recorded_at": recorded_at_now(),
    }
    if actor is not None:
        event_metadata["actor"] = actor
    versions: list[int] = []
    hashes: list[bytes] = []
    for offset, event in enumerate(events, start=1):
        version = expected_version + offset
        previous_hash = chain_hash(
            previous_hash,
            canonical_event_bytes(
                stream_id, version, event.type, event.schema_version, event.data, event_metadata
            ),
        )
        versions.append(version)
        hashes.append(previous_hash)
    metadata_text = json.dumps(event_metadata)
    # One statement for the whole batch (unnest keeps array order, so positions follow versions);
    # its text never changes, so psycopg prepares it once per connection.
    rows = connection.execute(
        """
        INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)
        SELECT %s::text, v, t, s, d, %s::jsonb, h
        FROM unnest(%s::int[], %s::text[], %s::int[], %s::jsonb[], %s::bytea[]) AS b(v, t, s, d, h)
        RETURNING position, stream_id, version, type, schema_version, data, metadata, hash
        """,
        [
            stream_id,
            metadata_text,
            versions,
            [event.type for event in events],
            [event.schema_version for event in events],
            [Jsonb(event.data) for event in events],
            hashes,
        ],
    ).fetchall()
    recorded = sorted((event_from_row(row) for row in rows), key=lambda e: e.version)
    result = AppendResult(
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
    connection.execute(
        """
        INSERT INTO processed_requests (request_id, stream_id, fingerprint, first_version,
            last_version, first_position, last_position, response)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
        """,
        [
            request_id,
            stream_id,
            fingerprint,
            result.first_version,
            result.last_version,
            result.first_position,
            result.last_position,
            Jsonb(response),
        ],
    )
    apply_projectors(connection, projectors, recorded)
    if project is not None:
        project(connection, recorded)
    # A wake-up signal only: followers read the log themselves, so the payload carries no data.
    connection.execute(
        "SELECT pg_notify(%s, %s)",
        [NOTIFY_CHANNEL, json.dumps({"stream": stream_id, "position": result.last_position})],
    )
    return result


def find_processed_request(
    connection: Connection, request_id: str
) -> tuple[str, bytes, AppendResult] | None:
    """The stream, fingerprint and original result of a processed request id, if any.

    An API may call this before deciding, to answer a retry without re-running the command.
    """
    row = connection.execute(
        """
        SELECT stream_id, fingerprint, first_version, last_version, first_position,
            last_position, response
        FROM processed_requests WHERE request_id = %s
        """,
        [request_id],
    ).fetchone()
    if row is None:
        return None
    stream_id, fingerprint, first_version, last_version, first_position, last_position, reply = row
    events = connection.execute(
        "SELECT position, stream_id, version, type, schema_version, data, metadata, hash"
        " FROM events WHERE stream_id = %s AND version BETWEEN %s AND %s ORDER BY version",
        [stream_id, first_version, last_version],
    ).fetchall()
    result = AppendResult(
        stream_id=str(stream_id),
        request_id=request_id,
        first_version=int(first_version),
        last_version=int(last_version),
        first_position=int(first_position),
        last_position=int(last_position),
        response=reply,
        replayed=True,
        events=tuple(event_from_row(event) for event in events),
    )
    return str(stream_id), bytes(fingerprint), result

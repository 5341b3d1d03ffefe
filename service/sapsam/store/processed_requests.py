"""Processed request ids: what identifies a request, its original result, and forgetting old ids.

``processed_requests`` (migrations 0001 and 0003) holds, per request id, the stream it appended
to, the fingerprint of the events it appended, the digest of the request as the client sent it
(when the API gave one) and the versions and positions it took. ``sapsam.store.appends`` writes a
row with each append, in the append's statement; a retry is answered from it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from typing import Any

import psycopg

from sapsam.log.canonical_json import canonical_json, json_string
from sapsam.log.records import AppendResult, NewEvent, RequestIdReused
from sapsam.store.queries import query
from sapsam.store.reads import select_events

Connection = psycopg.AsyncConnection[Any]

event_type_json = lru_cache(maxsize=1024)(json_string)
"""An event type name as a JSON string: a handful of names, each encoded once."""


def request_fingerprint(stream_id: str, events: Sequence[NewEvent]) -> bytes:
    """What makes two appends "the same request" when the caller gave no request digest (the
    service's own appends, rows older than migration 0003): the stream and each event's type and
    data.

    SHA-256 of the canonical JSON of ``{"events": [{"data", "schema_version", "type"}, ...],
    "stream"}``. The expected version is left out on purpose: a client retrying after a timeout
    may have reloaded the stream, and its retry is still the same request.
    """
    return fingerprint_of_parts(
        json_string(stream_id), events, [canonical_json(event.data) for event in events]
    )


def fingerprint_of_parts(
    stream_json: bytes, events: Sequence[NewEvent], canonical_data: Sequence[bytes]
) -> bytes:
    """``request_fingerprint`` from the stream id as a JSON string (``json_string``) and each
    event's canonical data, already computed."""
    # Assembled from canonical parts (keys in sorted order), equal to canonical_json of the whole.
    parts = [
        b'{"data":%b,"schema_version":%d,"type":%b}'
        % (data, event.schema_version, event_type_json(event.type))
        for event, data in zip(events, canonical_data, strict=True)
    ]
    return hashlib.sha256(b'{"events":[%b],"stream":%b}' % (b",".join(parts), stream_json)).digest()


@dataclass(frozen=True)
class ProcessedRequest:
    """A processed request id: its stream, what identifies the request, and its result."""

    stream_id: str
    fingerprint: bytes  # of the events it appended (request_fingerprint)
    request_digest: bytes | None  # of the request as the client sent it; None if not given
    result: AppendResult

    def same_request(
        self, stream_id: str, request_digest: bytes | None, fingerprint: bytes | None = None
    ) -> bool:
        """Whether a request on ``stream_id`` with this digest (or, when either side has no
        digest, these events) is a retry of this one.

        The digest decides when both sides have one: the same request decided again may append
        other events (a fresh seed, the time), and another request may append the same ones (two
        reveals with different nonces that foul alike). Without a digest on both sides the
        events' fingerprint decides, as for the service's own appends and rows kept before
        migration 0003; with no fingerprint either (a look-up before deciding), the stream does.
        """
        if stream_id != self.stream_id:
            return False
        if request_digest is not None and self.request_digest is not None:
            return request_digest == self.request_digest
        return fingerprint is None or fingerprint == self.fingerprint

    def check_same_request(
        self, stream_id: str, request_digest: bytes | None, fingerprint: bytes | None = None
    ) -> None:
        """Raise ``RequestIdReused`` unless :meth:`same_request`."""
        if stream_id != self.stream_id:
            raise RequestIdReused(self.result.request_id, f"for stream {self.stream_id!r}")
        if not self.same_request(stream_id, request_digest, fingerprint):
            detail = "with different events" if request_digest is None else "for another request"
            raise RequestIdReused(self.result.request_id, detail)


async def find_processed_request(
    connection: Connection, request_id: str
) -> ProcessedRequest | None:
    """The stream, fingerprint, request digest and original result of a processed request id.

    An API may call this before deciding, to answer a retry without re-running the command (after
    :meth:`ProcessedRequest.check_same_request`).
    """
    row = await (
        await connection.execute(query("processed_requests.find"), {"request": request_id})
    ).fetchone()
    if row is None:
        return None
    (
        stream_id,
        fingerprint,
        first_version,
        last_version,
        first_position,
        last_position,
        reply,
        digest,
    ) = row
    events = await select_events(
        connection,
        "stream_id = %s AND version BETWEEN %s AND %s ORDER BY version",
        [stream_id, first_version, last_version],
    )
    result = AppendResult(
        stream_id=str(stream_id),
        request_id=request_id,
        first_version=int(first_version),
        last_version=int(last_version),
        first_position=int(first_position),
        last_position=int(last_position),
        response=reply,
        replayed=True,
        events=tuple(events),
    )
    return ProcessedRequest(
        str(stream_id), bytes(fingerprint), None if digest is None else bytes(digest), result
    )


async def prune_processed_requests(connection: Connection, older_than: timedelta) -> int:
    """Forget the request ids processed more than ``older_than`` ago; returns how many.

    Idempotency then ends for them: a retry of such an old request is decided anew (and is
    refused if the stream has moved on, as it almost always will have). The events are untouched.
    Run as the schema owner: the service role may not delete these rows (docs/store.md).
    """
    if older_than <= timedelta(0):
        raise ValueError("older_than must be positive: the retry window to keep")
    cursor = await connection.execute(query("processed_requests.prune"), {"older_than": older_than})
    return cursor.rowcount

"""What an append does when it is a retry, or lost a race: the head read, the retry's answer.

An append decides nothing under a lock: the database's unique keys settle every race
(``sapsam.store.appends``). These are the reads that turn the outcome of a race into an answer:
the stream's head when no remembered hash can be chained from (``read_head``, which also spots a
processed request id and a stale version), and the original result of a request id already
processed (``answer_retry``, ``settle_unique_violation``).
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import errors

from sapsam.log.chain import GENESIS_HASH
from sapsam.log.records import AppendResult, ConcurrencyConflict
from sapsam.store.processed_requests import find_processed_request
from sapsam.store.reads import stream_version
from sapsam.store.stream_heads import remember

Connection = psycopg.AsyncConnection[Any]

# The unique keys whose violation means "lost a race": the next version was taken, or the same
# request id was processed meanwhile.
RACE_CONSTRAINTS = frozenset({"events_stream_version_key", "processed_requests_pkey"})

_READ_HEAD = """
SELECT p.stream_id, e.version, e.hash
FROM (SELECT 1) AS one
LEFT JOIN processed_requests AS p ON p.request_id = %s
LEFT JOIN LATERAL (
    SELECT version, hash FROM events WHERE stream_id = %s ORDER BY version DESC LIMIT 1
) AS e ON true
"""


async def read_head(
    connection: Connection,
    request_id: str,
    stream_id: str,
    expected_version: int,
    fingerprint: bytes,
    request_digest: bytes | None,
) -> bytes | AppendResult:
    """The hash at the expected version, or the original result of a retried request.

    Raises ConcurrencyConflict when the stream is not at the expected version.
    """
    lookup = await (await connection.execute(_READ_HEAD, [request_id, stream_id])).fetchone()
    assert lookup is not None
    if lookup[0] is not None:
        return await answer_retry(connection, request_id, stream_id, fingerprint, request_digest)
    current_version = int(lookup[1]) if lookup[1] is not None else 0
    if current_version != expected_version:
        raise ConcurrencyConflict(stream_id, expected_version, current_version)
    if lookup[2] is None:
        return GENESIS_HASH
    remember(connection, stream_id, current_version, bytes(lookup[2]))
    return bytes(lookup[2])


async def settle_unique_violation(
    connection: Connection,
    error: errors.UniqueViolation,
    request_id: str,
    stream_id: str,
    expected_version: int,
    fingerprint: bytes,
    request_digest: bytes | None,
) -> AppendResult:
    """The answer to an insert that failed on a unique key: the original result if it lost
    against a retry of this very request; else raises ``ConcurrencyConflict`` (the version was
    taken) or ``error`` again (another key)."""
    if error.diag.constraint_name not in RACE_CONSTRAINTS:
        raise error
    if await find_processed_request(connection, request_id) is not None:
        return await answer_retry(connection, request_id, stream_id, fingerprint, request_digest)
    if error.diag.constraint_name == "events_stream_version_key":
        current = await stream_version(connection, stream_id)
        raise ConcurrencyConflict(stream_id, expected_version, current) from error
    raise error


async def answer_retry(
    connection: Connection,
    request_id: str,
    stream_id: str,
    fingerprint: bytes,
    request_digest: bytes | None,
) -> AppendResult:
    """The original result of ``request_id``, after checking this is the same request (else
    ``RequestIdReused``)."""
    earlier = await find_processed_request(connection, request_id)
    assert earlier is not None
    earlier.check_same_request(stream_id, request_digest, fingerprint)
    return earlier.result

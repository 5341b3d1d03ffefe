"""The commit group's one statement for many appends: every member's guard, events, request id,
read models and secrets, with one parameter (the members as one JSON document).

Why: sent as one statement each (``INSERT_BATCH`` with its companions, in one pipeline), a batch
costs the server psycopg's work per member: converting the query, dumping a dozen parameters,
reading a result (bench/append_cost.py: ~160 us of Python per member under a profiler, most of
the commit group's task), and PostgreSQL a statement's fixed cost per member. Here each member is
one JSON object (built from the canonical bytes the append made anyway), the batch one array, and
one statement of one text per combination of read models does for all of them what
``INSERT_BATCH`` does for one: PostgreSQL plans each text a few times per connection.

Per member, as ``INSERT_BATCH``:

- the guard: the event at the expected version has the expected hash (or the stream is new),
  the next version is not taken yet, and the request id is not processed yet. A member failing
  it writes nothing and gets no rows, as a stale head gets none from ``INSERT_BATCH``: its append
  re-reads the head, which answers a processed request id (a replay, or ``RequestIdReused``) or
  reports the conflict (``ConcurrencyConflict`` with the current version), the answers
  ``INSERT_BATCH``'s unique keys lead to. So a retried request, a stale copy or a version
  another process took no longer fails the whole batch: the others commit.
- its events, inserted in batch order (members in the batch's order, each member's events in
  theirs), so positions follow versions. Only a version another transaction takes while this
  statement runs (not committed when the guard looked) fails the statement on the key; the whole
  batch then runs alone, as any failed batch does (``sapsam.store.commit_group``);
- its ``processed_requests`` row (fingerprint, digest, first and last version and position,
  response);
- its read models and secrets (``BatchedPart``), only if its events were inserted;
- whether a listener wants a wake-up for its events (as ``INSERT_BATCH``'s ``wanted``).

The rows come back as ``(i, position, version, wanted)``, ordered by member and version;
``member_rows`` splits them per member into what ``INSERT_BATCH`` returns. A batch holds at most
one member per stream (``sapsam.store.commit_group`` keeps a second for the next batch): every
part of one statement sees the same snapshot, so two members of one stream could not chain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from sapsam.store.projectors import BatchedPart

Row = tuple[Any, ...]

_CORE = """
WITH RECURSIVE member AS (
    SELECT (m->>'i')::int AS i, m->>'stream' AS stream, (m->>'expected')::int AS expected,
        decode(m->>'previous', 'hex') AS previous, m->'metadata' AS metadata, m->'batch' AS batch,
        m->>'request' AS request, decode(m->>'fingerprint', 'hex') AS fingerprint,
        decode(m->>'digest', 'hex') AS digest, m->'response' AS response,
        m->>'handed_to' AS handed_to, m->'types' AS types, m->'parts' AS parts
    FROM jsonb_array_elements(%(members)s::jsonb) AS members(m)
), guarded AS (
    -- Scalar subqueries, not EXISTS: each is one index probe per member, where the planner,
    -- expecting 100 members, would hash the whole of events and processed_requests.
    SELECT * FROM member
    WHERE (member.expected = 0 OR (
            SELECT hash FROM events
            WHERE stream_id = member.stream AND version = member.expected) = member.previous)
        AND (SELECT version FROM events
            WHERE stream_id = member.stream AND version = member.expected + 1) IS NULL
        AND (SELECT 1 FROM processed_requests WHERE request_id = member.request) IS NULL
), inserted AS (
    INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)
    SELECT g.stream, (e->>'v')::int, e->>'t', (e->>'s')::int, e->'d', g.metadata,
        decode(e->>'h', 'hex')
    FROM guarded AS g, jsonb_array_elements(g.batch) WITH ORDINALITY AS batch(e, n)
    ORDER BY g.i, n
    RETURNING stream_id, position, version
), appended AS (
    SELECT g.i, g.stream, g.request, g.fingerprint, g.digest, g.response, g.handed_to, g.types,
        g.parts, x.first_version, x.last_version, x.first_position, x.last_position
    FROM guarded AS g JOIN (
        SELECT stream_id, min(version) AS first_version, max(version) AS last_version,
            min(position) AS first_position, max(position) AS last_position
        FROM inserted GROUP BY stream_id
    ) AS x ON x.stream_id = g.stream
), processed AS (
    INSERT INTO processed_requests (request_id, stream_id, fingerprint, first_version,
        last_version, first_position, last_position, response, request_digest)
    SELECT request, stream, fingerprint, first_version, last_version, first_position,
        last_position, response, digest
    FROM appended
)"""
_RESULT = """
SELECT a.i, inserted.position, inserted.version, (EXISTS (
    SELECT 1 FROM wakeup_listeners WHERE expires_at > now()
        AND (event_types IS NULL
            OR event_types && ARRAY(SELECT jsonb_array_elements_text(a.types))))
    OR EXISTS (
    SELECT 1 FROM wakeup_streams JOIN wakeup_listeners USING (listener)
    WHERE wakeup_streams.stream_id = a.stream AND expires_at > now()
        AND listener IS DISTINCT FROM a.handed_to)) AS wanted
FROM appended AS a JOIN inserted ON inserted.stream_id = a.stream
ORDER BY a.i, inserted.version
"""


@dataclass(frozen=True)
class BatchMember:
    """An append as a member of the batch statement: its JSON object (without its index) and the
    parts' SQL by name."""

    document: str
    parts: Mapping[str, str]


def batch_member(parameters: Mapping[str, Any], parts: Sequence[BatchedPart]) -> BatchMember:
    """The member for ``INSERT_BATCH``'s ``parameters`` (``insert_parameters``: the metadata,
    the events, the response and the types are JSON text already) and the parts of its
    companions."""
    items: dict[str, list[Any]] = {}
    for part in parts:
        items.setdefault(part.name, []).append(part.item)
    digest = parameters["digest"]
    digest_json = "null" if digest is None else f'"{digest.hex()}"'
    document = (
        f'"stream":{_json(parameters["stream"])},"expected":{parameters["expected"]:d},'
        f'"previous":"{parameters["previous"].hex()}","metadata":{parameters["metadata"]},'
        f'"batch":{parameters["batch"]},"request":{_json(parameters["request"])},'
        f'"fingerprint":"{parameters["fingerprint"].hex()}",'
        f'"digest":{digest_json},'
        f'"response":{parameters["response"]},"handed_to":{_json(parameters["handed_to"])},'
        f'"types":{parameters["types"]},"parts":{_json(items)}}}'
    )
    return BatchMember(document, {part.name: part.sql for part in parts})


def _json(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


def batch_statement(members: Sequence[BatchMember]) -> tuple[str, dict[str, str]]:
    """The statement and its one parameter for ``members`` (each given its index ``i``).

    The statement has the parts its members carry and no others: a part with no items still
    costs every execution its plan nodes' start and end (a ModifyTable opening its table and
    indexes, its joins), so a batch of game moves, most of which change ``table_state`` only,
    does not pay for ``seat_scores`` and both secrets' CTEs. A process sends one text per
    combination of parts (a handful: moves, deal starts, reveals with scores); psycopg prepares
    each after five uses and PostgreSQL keeps its generic plan, so the ~0.4 ms plan is paid a
    few times per combination and connection."""
    parts: dict[str, str] = {}
    for member in members:
        parts.update(member.parts)
    documents = ",".join(
        f'{{"i":{index:d},{member.document}' for index, member in enumerate(members)
    )
    return _statement(tuple(sorted(parts.items()))), {"members": f"[{documents}]"}


@lru_cache(maxsize=64)
def _statement(parts: tuple[tuple[str, str], ...]) -> str:
    """The text for one combination of parts, written once per combination."""
    return _CORE + "".join(f", {sql}" for _, sql in parts) + _RESULT


def member_rows(rows: Sequence[Row], members: int) -> list[list[Row]]:
    """The batch's rows split per member, as ``INSERT_BATCH`` gives them: (position, version,
    wanted); none for a member that did not pass its guard."""
    split: list[list[Row]] = [[] for _ in range(members)]
    for index, position, version, wanted in rows:
        split[index].append((position, version, wanted))
    return split

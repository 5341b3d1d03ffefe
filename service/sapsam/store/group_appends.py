"""Appends the commit group commits: its statement handed to the group, with or without a
pooled connection of the caller's.

Why apart: the ordinary append (``sapsam.store.appends``) decides, checks and retries on a
connection; the group's side is only the hand-over (``sapsam.store.commit_group``) and, for a
session holding no connection yet, the whole append without one (``append_by_group``), which
answers only what it can alone and otherwise leaves the append to the ordinary path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import psycopg

from sapsam.log.chain import GENESIS_HASH
from sapsam.log.records import AppendResult, JsonValue, NewEvent
from sapsam.store import write_stamps
from sapsam.store.append_count import APPENDED
from sapsam.store.append_parts import (
    append_result,
    chained_hashes,
    prepare_append,
    recorded_events,
)
from sapsam.store.append_statement import (
    INSERT_BATCH,
    inline_projectors,
    insert_parameters,
    with_companions,
)
from sapsam.store.batch_statement import BatchMember, batch_member
from sapsam.store.commit_group import CommitGroup, RunAlone
from sapsam.store.prepared_statements import statement_rows
from sapsam.store.projections import InlineStatement, Projector
from sapsam.store.stream_heads import DatabaseKey, database_key, recall_in, remember_in
from sapsam.store.subscriptions import WakeupTarget, send_wakeup_to, wakeup_target

Connection = psycopg.AsyncConnection[Any]


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
    wake_type_listeners: bool = True,
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
    prepared = prepare_append(
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
    hashes = chained_hashes(previous_hash, prepared.canonical)
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
        wake_type_listeners,
    )
    # Each form is written only if the group sends it: the append's own statement for a batch
    # of one (or a member the batch statement cannot carry), the member for a batch of more.
    statement = partial(with_companions, companions, parameters) if companions else INSERT_BATCH
    parts = [c.batched for c in companions if c.batched is not None]
    member = partial(batch_member, parameters, parts) if len(parts) == len(companions) else None
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
    recorded = recorded_events(
        rows, stream_id, events, prepared.canonical_data, prepared.canonical_metadata, hashes
    )
    remember_in(database.heads, stream_id, recorded[-1].version, recorded[-1].hash)
    if rows[0][2]:
        send_wakeup_to(database.wakeups, stream_id, recorded[-1].position)
    return append_result(stream_id, request_id, response, recorded)


async def run_single_statement(
    connection: Connection,
    statement: str,
    parameters: dict[str, Any],
    stream_id: str,
    commit_group: CommitGroup | None,
    member: BatchMember | None,
) -> list[tuple[Any, ...]]:
    """The rows of the append's one statement, committed: by the commit group when there is one
    and it takes it (``member``: the same append for its batch statement), else on the caller's
    own connection (through libpq's prepared calls, ``sapsam.store.prepared_statements``)."""
    if commit_group is not None:
        try:
            return await commit_group.execute(statement, parameters, stream_id, member)
        except RunAlone:
            pass
    return await statement_rows(connection, statement, parameters)

"""The audit of one deal on the server's asynchronous connections (the AuditService's calls).

The same reads as ``sapsam.audit.database`` (a table's stream through one deal), awaited on
psycopg's ``AsyncConnection``, so a call waiting for the database holds no thread; what is made of
the events is that module's, unchanged.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from sapsam.audit.anchoring import Trust
from sapsam.audit.database import (
    NEXT_DEAL_START,
    deal_end,
    found_events,
    is_uuid,
    table_stream,
    verify_deal_events,
    verify_selected_deal,
)
from sapsam.audit.export_format import (
    AuditExport,
    Requester,
    seated_players,
    with_display_names,
)
from sapsam.audit.export_proofs import ANCHOR_WAIT_SECONDS, ProvenExport, anchor_export_async
from sapsam.audit.export_selection import select_deal
from sapsam.audit.report import AuditReport
from sapsam.log.records import RecordedEvent
from sapsam.log.signed_note import VerifierKey
from sapsam.store.queries import query
from sapsam.store.reads import read_stream

Connection = psycopg.AsyncConnection[Any]


async def deal_events(
    connection: Connection, table_id: uuid.UUID, deal_number: int
) -> list[RecordedEvent]:
    """The table's stream up to the end of deal ``deal_number``."""
    stream_id = table_stream(table_id)
    # Nothing after the deal is needed: stop before the next deal's DealStarted.
    cursor = await connection.execute(NEXT_DEAL_START, [stream_id, str(deal_number + 1)])
    last = deal_end(await cursor.fetchone())
    return found_events(await read_stream(connection, stream_id, 1, last), table_id)


async def export_deal(
    connection: Connection, table_id: uuid.UUID, deal_number: int, requester: Requester
) -> AuditExport:
    """One deal as an export; ``ExportAccessError`` if the requester may not have it."""
    events = await deal_events(connection, table_id, deal_number)
    return select_deal(events, deal_number, requester, str(table_id))


async def display_names(connection: Connection, player_ids: Sequence[str]) -> dict[str, str]:
    """``sapsam.audit.database.display_names``, awaited: the labels an export carries."""
    registered = [player for player in player_ids if is_uuid(player)]
    if not registered:
        return {}
    cursor = await connection.execute(query("players.display_names"), {"players": registered})
    return {str(player): str(name) for player, name in await cursor.fetchall()}


async def verify_deal(
    connection: Connection, table_id: uuid.UUID, deal_number: int, requester: Requester
) -> AuditReport:
    """``sapsam.audit.database.verify_deal_online``, awaited."""
    events = await deal_events(connection, table_id, deal_number)
    return verify_deal_events(events, table_id, deal_number, requester)


async def proven_deal(
    pool: AsyncConnectionPool[Any],
    table_id: uuid.UUID,
    deal_number: int,
    requester: Requester,
    wait_seconds: float = ANCHOR_WAIT_SECONDS,
    known_tree_size: int | None = None,
) -> tuple[list[RecordedEvent], ProvenExport]:
    """The deal's export with its proof (docs/audit.md §2.5), and the events it was selected
    from; ``ExportAccessError`` if the requester may not have it."""
    async with pool.connection() as connection:
        events = await deal_events(connection, table_id, deal_number)
        export = select_deal(events, deal_number, requester, str(table_id))
        names = await display_names(connection, seated_players(export.events))
    export = with_display_names(export, names)
    proven = await anchor_export_async(pool, export, wait_seconds, known_tree_size)
    return events, proven


async def verify_deal_anchored(
    pool: AsyncConnectionPool[Any],
    table_id: uuid.UUID,
    deal_number: int,
    requester: Requester,
    server_keys: tuple[VerifierKey, ...],
    wait_seconds: float = ANCHOR_WAIT_SECONDS,
) -> tuple[AuditReport, AuditExport]:
    """``verify_deal`` of the deal exported with its proof and judged against ``server_keys``
    (the server's own): the three verdicts of docs/audit.md §4.5, plus the stored chain; and
    the export judged (with the players' display names), which the report's text tells."""
    events, proven = await proven_deal(pool, table_id, deal_number, requester, wait_seconds)
    export = proven.export
    return verify_selected_deal(events, export, trust=Trust(server_keys=server_keys)), export

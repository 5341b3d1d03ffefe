"""The audit of one deal on the server's asynchronous connections (the AuditService's calls).

The same reads as ``sapsam.audit.database`` (a table's stream through one deal), awaited on
psycopg's ``AsyncConnection``, so a call waiting for the database holds no thread; what is made of
the events is that module's, unchanged.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from sapsam.audit.database import (
    NEXT_DEAL_START,
    deal_end,
    found_events,
    table_stream,
    verify_deal_events,
)
from sapsam.audit.export_format import AuditExport, Requester, select_deal
from sapsam.audit.report import AuditReport
from sapsam.log.records import RecordedEvent
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


async def verify_deal(
    connection: Connection, table_id: uuid.UUID, deal_number: int, requester: Requester
) -> AuditReport:
    """``sapsam.audit.database.verify_deal_online``, awaited."""
    events = await deal_events(connection, table_id, deal_number)
    return verify_deal_events(events, table_id, deal_number, requester)

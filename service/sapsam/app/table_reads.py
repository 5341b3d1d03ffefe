"""Reads of a table that lean on facts that never change once recorded, remembered per process.

A table's first event (its creator and creation time) and where each deal starts in its table's
stream (versions never change): once seen, each stays true, so the TableService servicer asks
this module instead of reading the log again. Each memory keeps the :data:`CACHE_TABLES` tables
used last; everything else comes from ``sapsam.app.tables.TableService``. A seat's holder is not
among them: the operator gives a seat to another player between deals (``SeatReplaced``), so it
is read from the table's state, from memory when that copy is current.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

from sapsam.app.tables import TableService
from sapsam.domain import events as domain_events
from sapsam.domain.table import TableState
from sapsam.log.records import RecordedEvent

CACHE_TABLES: Final = 4096
"""Tables whose immutable facts (first event, deal starts) each memory keeps."""
DEAL_PAGE_EVENTS: Final = 32
"""Events read at once for a deal's events (a deal of two seats has about fifteen)."""


@dataclass(frozen=True)
class SeatHolder:
    """Who holds seat ``seat`` of a table of ``seat_count`` seats (None: nobody, or no such
    seat)."""

    seat_count: int
    holder: str | None


class TableReads:
    """The table reads the servicer makes, over a ``TableService``, with what never changes
    remembered."""

    def __init__(self, tables: TableService) -> None:
        self._tables = tables
        self._first_events: OrderedDict[uuid.UUID, RecordedEvent] = OrderedDict()
        # Where each deal starts in its table's stream, and how far the stream was scanned, so
        # a deal's events are read alone, not the whole stream.
        self._deal_starts: OrderedDict[uuid.UUID, tuple[int, dict[int, int]]] = OrderedDict()

    async def first_event(self, table_id: uuid.UUID) -> RecordedEvent:
        """The table's first recorded event (its TableCreated): one event read, once."""
        first = self._first_events.get(table_id)
        if first is None:
            read = await self._tables.events(table_id, 1, to_version=1)  # not the whole log
            first = read[0]
            _bounded_put(self._first_events, table_id, first)
        return first

    async def seat_holder(self, table_id: uuid.UUID, seat: int) -> SeatHolder:
        """Who holds ``seat`` now, from the table's state (``TableNotFoundError`` for no table):
        not remembered apart from it, since a seat changes hands (``SeatReplaced``)."""
        holders = (await self._tables.load(table_id)).seats
        holder = holders[seat] if 0 <= seat < len(holders) else None
        return SeatHolder(len(holders), holder)

    async def deal_events(
        self, table_id: uuid.UUID, deal_number: int
    ) -> tuple[TableState, list[RecordedEvent]]:
        """The table now, and the events of deal ``deal_number``, up to the next deal's start
        (empty if it never began).

        Only the stream's tail since the last look is scanned for deals starting: versions never
        change, so where a deal starts, once seen, stays true. That scan and the table's own
        load are one read (the deal just played is in both).
        """
        scanned_to, starts = self._deal_starts.get(table_id, (0, {}))
        start = starts.get(deal_number)
        if start is not None:
            state = await self._tables.load(table_id)
            return state, await self._read_deal(table_id, start)
        state, tail = await self._tables.load_with_events(table_id, scanned_to + 1)
        found = dict(starts)
        for recorded in tail:
            number = recorded.data.get("deal_number")
            if recorded.type == domain_events.DealStarted.TYPE and isinstance(number, int):
                found[number] = recorded.version
        if tail:
            known = self._deal_starts.get(table_id)
            if known is None or known[0] < tail[-1].version:
                _bounded_put(self._deal_starts, table_id, (tail[-1].version, found))
        start = found.get(deal_number)
        if start is None:
            return state, []
        # Not among the starts known before the scan, so it is in the tail just read, up to the
        # next deal's start (as _read_deal): later deals are not decoded for this one.
        end = min((version for version in found.values() if version > start), default=None)
        return state, [
            recorded
            for recorded in tail
            if recorded.version >= start and (end is None or recorded.version < end)
        ]

    async def _read_deal(self, table_id: uuid.UUID, start: int) -> list[RecordedEvent]:
        """The events of the deal that starts at version ``start``, read a page at a time up to
        the next deal's start: an old deal's result costs that deal, not the table's history
        since."""
        deal: list[RecordedEvent] = []
        first = start
        while True:
            page = await self._tables.events(
                table_id, first, to_version=first + DEAL_PAGE_EVENTS - 1
            )
            for recorded in page:
                if recorded.version > start and recorded.type == domain_events.DealStarted.TYPE:
                    return deal
                deal.append(recorded)
            if len(page) < DEAL_PAGE_EVENTS:
                return deal
            first += DEAL_PAGE_EVENTS


def _bounded_put(cache: OrderedDict[uuid.UUID, Any], key: uuid.UUID, value: Any) -> None:
    # All on the worker's one event loop. The least recently stored entries go first.
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > CACHE_TABLES:
        cache.popitem(last=False)

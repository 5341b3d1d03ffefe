"""The two kinds of live stream: a table's public events (WatchTable) and a tournament's events
(WatchTournament), each a ``sapsam.api.watch.StreamChannel``.

Their reads are awaited one at a time per channel (the channel sees to that), so the fold a table
channel keeps is never touched by two reads at once; a table channel also
folds the events this process appended itself (``StreamChannel.take``, on the loop, never while
a read runs).
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence

from sapsam.api import views
from sapsam.api.live_feed import EventFeed
from sapsam.api.watch import Sent, StreamChannel
from sapsam.app import tables as table_store
from sapsam.app import tournaments as tournament_store
from sapsam.domain import events as domain_events
from sapsam.domain.table import INITIAL_STATE, TableState, evolve
from sapsam.domain.tournament_events import TournamentCompleted
from sapsam.log.records import RecordedEvent
from sapsam_proto.v1 import table_service_pb2, tournament_pb2, tournament_service_pb2


class _TableFold:
    """A table's public events as sent, folding its state on the way (seats, the deal so far:
    what each event's message shows)."""

    def __init__(self, tables: table_store.TableService, table_id: uuid.UUID) -> None:
        self._tables = tables
        self._table_id = table_id
        self._state: TableState = INITIAL_STATE
        self._deal: views.DealFacts | None = None

    def copy(self) -> _TableFold:
        """A fold that goes on from here without touching this one (the state and the events
        are immutable; the deal's facts and their seats are not, and are copied one level)."""
        copied = _TableFold(self._tables, self._table_id)
        copied._state = self._state
        deal = self._deal
        if deal is not None:
            seats = {number: dataclasses.replace(seat) for number, seat in deal.seats.items()}
            copied._deal = dataclasses.replace(deal, seats=seats)
        return copied

    def fold(self, recorded: RecordedEvent) -> Sent:
        event = self._tables.decode(recorded)
        if isinstance(event, domain_events.DealStarted):
            self._deal = views.DealFacts(event.deal_number)
        if self._deal is not None and getattr(event, "deal_number", None) == self._deal.deal_number:
            self._deal.add(event)
        self._state = evolve(self._state, event)
        message = views.table_event_message(
            self._table_id, recorded, event, self._state.seats, self._deal
        )
        # A table that starts a new series after this one (after_series) plays on.
        last = (
            isinstance(event, domain_events.SeriesCompleted) and self._state.after_series == "close"
        )
        response = table_service_pb2.WatchTableResponse(event=message)
        return Sent(recorded.version, response, last, recorded.position)


class TableChannel(StreamChannel):
    """A table's public events, for every WatchTable of it in this process."""

    def __init__(
        self,
        tables: table_store.TableService,
        table_id: uuid.UUID,
        feed: EventFeed,
        buffer_limit: int,
    ) -> None:
        super().__init__(table_store.stream_id_for(table_id), feed, buffer_limit)
        self._tables = tables
        self._table_id = table_id
        self._fold = _TableFold(tables, table_id)

    async def read_after(self, version: int) -> list[Sent]:
        """The events after ``version``, folded on from the channel's own state."""
        return self.sent_for(await self._tables.events(self._table_id, version + 1))

    def sent_for(self, records: Sequence[RecordedEvent]) -> list[Sent]:
        """``records`` folded on from the channel's own state: on a copy, kept only once all
        are folded (a fold that fails midway folds nothing, so the retry does not fold the
        first events twice)."""
        fold = self._fold.copy()
        sent = [fold.fold(recorded) for recorded in records]
        self._fold = fold
        return sent

    async def history(self, after: int, through: int) -> list[Sent]:
        """Read from the first event (each message needs the table's state), send from
        ``after`` on."""
        fold = _TableFold(self._tables, self._table_id)
        recorded = await self._tables.events(self._table_id, 1, to_version=through)  # not past it
        return [fold.fold(event) for event in recorded][after:]


def _tournament_event(recorded: RecordedEvent) -> Sent:
    response = tournament_service_pb2.WatchTournamentResponse(
        event=tournament_pb2.TournamentEvent(
            version=recorded.version,
            type=recorded.type,
            record_time=views.timestamp_from_text(str(recorded.metadata["recorded_at"])),
            data_json=json.dumps(
                recorded.data, sort_keys=True, separators=(",", ":"), ensure_ascii=False
            ),
        )
    )
    return Sent(recorded.version, response, last=recorded.type == TournamentCompleted.TYPE)


class TournamentChannel(StreamChannel):
    """A tournament's events, for every WatchTournament of it in this process."""

    def __init__(
        self,
        tournaments: tournament_store.TournamentService,
        tournament_id: uuid.UUID,
        feed: EventFeed,
        buffer_limit: int,
    ) -> None:
        super().__init__(tournament_store.stream_id_for(tournament_id), feed, buffer_limit)
        self._tournaments = tournaments
        self._tournament_id = tournament_id

    async def read_after(self, version: int) -> list[Sent]:
        """The events after ``version``."""
        return [
            _tournament_event(recorded)
            for recorded in await self._tournaments.events(self._tournament_id, version + 1)
        ]

    async def history(self, after: int, through: int) -> list[Sent]:
        """The events after ``after`` up to ``through``."""
        events = await self._tournaments.events(self._tournament_id, after + 1)
        return [_tournament_event(recorded) for recorded in events if recorded.version <= through]

"""The two kinds of live stream: a table's public events (WatchTable) and a tournament's events
(WatchTournament), each a ``sapsam.api.watch.StreamChannel``.

Their reads are awaited one at a time per channel (the channel sees to that), so the fold a table
channel keeps is never touched by two reads at once; a table channel also
folds the events this process appended itself (``StreamChannel.take``, on the loop, never while
a read runs).

A table's ``CardsDealt`` is the one event whose message differs by watcher: each seat's holder
is sent its own cards (``sapsam.domain.table_views.dealt_cards_by_player`` decides who sees
what; the hands are computed once per deal from the deal's seed, as for GetMyHand), everyone
else the public message; every other event is one message shared by all. A watcher that asked
for batches (``WatchTableRequest.batch_events``) is sent the events ready at once in one message
(:func:`table_events_batch`).
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Final

from sapsam.api import views
from sapsam.api.event_messages import with_my_cards
from sapsam.api.live_feed import EventFeed
from sapsam.api.open_face_event_messages import open_face_event
from sapsam.api.watch import Sent, StreamChannel
from sapsam.app import tables as table_store
from sapsam.app import tournaments as tournament_store
from sapsam.app.secret_seeds import dealt_hands
from sapsam.domain import events as domain_events
from sapsam.domain.open_face.events import StreetDealt
from sapsam.domain.open_face.table_state import OpenFaceTable, dealt_streets
from sapsam.domain.table import INITIAL_STATE, TableState, evolve
from sapsam.domain.table_views import dealt_cards_by_player
from sapsam.domain.tournament_events import TournamentCancelled, TournamentCompleted
from sapsam.log.records import RecordedEvent
from sapsam_proto.v1 import (
    table_event_pb2,
    table_service_pb2,
    tournament_pb2,
    tournament_service_pb2,
)


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

    def fold(self, recorded: RecordedEvent, seeds: Mapping[int, bytes]) -> Sent:
        """One event as sent; ``seeds``: the secret seeds of the deals whose cards it may deal
        (the hands each seat's holder is shown with ``CardsDealt``)."""
        event = self._tables.decode_remembered(self._table_id, recorded)
        if isinstance(event, domain_events.DealStarted):
            self._deal = views.DealFacts(event.deal_number)
        if self._deal is not None and getattr(event, "deal_number", None) == self._deal.deal_number:
            self._deal.add(event)
        before = self._state
        self._state = evolve(self._state, event)
        if isinstance(self._state, OpenFaceTable):
            return self._open_face(recorded, event, before, self._state, seeds)
        message = views.table_event_message(
            self._table_id, recorded, event, self._state.seats, self._deal
        )
        # A table that starts a new series after this one (after_series) plays on.
        last = (
            isinstance(event, domain_events.SeriesCompleted) and self._state.after_series == "close"
        )
        response = table_service_pb2.WatchTableResponse(event=message)
        variants = None
        if isinstance(event, domain_events.CardsDealt):
            variants = self._own_cards(message, seeds.get(event.deal_number))
        return Sent(recorded.version, response, last, recorded.position, variants)

    def _open_face(
        self,
        recorded: RecordedEvent,
        event: domain_events.Event,
        before: TableState,
        after: OpenFaceTable,
        seeds: Mapping[int, bytes],
    ) -> Sent:
        """An open-face table's event as sent (``sapsam.api.open_face_event_messages``): the
        frame's events as at any table, open face's own (and its rule set, its score) by the
        domain's views; a seat's holder is sent its own cards of a street, and a placement the
        domain shows its seat alone."""
        base = views.table_event_header(self._table_id, recorded)
        street_cards = None
        if isinstance(event, StreetDealt):
            seed = seeds.get(event.deal_number)
            if seed is not None:
                street_cards = dealt_streets(after, seed)[event.street]
        converted = open_face_event(
            self._table_id,
            recorded,
            event,
            before if isinstance(before, OpenFaceTable) else None,
            after,
            base,
            street_cards,
        )
        if converted is None:
            message, by_player = (
                views.table_event_message(self._table_id, recorded, event, after.seats, self._deal),
                None,
            )
        else:
            message, by_player = converted
        variants = (
            None
            if by_player is None
            else {
                player: table_service_pb2.WatchTableResponse(event=variant)
                for player, variant in by_player.items()
            }
        )
        last = isinstance(event, domain_events.SeriesCompleted)  # an open-face table closes
        response = table_service_pb2.WatchTableResponse(event=message)
        return Sent(recorded.version, response, last, recorded.position, variants)

    def _own_cards(
        self, message: table_event_pb2.TableEvent, seed: bytes | None
    ) -> dict[str, table_service_pb2.WatchTableResponse] | None:
        """The ``CardsDealt`` each seat's holder is sent: the hands computed once per deal (as
        for GetMyHand), shown to whom the domain's view allows; None without the seed."""
        if seed is None:
            return None
        shown = dealt_cards_by_player(self._state, dealt_hands(self._state, seed))
        return {
            player_id: table_service_pb2.WatchTableResponse(event=with_my_cards(message, cards))
            for player_id, cards in shown.items()
        }


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
        records = await self._tables.events(self._table_id, version + 1)
        return self._folded(records, await self._seeds(records))

    def sent_for(self, records: Sequence[RecordedEvent]) -> list[Sent] | None:
        """``records`` (this process appended them) folded on, if this process holds the seed of
        every deal they deal (it does, having dealt them); else None, and they are read."""
        seeds = _published_seeds(records)
        for number in _dealt_deals(records):
            if number not in seeds:
                seed = self._tables.known_seed(self._table_id, number)
                if seed is None:
                    return None
                seeds[number] = seed
        return self._folded(records, seeds)

    def _folded(self, records: Sequence[RecordedEvent], seeds: Mapping[int, bytes]) -> list[Sent]:
        """``records`` folded on from the channel's own state: on a copy, kept only once all
        are folded (a fold that fails midway folds nothing, so the retry does not fold the
        first events twice)."""
        fold = self._fold.copy()
        sent = [fold.fold(recorded, seeds) for recorded in records]
        self._fold = fold
        return sent

    async def _seeds(self, records: Sequence[RecordedEvent]) -> dict[int, bytes]:
        """The seeds of the deals ``records`` deal: published among them, still secret (from
        memory or ``deal_secrets``), or else published after them (a replay that stops before
        the deal's end, or a seed revealed or a deal voided since the read): then read from the
        log."""
        seeds = _published_seeds(records)
        missing = [number for number in _dealt_deals(records) if number not in seeds]
        for number in missing:
            seed = await self._tables.deal_seed(self._table_id, number)
            if seed is not None:
                seeds[number] = seed
        if any(number not in seeds for number in missing):
            later = await self._tables.events(self._table_id, records[-1].version + 1)
            seeds.update(_published_seeds(later))
        return seeds

    async def history(self, after: int, through: int) -> list[Sent]:
        """Read from the first event (each message needs the table's state), send from
        ``after`` on."""
        fold = _TableFold(self._tables, self._table_id)
        recorded = await self._tables.events(self._table_id, 1, to_version=through)  # not past it
        # Hands only for the deals dealt in what is sent: the events before ``after`` are folded
        # for the state alone (no seed read, no deck dealt again for a reconnecting watcher).
        seeds = await self._seeds(recorded[after:])
        return [
            fold.fold(event, seeds if index >= after else {})
            for index, event in enumerate(recorded)
        ][after:]


def table_events_batch(
    responses: Sequence[table_service_pb2.WatchTableResponse],
) -> table_service_pb2.WatchTableResponse:
    """One message of a WatchTable that asked for ``batch_events``: the events of
    ``responses`` (each as this watcher is sent it) in ``events``, in order."""
    return table_service_pb2.WatchTableResponse(events=[response.event for response in responses])


_DEALING: Final = frozenset({domain_events.CardsDealt.TYPE, StreetDealt.TYPE})
"""The events that deal cards a seat's holder is shown on the stream (open face's streets)."""


def _dealt_deals(records: Sequence[RecordedEvent]) -> list[int]:
    """The numbers of the deals whose ``CardsDealt`` (or open face's ``StreetDealt``) is among
    ``records``."""
    return sorted(
        {
            int(str(recorded.data["deal_number"]))
            for recorded in records
            if recorded.type in _DEALING
        }
    )


_PUBLISHING_SEED = frozenset({domain_events.SeedRevealed.TYPE, domain_events.DealVoided.TYPE})
"""The events that publish a deal's seed (and make ``deal_secrets`` forget it)."""


def _published_seeds(records: Sequence[RecordedEvent]) -> dict[int, bytes]:
    """The deal seeds ``records`` publish (``SeedRevealed``, or ``DealVoided`` for a deal the
    operator ended unscored), by deal number."""
    return {
        int(str(recorded.data["deal_number"])): bytes.fromhex(str(recorded.data["seed"]))
        for recorded in records
        if recorded.type in _PUBLISHING_SEED
    }


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
    last = recorded.type in (TournamentCompleted.TYPE, TournamentCancelled.TYPE)
    return Sent(recorded.version, response, last=last)


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

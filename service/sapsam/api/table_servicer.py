"""The TableService servicer: parse the request, call the table service, map the result back.

Order of checks, the same for every mutating call, so a refused call never writes anything:
the caller's credential for the method (UNAUTHENTICATED; PERMISSION_DENIED for the operator on a
player's move: the auth interceptor, from ``sapsam.api.access``, before the request is read), the
request's own form (INVALID_ARGUMENT), the table's existence (NOT_FOUND), the caller's right to
the named seat (PERMISSION_DENIED), the etag (ABORTED), then the domain's decision
(FAILED_PRECONDITION and friends). A repeated ``request_id`` is answered from the log before any
of the state checks, with a response built from the events the original call appended, so it is
identical; the same ``request_id`` with a different request (``sapsam.api.request_digest``) is
REQUEST_ID_REUSED.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any, Final

import grpc

from sapsam.api import auth, resources, views
from sapsam.api.api_error import ApiError
from sapsam.api.interception import PlainStatus, StatusError
from sapsam.api.live_feed import EventFeed
from sapsam.api.players import PlayerDirectory
from sapsam.api.receipt_messages import receipt_message
from sapsam.api.request_digest import request_digest
from sapsam.api.stream_channels import TableChannel
from sapsam.api.watch import watch
from sapsam.app.tables import TableOutcome, TableService, stream_id_for
from sapsam.domain import events as domain_events
from sapsam.domain.commands import PlayerSignature
from sapsam.domain.table import TablePhase, TableState, fold
from sapsam.log.records import RecordedEvent
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import CardError, parse_cards
from sapsam_proto.v1 import table_pb2, table_service_pb2, table_service_pb2_grpc

DEFAULT_PAGE_SIZE: Final = 50
MAX_PAGE_SIZE: Final = 100

CACHE_TABLES: Final = 4096
"""Tables whose immutable facts (creator, full seats, deal starts) each cache keeps."""

# What a table does after its series (the request's enum to the domain's option).
_AFTER_SERIES: Final[dict[int, str]] = {
    table_service_pb2.AFTER_SERIES_UNSPECIFIED: "close",
    table_service_pb2.AFTER_SERIES_CLOSE: "close",
    table_service_pb2.AFTER_SERIES_NEW_SERIES: "new_series",
}

# The phases of each listed status (views.table_status read backwards).
_STATUS_PHASES: Final[dict[int, tuple[TablePhase, ...]]] = {
    status: tuple(phase for phase in TablePhase if views.table_status(phase) == status)
    for status in table_pb2.TableStatus.values()
    if status != table_pb2.TABLE_STATUS_UNSPECIFIED
}


def _expected_version(request: Any) -> int | None:
    """The request's etag, if it sent one; the table service checks it after retry detection."""
    return int(request.expected_version) if request.HasField("expected_version") else None


def _deal_number(request: Any) -> int | None:
    """The deal the request acts in, if it names one; the domain refuses any other deal."""
    return int(request.deal_number) if request.HasField("deal_number") else None


def _player_or_operator(caller: auth.Caller) -> str:
    return views.OPERATOR_ACTOR if caller.is_operator else str(caller.player_id)


def _player_only(caller: auth.Caller) -> str:
    if caller.player_id is None:
        raise ApiError("PLAYERS_ONLY", "only a player can do this, not the operator")
    return caller.player_id


def _signature(
    request: table_service_pb2.CommitArrangementRequest
    | table_service_pb2.RevealArrangementRequest,
) -> PlayerSignature | None:
    """The move's signature, if the request carries one (docs/fairness.md §19)."""
    if not request.HasField("signature"):
        return None
    return PlayerSignature(request.signature.public_key, request.signature.signature)


def _check_deadline(context: grpc.ServicerContext) -> None:
    # A call whose deadline already passed does nothing; the append itself is all or nothing.
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        raise StatusError(
            PlainStatus(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded before the move")
        )


def _event_of(outcome: TableOutcome, event_type: type[Any]) -> Any:
    for recorded in outcome.events:
        if recorded.type == event_type.TYPE:
            return domain_events.DEFAULT_CODEC.decode(
                recorded.type, recorded.schema_version, recorded.data
            )
    raise RuntimeError(f"the call recorded no {event_type.TYPE}")


_DEAL_PAGE_EVENTS: Final = 32
"""Events read at once for GetDealResult (a deal of two seats has about fifteen)."""


class TableServicer(table_service_pb2_grpc.TableServiceServicer):
    """Every TableService RPC over one ``TableService`` (the store) and the players.

    Every method runs on the worker's event loop and awaits the table service (and, below it,
    the asynchronous store): no call holds a thread."""

    def __init__(
        self,
        tables: TableService,
        players: PlayerDirectory,
        feed: EventFeed,
    ) -> None:
        self._tables = tables
        self._players = players
        self._feed = feed
        self._facts: OrderedDict[uuid.UUID, views.TableFacts] = OrderedDict()
        # Seat holders of tables whose every seat is taken: a seat never changes hands once
        # taken, so a caller found here holds the seat without reading the log again.
        self._full_seats: OrderedDict[uuid.UUID, tuple[str | None, ...]] = OrderedDict()
        # Where each deal starts in its table's stream, and how far the stream was scanned, so
        # GetDealResult reads one deal's events instead of the whole stream.
        self._deal_starts: OrderedDict[uuid.UUID, tuple[int, dict[int, int]]] = OrderedDict()

    # -- shared steps ---------------------------------------------------------------------------

    async def _load(self, table_id: uuid.UUID) -> TableState:
        # TableNotFoundError is a DomainError with reason TABLE_NOT_FOUND.
        return await self._tables.load(table_id)

    async def _table_view(
        self, state: TableState, known: views.TableFacts | None = None
    ) -> table_pb2.Table:
        assert state.table_id is not None
        facts = self._facts.get(state.table_id, known)
        if facts is None:
            first = await self._tables.events(state.table_id, 1, to_version=1)  # not the whole log
            facts = views.facts_from_first_event(first[0])
            _bounded_put(self._facts, state.table_id, facts)
        names = await self._players.display_names(state.seats)
        return views.table_message(state, facts, names)

    async def _seat_holder(self, seat_field: str) -> tuple[uuid.UUID, int, str]:
        """The table and seat of a seat name, checked to be the caller's own."""
        seat = resources.parse_seat(seat_field)
        player_id = _player_only(auth.current_caller())
        holders = self._full_seats.get(seat.table_id)
        if (
            holders is not None
            and 0 <= seat.seat < len(holders)
            and holders[seat.seat] == player_id
        ):
            return seat.table_id, seat.seat, player_id  # the seat is the caller's for good
        state = await self._load(seat.table_id)
        if state.seats and None not in state.seats:
            _bounded_put(self._full_seats, seat.table_id, state.seats)
        if not 0 <= seat.seat < state.seat_count:
            raise ApiError(
                "UNKNOWN_SEAT",
                f"seat {seat.seat} does not exist; the table has seats 0 to {state.seat_count - 1}",
                field="seat",
            )
        if state.seats[seat.seat] != player_id:
            raise ApiError("NOT_YOUR_SEAT", f"you do not hold seat {seat.seat} at this table")
        return seat.table_id, seat.seat, player_id

    # -- standard methods -----------------------------------------------------------------------

    async def CreateTable(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.CreateTableRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.CreateTableResponse:
        """Create a table with a preset, a full rule set or the base game."""
        request_id = resources.scoped_request_id("CreateTable", request.request_id)
        which = request.WhichOneof("rules")
        rule_set = views.rule_set_for_request(
            request.rule_set_preset if which == "rule_set_preset" else None,
            request.rule_set if which == "rule_set" else None,
            request.series_length if request.HasField("series_length") else None,
        )
        actor = _player_or_operator(auth.current_caller())
        _check_deadline(context)
        after_series = _AFTER_SERIES.get(int(request.after_series))
        if after_series is None:
            raise ApiError("INVALID_ARGUMENT", "unknown after_series", field="after_series")
        outcome = await self._tables.create_table(
            rule_set,
            request.seat_count,
            actor,
            request_id,
            after_series,
            request_digest=request_digest(request),
        )
        created = fold([self._tables.decode(recorded) for recorded in outcome.events])
        return table_service_pb2.CreateTableResponse(
            table=await self._table_view(created), receipt=receipt_message(outcome.receipt)
        )

    async def GetTable(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.GetTableRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.GetTableResponse:
        """A table's public state."""
        state = await self._load(resources.parse_table(request.name, "name"))
        return table_service_pb2.GetTableResponse(table=await self._table_view(state))

    async def ListTables(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.ListTablesRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.ListTablesResponse:
        """A page of tables, newest first, optionally in one status."""
        page_size = request.page_size or DEFAULT_PAGE_SIZE
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ApiError(
                "BAD_PAGE_SIZE", f"page_size must be 0 to {MAX_PAGE_SIZE}", field="page_size"
            )
        status = int(request.status)
        if status not in table_pb2.TableStatus.values():
            raise ApiError("INVALID_ARGUMENT", "unknown table status", field="status")
        after = _decode_page_token(request.page_token, status)
        listed = await self._tables.list_tables(_STATUS_PHASES.get(status), after, page_size + 1)
        tables = [
            await self._table_view(item.state, views.TableFacts(item.created_by, item.created_at))
            for item in listed[:page_size]
        ]
        next_token = ""
        if len(listed) > page_size:
            last = listed[page_size - 1]
            assert last.state.table_id is not None
            next_token = _encode_page_token(status, last.created_at, last.state.table_id)
        return table_service_pb2.ListTablesResponse(tables=tables, next_page_token=next_token)

    # -- seating and dealing --------------------------------------------------------------------

    async def JoinTable(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.JoinTableRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.JoinTableResponse:
        """Take a seat (the lowest free one unless one is named)."""
        player_id = _player_only(auth.current_caller())
        request_id = resources.scoped_request_id("JoinTable", request.request_id)
        table_id = resources.parse_table(request.table, "table")
        _check_deadline(context)
        seat = request.seat if request.HasField("seat") else None
        outcome = await self._tables.join(
            table_id,
            player_id,
            seat,
            request_id,
            expected_version=_expected_version(request),
            request_digest=request_digest(request),
        )
        seated = _event_of(outcome, domain_events.PlayerSeated)
        return table_service_pb2.JoinTableResponse(
            seat=resources.seat_name(table_id, seated.seat),
            version=outcome.version,
            receipt=receipt_message(outcome.receipt),
        )

    async def ChooseDealer(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.ChooseDealerRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.ChooseDealerResponse:
        """Draw the first dealer by lot (normally done as the last seat fills)."""
        request_id = resources.scoped_request_id("ChooseDealer", request.request_id)
        table_id = resources.parse_table(request.table, "table")
        actor = _player_or_operator(auth.current_caller())
        _check_deadline(context)
        outcome = await self._tables.choose_dealer(
            table_id,
            actor,
            request_id,
            expected_version=_expected_version(request),
            request_digest=request_digest(request),
        )
        chosen = _event_of(outcome, domain_events.DealerChosen)
        return table_service_pb2.ChooseDealerResponse(
            dealer_seat=resources.seat_name(table_id, chosen.dealer),
            version=outcome.version,
            receipt=receipt_message(outcome.receipt),
        )

    async def StartDeal(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.StartDealRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.StartDealResponse:
        """Start the next deal; only the seed's commitment is published."""
        request_id = resources.scoped_request_id("StartDeal", request.request_id)
        table_id = resources.parse_table(request.table, "table")
        actor = _player_or_operator(auth.current_caller())
        _check_deadline(context)
        outcome = await self._tables.start_deal(
            table_id,
            actor,
            request_id,
            expected_version=_expected_version(request),
            request_digest=request_digest(request),
        )
        started = _event_of(outcome, domain_events.DealStarted)
        return table_service_pb2.StartDealResponse(
            deal=resources.deal_name(table_id, started.deal_number),
            seed_commitment=bytes.fromhex(started.seed_commitment),
            version=outcome.version,
            receipt=receipt_message(outcome.receipt),
        )

    async def ContributeEntropy(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.ContributeEntropyRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.ContributeEntropyResponse:
        """Mix the seat's bytes into the shuffle."""
        request_id = resources.scoped_request_id("ContributeEntropy", request.request_id)
        table_id, _, player_id = await self._seat_holder(request.seat)
        _check_deadline(context)
        outcome = await self._tables.contribute_entropy(
            table_id,
            player_id,
            request.entropy,
            request_id,
            expected_version=_expected_version(request),
            request_digest=request_digest(request),
        )
        return table_service_pb2.ContributeEntropyResponse(
            version=outcome.version, receipt=receipt_message(outcome.receipt)
        )

    async def CutDeck(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.CutDeckRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.CutDeckResponse:
        """Cut, and deal."""
        request_id = resources.scoped_request_id("CutDeck", request.request_id)
        table_id, _, player_id = await self._seat_holder(request.seat)
        _check_deadline(context)
        outcome = await self._tables.cut(
            table_id,
            player_id,
            request.position,
            request_id,
            expected_version=_expected_version(request),
            request_digest=request_digest(request),
        )
        return table_service_pb2.CutDeckResponse(
            version=outcome.version, receipt=receipt_message(outcome.receipt)
        )

    async def GetMyHand(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.GetMyHandRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.GetMyHandResponse:
        """The caller's own 13 cards."""
        table_id, seat, player_id = await self._seat_holder(request.seat)
        hand = await self._tables.own_hand(
            table_id, player_id
        )  # one read: the cards name their deal
        if hand.seat != seat:  # the seat changed hands between the two reads: impossible today
            raise ApiError("NOT_YOUR_SEAT", f"you do not hold seat {seat} at this table")
        return table_service_pb2.GetMyHandResponse(
            deal=resources.deal_name(table_id, hand.deal_number),
            cards=[str(card) for card in sorted(hand.cards)],
        )

    # -- arranging and revealing ----------------------------------------------------------------

    async def CommitArrangement(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.CommitArrangementRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.CommitArrangementResponse:
        """Record the seat's commitment (the hash only)."""
        request_id = resources.scoped_request_id("CommitArrangement", request.request_id)
        table_id, _, player_id = await self._seat_holder(request.seat)
        _check_deadline(context)
        signature = _signature(request)
        keys = await self._players.keys_of(player_id, signature.public_key if signature else None)
        outcome = await self._tables.commit(
            table_id,
            player_id,
            request.commitment,
            request_id,
            expected_version=_expected_version(request),
            request_digest=request_digest(request),
            deal_number=_deal_number(request),
            scheme=request.commitment_scheme or 1,
            signature=signature,
            player_keys=keys,
        )
        return table_service_pb2.CommitArrangementResponse(
            version=outcome.version, receipt=receipt_message(outcome.receipt)
        )

    async def ConfirmArrangement(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.ConfirmArrangementRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.ConfirmArrangementResponse:
        """Lock the seat's last commitment."""
        request_id = resources.scoped_request_id("ConfirmArrangement", request.request_id)
        table_id, _, player_id = await self._seat_holder(request.seat)
        _check_deadline(context)
        outcome = await self._tables.confirm(
            table_id,
            player_id,
            request_id,
            expected_version=_expected_version(request),
            request_digest=request_digest(request),
            deal_number=_deal_number(request),
        )
        return table_service_pb2.ConfirmArrangementResponse(
            version=outcome.version, receipt=receipt_message(outcome.receipt)
        )

    async def RevealArrangement(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.RevealArrangementRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.RevealArrangementResponse:
        """Show the committed rows and nonce; the last reveal also scores the deal."""
        request_id = resources.scoped_request_id("RevealArrangement", request.request_id)
        arrangement = _arrangement(request.arrangement)
        table_id, _, player_id = await self._seat_holder(request.seat)
        _check_deadline(context)
        signature = _signature(request)
        keys = await self._players.keys_of(player_id, signature.public_key if signature else None)
        outcome = await self._tables.reveal(
            table_id,
            player_id,
            arrangement,
            request.nonce,
            request_id,
            expected_version=_expected_version(request),
            request_digest=request_digest(request),
            deal_number=_deal_number(request),
            signature=signature,
            player_keys=keys,
        )
        return table_service_pb2.RevealArrangementResponse(
            version=outcome.version, receipt=receipt_message(outcome.receipt)
        )

    # -- results and the live feed --------------------------------------------------------------

    async def GetDealResult(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.GetDealResultRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.GetDealResultResponse:
        """One deal's public record so far."""
        name = resources.parse_deal(request.name)
        state, recorded = await self._deal_events(name.table_id, name.deal_number)
        facts = views.gather_deal(
            (self._tables.decode(event) for event in recorded), name.deal_number
        )
        if facts is None:
            raise ApiError("DEAL_NOT_FOUND", f"no deal {request.name}", field="name")
        caller = auth.current_caller()
        viewer = views.Viewer.of(state, caller.player_id, operator=caller.is_operator)
        return table_service_pb2.GetDealResultResponse(
            result=views.deal_result_message(name.table_id, state.seat_count, facts, viewer)
        )

    async def _deal_events(
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
            state = await self._load(table_id)
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
                table_id, first, to_version=first + _DEAL_PAGE_EVENTS - 1
            )
            for recorded in page:
                if recorded.version > start and recorded.type == domain_events.DealStarted.TYPE:
                    return deal
                deal.append(recorded)
            if len(page) < _DEAL_PAGE_EVENTS:
                return deal
            first += _DEAL_PAGE_EVENTS

    async def WatchTable(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.WatchTableRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[table_service_pb2.WatchTableResponse]:
        """The table's public events after ``after_version``, then live (``sapsam.api.watch``)."""
        table_id = resources.parse_table(request.table, "table")
        if request.after_version < 0:
            raise ApiError("INVALID_ARGUMENT", "after_version must be 0 or more", "after_version")
        feed = self._feed
        stream_id = stream_id_for(table_id)
        if not feed.has_events(stream_id):  # else another watcher here has seen it exists
            await self._load(table_id)  # NOT_FOUND before the stream starts
        responses = watch(
            feed,
            stream_id,
            lambda: TableChannel(self._tables, table_id, feed, feed.buffer_limit),
            request.after_version,
        )
        async for response in responses:
            yield response


def _bounded_put(cache: OrderedDict[uuid.UUID, Any], key: uuid.UUID, value: Any) -> None:
    # Callers hold the servicer's lock. The least recently stored entries go first.
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > CACHE_TABLES:
        cache.popitem(last=False)


def _arrangement(message: table_pb2.Arrangement) -> Arrangement:
    rows = []
    for row_name in ("front", "middle", "back"):
        try:
            rows.append(parse_cards(list(getattr(message, row_name))))
        except CardError as error:
            raise ApiError("BAD_CARDS", str(error), field=f"arrangement.{row_name}") from None
    return Arrangement(rows[0], rows[1], rows[2])


def _is_plain_text(text: str, max_length: int) -> bool:
    return len(text) <= max_length and text.isascii() and text.isprintable()


def _encode_page_token(status: int, created_at: str, table_id: uuid.UUID) -> str:
    text = json.dumps({"s": status, "c": created_at, "t": str(table_id)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode()


def _decode_page_token(token: str, status: int) -> tuple[str, uuid.UUID] | None:
    if not token:
        return None
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
        if decoded["s"] != status:
            raise ValueError("the filter changed")
        created_at, table_id = decoded["c"], decoded["t"]
        # The token reaches SQL: only what this server writes there (an ASCII timestamp; NUL or
        # a lone surrogate would fail in the driver or the database, not as a bad token).
        if not isinstance(created_at, str) or not _is_plain_text(created_at, 64):
            raise ValueError("not a creation time")
        if not isinstance(table_id, str):  # uuid.UUID(5) raises AttributeError
            raise ValueError("not a table id")
        return created_at, uuid.UUID(table_id)
    # RecursionError: a token of deeply nested JSON (json gives up on the depth).
    except (ValueError, RecursionError, KeyError, TypeError, binascii.Error):
        raise ApiError(
            "BAD_PAGE_TOKEN",
            "page_token is not one this server issued for this filter",
            field="page_token",
        ) from None

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

The seats' moves in a deal (the closed game's and the open face's) are ``sapsam.api.seat_moves``,
which this servicer inherits. The requests' common parts are read in ``sapsam.api.table_requests``;
the reads that lean on facts that never change (creator, deal starts) are
``sapsam.app.table_reads``.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator
from functools import partial
from typing import Final

import grpc

from sapsam.api import auth, resources, views
from sapsam.api.api_error import ApiError
from sapsam.api.deal_history import list_my_deals
from sapsam.api.deal_results import DealResults
from sapsam.api.live_feed import EventFeed
from sapsam.api.open_face_messages import (
    open_face_deal_message,
)
from sapsam.api.players import PlayerDirectory
from sapsam.api.preset_list import ALL_PRESETS, PRESET_NAMES
from sapsam.api.receipt_messages import with_receipt
from sapsam.api.request_digest import request_digest
from sapsam.api.seat_moves import SeatMoves
from sapsam.api.stream_channels import TableChannel, table_events_batch
from sapsam.api.table_requests import (
    AFTER_SERIES,
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    STATUS_PHASES,
    call_terms,
    check_deadline,
    deal_number,
    decode_page_token,
    encode_page_token,
    event_of,
    player_only,
    player_or_operator,
)
from sapsam.api.watch import watch
from sapsam.app.table_reads import TableReads
from sapsam.app.tables import TableService, stream_id_for
from sapsam.domain import events as domain_events
from sapsam.domain.table import TableState, fold
from sapsam.rules.cards import card_texts
from sapsam.rules.open_face.parameters import MAX_MOVE_SECONDS
from sapsam.rules.open_face.presets import OPEN_FACE_PRESETS, PINEAPPLE_PRESETS
from sapsam.rules.ruleset import missing_deadlines
from sapsam_proto.v1 import open_face_pb2, table_pb2, table_service_pb2

_TABLE_PRESETS: Final = {**OPEN_FACE_PRESETS, **PINEAPPLE_PRESETS}
"""The open-face presets CreateTable takes by name: classic open face's and Pineapple's."""


class TableServicer(SeatMoves):
    """Every TableService RPC over one ``TableService`` (the store) and the players.

    Every method runs on the worker's event loop and awaits the table service (and, below it,
    the asynchronous store): no call holds a thread. The seats' moves in a deal are
    ``sapsam.api.seat_moves``'s."""

    def __init__(
        self,
        tables: TableService,
        players: PlayerDirectory,
        feed: EventFeed,
    ) -> None:
        self._tables = tables
        self.tables = tables
        """The table service it serves (a demo chooses a deal's seed source on it)."""
        self._players = players
        self._feed = feed
        self._reads = TableReads(tables)
        self._deal_results = DealResults(tables, self._reads)

    # -- shared steps ---------------------------------------------------------------------------

    async def _load(self, table_id: uuid.UUID) -> TableState:
        # TableNotFoundError is a DomainError with reason TABLE_NOT_FOUND.
        return await self._tables.load(table_id)

    async def _table_view(
        self, state: TableState, known: views.TableFacts | None = None
    ) -> table_pb2.Table:
        assert state.table_id is not None
        facts = known
        if facts is None:
            facts = views.facts_from_first_event(await self._reads.first_event(state.table_id))
        names = await self._players.display_names(state.seats)
        return views.table_message_of_any_family(state, facts, names)

    # -- standard methods -----------------------------------------------------------------------

    async def CreateTable(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.CreateTableRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.CreateTableResponse:
        """Create a table with a preset, a full rule set or the base game."""
        request_id = resources.scoped_request_id("CreateTable", request.request_id)
        which = request.WhichOneof("rules")
        if which == "rule_set_preset" and request.rule_set_preset in _TABLE_PRESETS:
            return await self._create_open_face_table(request, request_id, context)
        if request.HasField("move_seconds"):
            raise ApiError(
                "BAD_RULE_SET",
                "move_seconds is an open-face table's (rule_set_preset names an open-face "
                f"preset: {', '.join(_TABLE_PRESETS)})",
                field="move_seconds",
            )
        rule_set = views.rule_set_for_request(
            request.rule_set_preset if which == "rule_set_preset" else None,
            request.rule_set if which == "rule_set" else None,
            request.series_length if request.HasField("series_length") else None,
            request.rule_set_overrides if request.HasField("rule_set_overrides") else None,
        )
        actor = player_or_operator(auth.current_caller())
        check_deadline(context)
        after_series = AFTER_SERIES.get(int(request.after_series))
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
        created: TableState = fold([self._tables.decode(recorded) for recorded in outcome.events])
        return with_receipt(
            table_service_pb2.CreateTableResponse(
                table=await self._table_view(created), warnings=missing_deadlines(created.rule_set)
            ),
            outcome.receipt,
        )

    async def _create_open_face_table(
        self,
        request: table_service_pb2.CreateTableRequest,
        request_id: str,
        context: grpc.ServicerContext,
    ) -> table_service_pb2.CreateTableResponse:
        """CreateTable with an open-face preset (and, optionally, its move time)."""
        for name in ("series_length", "rule_set_overrides"):
            if request.HasField(name):
                raise ApiError(
                    "BAD_RULE_SET",
                    f"{name} does not apply to an open-face table: its set has as many deals "
                    "as seats and its rules are the preset's",
                    field=name,
                )
        if int(request.after_series) not in (
            table_service_pb2.AFTER_SERIES_UNSPECIFIED,
            table_service_pb2.AFTER_SERIES_CLOSE,
        ):
            raise ApiError(
                "INVALID_ARGUMENT",
                "an open-face table closes with its set: after_series must be unset or "
                "AFTER_SERIES_CLOSE",
                field="after_series",
            )
        rules = _TABLE_PRESETS[request.rule_set_preset]
        if request.HasField("move_seconds"):
            if not 1 <= request.move_seconds <= MAX_MOVE_SECONDS:
                raise ApiError(
                    "BAD_RULE_SET",
                    f"move_seconds must be 1 to {MAX_MOVE_SECONDS}",
                    field="move_seconds",
                )
            rules = dataclasses.replace(rules, move_seconds=request.move_seconds)
        if not rules.min_seats <= request.seat_count <= rules.max_seats:
            raise ApiError(
                "BAD_SEAT_COUNT",
                f"{rules.name} is played by {rules.min_seats} to {rules.max_seats} seats",
                field="seat_count",
            )
        actor = player_or_operator(auth.current_caller())
        check_deadline(context)
        outcome = await self._tables.create_table(
            rules,
            request.seat_count,
            actor,
            request_id,
            request_digest=request_digest(request),
        )
        created: TableState = fold([self._tables.decode(recorded) for recorded in outcome.events])
        return with_receipt(
            table_service_pb2.CreateTableResponse(table=await self._table_view(created)),
            outcome.receipt,
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
        after = decode_page_token(request.page_token, status)
        listed = await self._tables.list_tables(STATUS_PHASES.get(status), after, page_size + 1)
        tables = [
            await self._table_view(item.state, views.TableFacts(item.created_by, item.created_at))
            for item in listed[:page_size]
        ]
        next_token = ""
        if len(listed) > page_size:
            last = listed[page_size - 1]
            assert last.state.table_id is not None
            next_token = encode_page_token(status, last.created_at, last.state.table_id)
        return table_service_pb2.ListTablesResponse(tables=tables, next_page_token=next_token)

    async def ListRuleSets(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.ListRuleSetsRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.ListRuleSetsResponse:
        """A page of the preset rule sets, with their descriptions and every parameter. The
        token is the name of the first preset of the next page."""
        page_size = request.page_size or DEFAULT_PAGE_SIZE
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ApiError(
                "BAD_PAGE_SIZE", f"page_size must be 0 to {MAX_PAGE_SIZE}", field="page_size"
            )
        presets, names = ALL_PRESETS, PRESET_NAMES
        if request.page_token and request.page_token not in names:
            raise ApiError("BAD_PAGE_TOKEN", "not a page token of ListRuleSets", field="page_token")
        start = names.index(request.page_token) if request.page_token else 0
        page = presets[start : start + page_size]
        after = start + page_size
        next_token = names[after] if after < len(names) else ""
        return table_service_pb2.ListRuleSetsResponse(presets=page, next_page_token=next_token)

    async def ListMyDeals(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.ListMyDealsRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.ListMyDealsResponse:
        """A page of the calling player's scored deals (``sapsam.api.deal_history``)."""
        return await list_my_deals(self._tables, request)

    # -- seating and dealing --------------------------------------------------------------------

    async def JoinTable(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.JoinTableRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.JoinTableResponse:
        """Take a seat (the lowest free one unless one is named)."""
        player_id = player_only(auth.current_caller())
        request_id = resources.scoped_request_id("JoinTable", request.request_id)
        table_id = resources.parse_table(request.table, "table")
        check_deadline(context)
        seat = request.seat if request.HasField("seat") else None
        outcome = await self._tables.join(
            table_id,
            player_id,
            seat,
            request_id,
            **call_terms(request),
        )
        seated = event_of(outcome, domain_events.PlayerSeated)
        return with_receipt(
            table_service_pb2.JoinTableResponse(
                seat=resources.seat_name(table_id, seated.seat), version=outcome.version
            ),
            outcome.receipt,
        )

    async def ChooseDealer(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.ChooseDealerRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.ChooseDealerResponse:
        """Draw the first dealer by lot (normally done as the last seat fills)."""
        request_id = resources.scoped_request_id("ChooseDealer", request.request_id)
        table_id = resources.parse_table(request.table, "table")
        actor = player_or_operator(auth.current_caller())
        check_deadline(context)
        outcome = await self._tables.choose_dealer(
            table_id,
            actor,
            request_id,
            **call_terms(request),
        )
        chosen = event_of(outcome, domain_events.DealerChosen)
        return with_receipt(
            table_service_pb2.ChooseDealerResponse(
                dealer_seat=resources.seat_name(table_id, chosen.dealer), version=outcome.version
            ),
            outcome.receipt,
        )

    async def StartDeal(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.StartDealRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.StartDealResponse:
        """Start the next deal; only the seed's commitment is published."""
        request_id = resources.scoped_request_id("StartDeal", request.request_id)
        table_id = resources.parse_table(request.table, "table")
        actor = player_or_operator(auth.current_caller())
        check_deadline(context)
        outcome = await self._tables.start_deal(
            table_id,
            actor,
            request_id,
            **call_terms(request),
        )
        started = event_of(outcome, domain_events.DealStarted)
        return with_receipt(
            table_service_pb2.StartDealResponse(
                deal=resources.deal_name(table_id, started.deal_number),
                seed_commitment=bytes.fromhex(started.seed_commitment),
                version=outcome.version,
            ),
            outcome.receipt,
        )

    async def GetMyHand(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.GetMyHandRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.GetMyHandResponse:
        """The caller's own 13 cards."""
        seated = await self._seat_holder(request.seat)
        table_id, seat = seated.table_id, seated.seat
        hand = await self._tables.own_hand(table_id, seated.player_id)  # one read: its deal's cards
        if hand.seat != seat:  # the seat changed hands between the two reads (SeatReplaced)
            raise ApiError("NOT_YOUR_SEAT", f"you do not hold seat {seat} at this table")
        response = table_service_pb2.GetMyHandResponse(
            deal=resources.deal_name(table_id, hand.deal_number),
            cards=card_texts(sorted(hand.cards)),
            my_discards=card_texts(hand.discards),
        )
        if hand.open_face is not None:  # the deal as the domain lets this seat see it
            response.open_face.CopyFrom(open_face_deal_message(table_id, hand.open_face))
        return response

    async def GetSuggestion(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.GetSuggestionRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.GetSuggestionResponse:
        """The solver's suggestion for the caller's own seat now (``sapsam.app.suggestions``);
        records nothing."""
        seated = await self._seat_holder(request.seat)
        check_deadline(context)
        suggested = await self._tables.suggestion(
            seated.table_id, seated.player_id, deal_number(request)
        )
        if suggested.seat != seated.seat:  # the seat changed hands between the two reads
            raise ApiError("NOT_YOUR_SEAT", f"you do not hold seat {seated.seat} at this table")
        front, middle, back = ([str(card) for card in row] for row in suggested.rows)
        response = table_service_pb2.GetSuggestionResponse(
            deal=resources.deal_name(seated.table_id, suggested.deal_number),
            natural=suggested.natural,
            discards=[str(card) for card in suggested.discards],
        )
        if suggested.whole_hand:
            response.arrangement.CopyFrom(
                table_pb2.Arrangement(front=front, middle=middle, back=back)
            )
        else:
            response.placement.CopyFrom(
                open_face_pb2.OpenFaceRows(front=front, middle=middle, back=back)
            )
        if suggested.street is not None:
            response.street = suggested.street
        return response

    # -- results and the live feed --------------------------------------------------------------

    async def GetDealResult(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.GetDealResultRequest, context: grpc.ServicerContext
    ) -> table_service_pb2.GetDealResultResponse:
        """One deal's public record so far."""
        name = resources.parse_deal(request.name)
        caller = auth.current_caller()
        result = await self._deal_results.result(
            name.table_id, name.deal_number, caller.player_id, caller.is_operator
        )
        if result is None:
            raise ApiError("DEAL_NOT_FOUND", f"no deal {request.name}", field="name")
        return table_service_pb2.GetDealResultResponse(result=result)

    def WatchTable(  # noqa: N802 - the generated method name
        self, request: table_service_pb2.WatchTableRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[table_service_pb2.WatchTableResponse]:
        """The table's public events after ``after_version``, then live (``sapsam.api.watch``),
        one a message or, with ``batch_events``, those ready at once in one message: the
        stream ``watch`` makes, handed to grpc as it is (a plain method, not a generator of
        its own, so that a response passes one generator less)."""
        table_id = resources.parse_table(request.table, "table")
        if request.after_version < 0:
            raise ApiError("INVALID_ARGUMENT", "after_version must be 0 or more", "after_version")
        feed = self._feed
        stream_id = stream_id_for(table_id)
        return watch(
            feed,
            stream_id,
            lambda: TableChannel(self._tables, table_id, feed, feed.buffer_limit),
            request.after_version,
            auth.current_caller().player_id,  # a seat's holder is sent its own cards
            table_events_batch if request.batch_events else None,
            # NOT_FOUND before the stream starts, unless another watcher here has seen it exists
            None if feed.has_events(stream_id) else partial(self._load, table_id),
        )

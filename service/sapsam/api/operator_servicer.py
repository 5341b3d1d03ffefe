"""The OperatorService: the operator's console over the tables (docs/api.md, "Operator
commands"). Thin: convert the request, call the table service (``sapsam.app.operator_commands``,
``sapsam.app.operator_queries``), convert the answer. Only the operator reaches these methods
(``sapsam.api.access``: OPERATOR_ONLY is decided before the request is read).
"""

from __future__ import annotations

import uuid
from typing import Final

import grpc

from sapsam.api import resources, views
from sapsam.api.api_error import ApiError
from sapsam.api.common_messages import timestamp_from_ms
from sapsam.api.players import PlayerDirectory
from sapsam.api.receipt_messages import receipt_message
from sapsam.api.request_digest import request_digest
from sapsam.api.table_messages import PHASE_TO_WIRE
from sapsam.api.table_requests import check_deadline
from sapsam.app.operator_queries import ANYONE, MAX_LISTED, SEATS, SERVICE, AwaitedTable
from sapsam.app.table_reads import TableReads
from sapsam.app.tables import TableService
from sapsam.domain.events import DealVoided
from sapsam.domain.open_face.table_state import OpenFaceTablePhase
from sapsam_proto.v1 import operator_service_pb2, operator_service_pb2_grpc, table_pb2

OPEN_FACE_PLAYING: Final = OpenFaceTablePhase.PLAYING.value
MAX_WAITING_SECONDS: Final = 10_000_000
"""Most seconds ``GetStuckTables.waiting_longer_than_seconds`` may ask for (about 116 days)."""

_AWAITING_TO_WIRE: Final = {
    SEATS: operator_service_pb2.AWAITING_SEATS,
    ANYONE: operator_service_pb2.AWAITING_ANYONE,
    SERVICE: operator_service_pb2.AWAITING_SERVICE,
}
_READ_MODEL_PHASES: Final = {
    **{phase.value: wire for phase, wire in PHASE_TO_WIRE.items()},
    # An open-face table's deal in play (its streets and placements; issue #18).
    OPEN_FACE_PLAYING: table_pb2.TABLE_PHASE_PLAYING,
}
"""The read model's phase names (``table_state.phase``) on the wire."""
_PHASE_FROM_WIRE: Final = {wire: phase for phase, wire in _READ_MODEL_PHASES.items()}


def awaited_table_message(table: AwaitedTable, now_ms: int) -> operator_service_pb2.AwaitedTable:
    """One line of the operator's lists, on the wire."""
    message = operator_service_pb2.AwaitedTable(
        table=resources.table_name(table.table_id),
        phase=_READ_MODEL_PHASES.get(table.phase, table_pb2.TABLE_PHASE_UNSPECIFIED),
        deal_number=table.deal_number,
        awaiting=_AWAITING_TO_WIRE[table.awaiting],
        seats=table.seats,
        players=[
            "" if player is None else resources.player_name(player) for player in table.players
        ],
        waiting_since=timestamp_from_ms(table.waiting_since_ms),
        past_deadline=table.past_deadline(now_ms),
        held=table.held or "",
    )
    if table.deadline_ms is not None:
        message.deadline_time.CopyFrom(timestamp_from_ms(table.deadline_ms))
    return message


class OperatorServicer(operator_service_pb2_grpc.OperatorServiceServicer):
    """Every OperatorService RPC over one ``TableService``."""

    def __init__(self, tables: TableService, players: PlayerDirectory) -> None:
        self._tables = tables
        self._players = players
        self._reads = TableReads(tables)

    async def GetAwaitedTables(  # noqa: N802 - the generated method name
        self, request: operator_service_pb2.GetAwaitedTablesRequest, context: grpc.ServicerContext
    ) -> operator_service_pb2.GetAwaitedTablesResponse:
        """The tables not complete (or in the phases asked for), longest waiting first."""
        limit = request.limit or MAX_LISTED
        if not 1 <= limit <= MAX_LISTED:
            raise ApiError("INVALID_ARGUMENT", f"limit must be 0 to {MAX_LISTED}", field="limit")
        if len(request.phases) > len(_PHASE_FROM_WIRE):
            raise ApiError(
                "INVALID_ARGUMENT",
                f"name at most {len(_PHASE_FROM_WIRE)} phases",
                field="phases",
            )
        phases = []
        for wire in request.phases:
            phase = _PHASE_FROM_WIRE.get(wire)
            if phase is None:
                raise ApiError("INVALID_ARGUMENT", "unknown table phase", field="phases")
            phases.append(phase)
        check_deadline(context)
        tables = await self._tables.awaited_tables(phases or None, limit)
        now = self._tables.clock()
        return operator_service_pb2.GetAwaitedTablesResponse(
            tables=[awaited_table_message(table, now) for table in tables]
        )

    async def GetStuckTables(  # noqa: N802 - the generated method name
        self, request: operator_service_pb2.GetStuckTablesRequest, context: grpc.ServicerContext
    ) -> operator_service_pb2.GetStuckTablesResponse:
        """The tables past their deadline, or waiting longer than the threshold; the held
        ones (a paused tournament's) apart."""
        threshold_ms = None
        if request.HasField("waiting_longer_than_seconds"):
            seconds = request.waiting_longer_than_seconds
            if not 1 <= seconds <= MAX_WAITING_SECONDS:
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"waiting_longer_than_seconds must be 1 to {MAX_WAITING_SECONDS:,}",
                    field="waiting_longer_than_seconds",
                )
            threshold_ms = seconds * 1000
        check_deadline(context)
        found = await self._tables.stuck_tables(threshold_ms)
        now = self._tables.clock()
        return operator_service_pb2.GetStuckTablesResponse(
            tables=[awaited_table_message(table, now) for table in found.stuck],
            held=[awaited_table_message(table, now) for table in found.held],
        )

    async def ForceSeatTimeout(  # noqa: N802 - the generated method name
        self, request: operator_service_pb2.ForceSeatTimeoutRequest, context: grpc.ServicerContext
    ) -> operator_service_pb2.ForceSeatTimeoutResponse:
        """Time one seat out now, with the events its deadline would have recorded."""
        request_id = resources.scoped_request_id("ForceSeatTimeout", request.request_id)
        table_id = resources.parse_table(request.table, "table")
        check_deadline(context)
        outcome = await self._tables.force_time_out(
            table_id, request.seat, request_id, request_digest=request_digest(request)
        )
        return operator_service_pb2.ForceSeatTimeoutResponse(
            table=await self.table_message(table_id), receipt=receipt_message(outcome.receipt)
        )

    async def VoidDeal(  # noqa: N802 - the generated method name
        self, request: operator_service_pb2.VoidDealRequest, context: grpc.ServicerContext
    ) -> operator_service_pb2.VoidDealResponse:
        """Void the deal in progress, publishing its seed."""
        request_id = resources.scoped_request_id("VoidDeal", request.request_id)
        deal = resources.parse_deal(request.deal, "deal")
        check_deadline(context)
        outcome = await self._tables.void_deal(
            deal.table_id,
            request.reason,
            request_id,
            deal_number=deal.deal_number,
            request_digest=request_digest(request),
        )
        voided = next(
            self._tables.decode(recorded)
            for recorded in outcome.events
            if recorded.type == DealVoided.TYPE
        )
        assert isinstance(voided, DealVoided)
        return operator_service_pb2.VoidDealResponse(
            table=await self.table_message(deal.table_id),
            seed=bytes.fromhex(voided.seed),
            receipt=receipt_message(outcome.receipt),
        )

    async def ReplaceSeat(  # noqa: N802 - the generated method name
        self, request: operator_service_pb2.ReplaceSeatRequest, context: grpc.ServicerContext
    ) -> operator_service_pb2.ReplaceSeatResponse:
        """Give a seat to another player between deals."""
        request_id = resources.scoped_request_id("ReplaceSeat", request.request_id)
        seat = resources.parse_seat(request.seat, "seat")
        player_id = str(resources.parse_player(request.player, "player"))
        if await self._players.get(player_id) is None:
            raise ApiError("PLAYER_NOT_FOUND", "no such player", field="player")
        check_deadline(context)
        outcome = await self._tables.replace_seat(
            seat.table_id, seat.seat, player_id, request_id, request_digest=request_digest(request)
        )
        return operator_service_pb2.ReplaceSeatResponse(
            table=await self.table_message(seat.table_id), receipt=receipt_message(outcome.receipt)
        )

    async def table_message(self, table_id: uuid.UUID) -> table_pb2.Table:
        """The table as GetTable shows it now."""
        state = await self._tables.load(table_id)
        facts = views.facts_from_first_event(await self._reads.first_event(table_id))
        names = await self._players.display_names(state.seats)
        return views.table_message_of_any_family(state, facts, names)


def add_operator_service(servicer: OperatorServicer | None, server: grpc.aio.Server) -> None:
    """Register the servicer on a server (nothing when there is none)."""
    if servicer is not None:
        operator_service_pb2_grpc.add_OperatorServiceServicer_to_server(servicer, server)

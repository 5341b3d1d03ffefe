"""The AuditService servicer: export, verify and replay deals over gRPC.

Each RPC parses the deal's name, applies the caller's export rights (``sapsam.audit``: a player,
finished deals of their own tables; the operator, anything, never a secret), calls the audit
library and maps the result to messages. Errors go through the error interceptor and its reason
table (``sapsam.api.errors``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
from psycopg_pool import AsyncConnectionPool

from sapsam.api import auth, errors, resources
from sapsam.api.interception import StatusError
from sapsam.audit import online as audit_online
from sapsam.audit.export_format import AuditExport, ExportAccessError, Requester, export_text
from sapsam.audit.export_limits import ExportLimitError, check_export_size
from sapsam.audit.replay import ReplayFrame, frame_at, replay
from sapsam.audit.report import AuditCheck, AuditReport, Status, render_text
from sapsam.audit.verifier import verify_export
from sapsam_proto.v1 import audit_pb2, audit_service_pb2, audit_service_pb2_grpc

_STATUS = {
    Status.PASSED: audit_pb2.CHECK_STATUS_PASSED,
    Status.FAILED: audit_pb2.CHECK_STATUS_FAILED,
    Status.SKIPPED: audit_pb2.CHECK_STATUS_SKIPPED,
    Status.PENDING: audit_pb2.CHECK_STATUS_PENDING,
    Status.NOT_COVERED: audit_pb2.CHECK_STATUS_NOT_COVERED,
}


def _requester() -> Requester:
    caller = auth.current_caller()
    if caller.is_operator or caller.player_id is None:
        return Requester.operator()
    return Requester.player(caller.player_id)


def _access_status(error: ExportAccessError) -> grpc.Status:
    """PERMISSION_DENIED (or NOT_FOUND) for an export the caller may not have, via the one table."""
    return errors.build_status(error.reason, error.message)


def _check_message(check: AuditCheck) -> audit_pb2.AuditCheck:
    return audit_pb2.AuditCheck(
        name=check.name,
        deal_number=check.deal or 0,
        status=_STATUS[check.status],
        detail=check.detail,
        expected=check.expected,
        found=check.found,
    )


def _report_message(report: AuditReport) -> audit_service_pb2.VerifyDealResponse:
    response = audit_service_pb2.VerifyDealResponse(
        ok=report.ok,
        complete=report.complete,
        checks=[_check_message(check) for check in report.checks],
        deals_verified=report.deals_verified,
        events_checked=report.events_checked,
        report_text=render_text(report),
    )
    first = report.first_divergence
    if first is not None:
        response.first_divergence.CopyFrom(_check_message(first))
    return response


def _verify_sent_export(text: str) -> AuditReport:
    """The report on an export sent with the request; INVALID_ARGUMENT (``EXPORT_LIMIT_EXCEEDED``,
    field ``export``) for one beyond docs/audit.md's limits, which is refused unread."""
    try:
        check_export_size(len(text))
        # Lines end at "\n" only, as the export writes them (splitlines would also cut at U+2028
        # and the like, which JSON strings may hold).
        return verify_export(text.split("\n"))
    except ExportLimitError as error:
        raise errors.ApiError("EXPORT_LIMIT_EXCEEDED", str(error), field="export") from None


def _frame_message(frame: ReplayFrame) -> audit_pb2.ReplayFrame:
    message = audit_pb2.ReplayFrame(
        version=frame.version,
        position=frame.position,
        event_type=frame.event_type,
        actor=frame.actor,
        recorded_at=frame.recorded_at,
        happened=frame.happened,
        phase=frame.phase,
        deal_number=frame.deal_number or 0,
        seats=[
            audit_pb2.ReplaySeat(
                seat=view.seat,
                player="" if view.player is None else resources.player_name(view.player),
                status=view.status,
                cards=[] if view.cards is None else view.cards.split(),
                seen_by=view.seen_by,
                arrangement=view.arrangement or "",
                series_total=view.series_total,
            )
            for view in frame.seats
        ],
    )
    if frame.dealer is not None:
        message.dealer = frame.dealer
    return message


class AuditServicer(audit_service_pb2_grpc.AuditServiceServicer):
    """ExportDeal, VerifyDeal and ReplayDeal over the event store's connection pool."""

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self._pool = pool

    async def _export(self, name: str, context: grpc.ServicerContext) -> AuditExport:
        deal = resources.parse_deal(name)
        requester = _requester()
        try:
            async with self._pool.connection() as connection:
                return await audit_online.export_deal(
                    connection, deal.table_id, deal.deal_number, requester
                )
        except ExportAccessError as error:
            raise StatusError(_access_status(error)) from None

    async def ExportDeal(  # noqa: N802 - the generated method name
        self, request: audit_service_pb2.ExportDealRequest, context: grpc.ServicerContext
    ) -> audit_service_pb2.ExportDealResponse:
        """The deal's export as JSON lines, with its segments."""
        resources.check_request_id(request.request_id)
        export = await self._export(request.name, context)
        header = export.header
        return audit_service_pb2.ExportDealResponse(
            export=export_text(export),
            segments=[
                audit_pb2.ExportSegment(
                    anchor_version=segment.anchor.version,
                    anchor_hash=segment.anchor.hash,
                    first_version=segment.first_version,
                    last_version=segment.last_version,
                    last_hash=segment.last_hash,
                )
                for segment in header.segments
            ],
            event_count=len(export.events),
            finished=bool(header.finished_deals),
        )

    async def VerifyDeal(  # noqa: N802 - the generated method name
        self, request: audit_service_pb2.VerifyDealRequest, context: grpc.ServicerContext
    ) -> audit_service_pb2.VerifyDealResponse:
        """The report on a stored deal, or on an export sent with the request."""
        resources.check_request_id(request.request_id)
        subject = request.WhichOneof("subject")
        if subject == "export":
            return _report_message(_verify_sent_export(request.export))
        if subject != "name":
            raise errors.ApiError(
                "MISSING_FIELD", "give the deal's name or an export to verify", field="name"
            )
        deal = resources.parse_deal(request.name)
        requester = _requester()
        try:
            async with self._pool.connection() as connection:
                report = await audit_online.verify_deal(
                    connection, deal.table_id, deal.deal_number, requester
                )
        except ExportAccessError as error:
            raise StatusError(_access_status(error)) from None
        return _report_message(report)

    async def ReplayDeal(  # noqa: N802 - the generated method name
        self, request: audit_service_pb2.ReplayDealRequest, context: grpc.ServicerContext
    ) -> AsyncIterator[audit_service_pb2.ReplayDealResponse]:
        """The table after each event of the deal's export (or at one version)."""
        resources.check_request_id(request.request_id)
        frames = replay(await self._export(request.name, context))
        if request.HasField("at_version"):
            frame = frame_at(frames, request.at_version)
            frames = [] if frame is None else [frame]
        for frame in frames:  # a client that leaves cancels the call, which stops here
            yield audit_service_pb2.ReplayDealResponse(frame=_frame_message(frame))


def add_audit_service(servicer: AuditServicer | None, server: grpc.aio.Server) -> None:
    """Register the servicer on a server (nothing when there is none, e.g. in shell tests)."""
    if servicer is not None:
        audit_service_pb2_grpc.add_AuditServiceServicer_to_server(servicer, server)

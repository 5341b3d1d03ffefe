"""The AuditService servicer: export, verify and replay deals over gRPC.

Each RPC parses the deal's name, applies the caller's export rights (``sapsam.audit``: a player,
finished deals of their own tables; the operator, anything, never a secret), calls the audit
library and maps the result to messages. Errors go through the error interceptor and its reason
table (``sapsam.api.errors``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from psycopg_pool import AsyncConnectionPool

from sapsam.api import auth, errors, resources
from sapsam.api.interception import StatusError
from sapsam.audit import online as audit_online
from sapsam.audit.anchoring import Trust
from sapsam.audit.deal_account import told_report
from sapsam.audit.export_format import (
    AuditExport,
    ExportAccessError,
    Requester,
    export_text,
)
from sapsam.audit.export_limits import ExportLimitError, check_export_size
from sapsam.audit.export_proofs import ANCHOR_WAIT_SECONDS
from sapsam.audit.pinned_player_keys import (
    MAX_KEYS_PER_PIN,
    PinError,
    parse_player,
    pinned_key_checks,
)
from sapsam.audit.proof_format import MAX_CHECKPOINT_CHARS
from sapsam.audit.replay import ReplayFrame, frame_at, replay
from sapsam.audit.report import AuditCheck, AuditReport, Status, Verdict
from sapsam.audit.verifier import read_and_verify
from sapsam.keys import ServerKeys
from sapsam.log.signed_note import NoteError, VerifierKey
from sapsam_proto.v1 import audit_pb2, audit_service_pb2, audit_service_pb2_grpc

_STATUS = {
    Status.PASSED: audit_pb2.CHECK_STATUS_PASSED,
    Status.FAILED: audit_pb2.CHECK_STATUS_FAILED,
    Status.SKIPPED: audit_pb2.CHECK_STATUS_SKIPPED,
    Status.PENDING: audit_pb2.CHECK_STATUS_PENDING,
    Status.NOT_COVERED: audit_pb2.CHECK_STATUS_NOT_COVERED,
}


_VERDICT = {
    Verdict.ANCHORED: audit_pb2.VERIFY_VERDICT_ANCHORED,
    Verdict.INTERNALLY_CONSISTENT_ONLY: audit_pb2.VERIFY_VERDICT_INTERNALLY_CONSISTENT_ONLY,
    Verdict.FAILED: audit_pb2.VERIFY_VERDICT_FAILED,
}
MAX_PINNED_KEYS = 16
MAX_PINNED_PLAYERS = 16
"""Players whose keys one VerifyDeal may pin (a table seats at most 4)."""
PUBLIC_KEY_BYTES = 32
MAX_KEY_CHARS = 512
DEADLINE_MARGIN_SECONDS = 0.5
"""Time kept for the export itself when waiting for a covering checkpoint within a deadline."""


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


def _report_message(
    report: AuditReport, export: AuditExport | None
) -> audit_service_pb2.VerifyDealResponse:
    """The response on ``report``; its text tells ``export`` (None: unreadable) as ``sapsam audit
    verify`` does: the players, the checks, each deal's account row by row, the verdict."""
    response = audit_service_pb2.VerifyDealResponse(
        ok=report.ok,
        complete=report.complete,
        checks=[_check_message(check) for check in report.checks],
        deals_verified=report.deals_verified,
        events_checked=report.events_checked,
        report_text=told_report(report, export),
    )
    first = report.first_divergence
    if first is not None:
        response.first_divergence.CopyFrom(_check_message(first))
    response.verdict = _VERDICT[report.verdict]
    anchor = report.anchor
    if report.verdict is Verdict.ANCHORED and anchor is not None:
        response.anchor.CopyFrom(
            audit_pb2.ExportAnchor(
                origin=anchor.origin,
                tree_size=anchor.tree_size,
                root_hash=anchor.root,
                signed_by=anchor.signed_by,
                witnessed_by=list(anchor.witnessed_by),
                caller_checkpoint=anchor.checkpoint == "reader",
            )
        )
    return response


def _pinned(values: Any, field: str) -> tuple[VerifierKey, ...]:
    """The vkeys of a request field, within their bounds; INVALID_ARGUMENT naming the field."""
    if len(values) > MAX_PINNED_KEYS:
        raise errors.ApiError("INVALID_ARGUMENT", f"at most {MAX_PINNED_KEYS} keys", field=field)
    keys = []
    for index, text in enumerate(values):
        if len(text) > MAX_KEY_CHARS:
            raise errors.ApiError(
                "INVALID_ARGUMENT", f"a key is at most {MAX_KEY_CHARS} characters", field=field
            )
        try:
            keys.append(VerifierKey.parse(text))
        except NoteError as error:
            raise errors.ApiError(
                "INVALID_ARGUMENT", f"{field}[{index}] is not a vkey: {error}", field=field
            ) from None
    return tuple(keys)


def _trust(request: audit_service_pb2.VerifyDealRequest) -> Trust:
    """What the caller pins for an export it sent (docs/audit.md §4.5)."""
    server_keys = _pinned(request.server_keys, "server_keys")
    witness_keys = _pinned(request.witness_keys, "witness_keys")
    checkpoint = request.checkpoint or None
    if checkpoint is not None:
        if len(checkpoint) > MAX_CHECKPOINT_CHARS:
            raise errors.ApiError(
                "INVALID_ARGUMENT",
                f"a checkpoint is at most {MAX_CHECKPOINT_CHARS} characters",
                field="checkpoint",
            )
        if not server_keys:
            raise errors.ApiError(
                "MISSING_FIELD",
                "a checkpoint needs the server_keys that signed it",
                field="server_keys",
            )
    return Trust(server_keys, witness_keys, checkpoint)


def _player_pins(request: audit_service_pb2.VerifyDealRequest) -> dict[str, frozenset[bytes]]:
    """The players' keys the caller pins (docs/audit.md §4.2), within their documented bounds."""
    if len(request.player_keys) > MAX_PINNED_PLAYERS:
        raise errors.ApiError(
            "INVALID_ARGUMENT",
            f"at most {MAX_PINNED_PLAYERS} players' keys may be pinned",
            field="player_keys",
        )
    pins: dict[str, frozenset[bytes]] = {}
    for pinned in request.player_keys:
        problem = ""
        try:
            player = parse_player(pinned.player)
        except PinError as error:
            problem, player = str(error), ""
        if not problem and player in pins:
            problem = f"player {player} is pinned twice"
        if not problem and not 1 <= len(pinned.public_keys) <= MAX_KEYS_PER_PIN:
            problem = f"give 1 to {MAX_KEYS_PER_PIN} public keys for player {player}"
        if not problem and any(len(key) != PUBLIC_KEY_BYTES for key in pinned.public_keys):
            problem = f"a public key is {PUBLIC_KEY_BYTES} bytes (player {player})"
        if problem:
            raise errors.ApiError("INVALID_ARGUMENT", problem, field="player_keys")
        pins[player] = frozenset(pinned.public_keys)
    return pins


def _with_player_pins(
    report: AuditReport, export: AuditExport | None, pins: dict[str, frozenset[bytes]]
) -> AuditReport:
    """``report`` with a ``pinned_player_key`` check per pinned player (none for an export that
    does not parse, None: its ``format`` check says so)."""
    if export is None:
        return report
    return report.with_checks(pinned_key_checks(export, pins))


def _verify_sent_export(text: str, trust: Trust) -> tuple[AuditExport | None, AuditReport]:
    """The export sent with the request (None: unreadable) and the report on it;
    INVALID_ARGUMENT (``EXPORT_LIMIT_EXCEEDED``, field ``export``) for one beyond docs/audit.md's
    limits, which is refused unread."""
    try:
        check_export_size(len(text))
        # Lines end at "\n" only, as the export writes them (splitlines would also cut at U+2028
        # and the like, which JSON strings may hold).
        return read_and_verify(text.split("\n"), trust=trust)
    except ExportLimitError as error:
        raise errors.ApiError("EXPORT_LIMIT_EXCEEDED", str(error), field="export") from None


def _anchor_wait(context: grpc.ServicerContext) -> float:
    """How long a call may wait for a covering checkpoint: 3 s, less within a short deadline."""
    remaining: float | None = context.time_remaining()
    if remaining is None:
        return ANCHOR_WAIT_SECONDS
    return max(0.0, min(ANCHOR_WAIT_SECONDS, remaining - DEADLINE_MARGIN_SECONDS))


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
                series_total=view.series_total or 0,  # None: not known from the export (0 here)
            )
            for view in frame.seats
        ],
    )
    if frame.dealer is not None:
        message.dealer = frame.dealer
    return message


class AuditServicer(audit_service_pb2_grpc.AuditServiceServicer):
    """ExportDeal, VerifyDeal and ReplayDeal over the event store's connection pool."""

    def __init__(
        self,
        pool: AsyncConnectionPool[Any],
        server_keys: ServerKeys | None = None,
        lagging_reads: Callable[[], AsyncConnectionPool[Any]] | None = None,
    ) -> None:
        self._primary = pool
        self._server_keys = server_keys
        self._lagging_reads = lagging_reads

    @property
    def _pool(self) -> AsyncConnectionPool[Any]:
        """Where this call reads: every audit read may lag (a deal's export is final once the
        deal is), so a standby within its bound if the server has one
        (``sapsam.store.standby_reads``), else the primary."""
        return self._primary if self._lagging_reads is None else self._lagging_reads()

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
        """The deal's export as JSON lines with its proof (docs/audit.md §2.5), its segments,
        and the versions not yet under a checkpoint."""
        resources.check_request_id(request.request_id)
        known = request.known_tree_size if request.HasField("known_tree_size") else None
        if known is not None and known < 1:
            raise errors.ApiError(
                "BAD_TREE_SIZE", "known_tree_size is at least 1", field="known_tree_size"
            )
        deal = resources.parse_deal(request.name)
        try:
            _, proven = await audit_online.proven_deal(
                self._pool,
                deal.table_id,
                deal.deal_number,
                _requester(),
                _anchor_wait(context),
                known,
            )
        except ExportAccessError as error:
            raise StatusError(_access_status(error)) from None
        export = proven.export
        header = export.header
        return audit_service_pb2.ExportDealResponse(
            checkpoint_tree_size=proven.tree_size,
            unanchored_versions=list(proven.unanchored),
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
            pins = _player_pins(request)
            export, report = _verify_sent_export(request.export, _trust(request))
            if pins:
                report = _with_player_pins(report, export, pins)
            return _report_message(report, export)
        if subject != "name":
            raise errors.ApiError(
                "MISSING_FIELD", "give the deal's name or an export to verify", field="name"
            )
        for pinned in ("server_keys", "witness_keys", "checkpoint", "player_keys"):
            if getattr(request, pinned):
                raise errors.ApiError(
                    "INVALID_ARGUMENT",
                    f"{pinned} goes with an export: a deal named is judged against the server's "
                    "own keys",
                    field=pinned,
                )
        deal = resources.parse_deal(request.name)
        keys = self._server_keys.verifier_keys() if self._server_keys is not None else ()
        try:
            report, export = await audit_online.verify_deal_anchored(
                self._pool,
                deal.table_id,
                deal.deal_number,
                _requester(),
                keys,
                _anchor_wait(context),
            )
        except ExportAccessError as error:
            raise StatusError(_access_status(error)) from None
        return _report_message(report, export)

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

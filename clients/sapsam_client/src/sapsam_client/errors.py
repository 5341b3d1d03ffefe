"""Typed errors: every failed call becomes a :class:`SapsamError` carrying the reason code.

The server puts a ``google.rpc.Status`` in the trailing metadata ``grpc-status-details-bin``; its
details hold a ``google.rpc.ErrorInfo`` (domain ``sapsam.dev``, a stable ``reason`` such as
``NOT_YOUR_TURN``) and, for malformed input, a ``google.rpc.BadRequest`` naming the fields at
fault. Branch on the reason, never on the message: ``error.error_reason`` is the reason as a
value of the API's ``sapsam.v1.ErrorReason`` enum (:data:`ErrorReason`, from errors.proto),
``error.reason`` the same as a string::

    except SapsamError as error:
        if error.error_reason == ErrorReason.ERROR_REASON_WRONG_PHASE: ...

A caller over one of the server's limits gets RESOURCE_EXHAUSTED with a ``google.rpc.RetryInfo``:
``error.retry_delay`` holds its delay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import grpc
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from sapsam_proto.v1 import errors_pb2

STATUS_DETAILS_KEY: Final = "grpc-status-details-bin"
ERROR_DOMAIN: Final = "sapsam.dev"

ErrorReason = errors_pb2.ErrorReason
"""The API's ``sapsam.v1.ErrorReason`` enum: every reason the server sends, e.g.
``ErrorReason.ERROR_REASON_TABLE_NOT_FOUND`` for the reason ``"TABLE_NOT_FOUND"``."""

REASON_PREFIX: Final = "ERROR_REASON_"
"""An ``ErrorReason`` value's name is this prefix and the ErrorInfo reason it stands for."""


def error_reason_of(reason: str) -> errors_pb2.ErrorReason.ValueType:
    """The ``ErrorReason`` value of an ErrorInfo reason; ``ERROR_REASON_UNSPECIFIED`` for one this
    SDK does not know (a newer server's) and for a call that failed with no ErrorInfo."""
    try:
        return ErrorReason.Value(REASON_PREFIX + reason)
    except ValueError:
        return errors_pb2.ERROR_REASON_UNSPECIFIED


@dataclass(eq=False)
class SapsamError(Exception):
    """A call the server refused (or could not answer); ``reason`` is the stable reason code."""

    code: str
    """The gRPC status code's name, e.g. ``"FAILED_PRECONDITION"``."""
    reason: str
    """ErrorInfo's reason, e.g. ``"WRONG_PHASE"``; the code's name when the server sent none."""
    message: str
    metadata: Mapping[str, str] = field(default_factory=dict)
    """ErrorInfo's metadata, e.g. ``{"current_version": "12"}``."""
    fields: tuple[str, ...] = ()
    """Request fields a BadRequest named as at fault."""
    retry_delay: float | None = None
    """Seconds to wait before retrying, from the server's RetryInfo (limits); else None."""

    def __str__(self) -> str:
        return f"{self.code} {self.reason}: {self.message}"

    @property
    def error_reason(self) -> errors_pb2.ErrorReason.ValueType:
        """The reason as an :data:`ErrorReason` value (``ERROR_REASON_UNSPECIFIED`` if unknown)."""
        return error_reason_of(self.reason)

    @property
    def retryable(self) -> bool:
        """Safe to retry with the same request_id (docs/api.md, "What to retry"): UNAVAILABLE,
        DEADLINE_EXCEEDED, ABORTED, CANCELLED (grpc's answer to a call that met a server stopping),
        and RESOURCE_EXHAUSTED that says when (RetryInfo)."""
        if self.code == "RESOURCE_EXHAUSTED":
            return self.retry_delay is not None
        return self.code in RETRYABLE_CODES


class InvalidArgumentError(SapsamError):
    """INVALID_ARGUMENT: malformed input."""


class FailedPreconditionError(SapsamError):
    """FAILED_PRECONDITION: out of phase or out of turn (``WRONG_PHASE``, ``NOT_YOUR_TURN`` …)."""


class NotFoundError(SapsamError):
    """NOT_FOUND: no such table, deal or player."""


class AlreadyExistsError(SapsamError):
    """ALREADY_EXISTS: already seated, or a repeated registration."""


class PermissionDeniedError(SapsamError):
    """PERMISSION_DENIED: not your seat, not seated, players only."""


class UnauthenticatedError(SapsamError):
    """UNAUTHENTICATED: no token, or a token the server does not know."""


class AbortedError(SapsamError):
    """ABORTED: a stale etag or a lost race; re-read and decide again."""


class UnavailableError(SapsamError):
    """UNAVAILABLE or DEADLINE_EXCEEDED: the server could not be reached or did not answer; or
    CANCELLED, which grpc itself answers a call that reaches a server in the instant it stops
    (the call never ran: this SDK never cancels a call it then reports)."""


class ResourceExhaustedError(SapsamError):
    """RESOURCE_EXHAUSTED: over a server limit (``RATE_LIMITED``, ``TOO_MANY_STREAMS`` …; retry
    after ``retry_delay``), or a request larger than the server accepts (no reason: do not retry).
    """


class InternalError(SapsamError):
    """INTERNAL or anything else unexpected: a server fault."""


RETRYABLE_CODES: Final = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED", "ABORTED", "CANCELLED"})

_CLASS_BY_CODE: Final[dict[str, type[SapsamError]]] = {
    "INVALID_ARGUMENT": InvalidArgumentError,
    "OUT_OF_RANGE": InvalidArgumentError,
    "FAILED_PRECONDITION": FailedPreconditionError,
    "NOT_FOUND": NotFoundError,
    "ALREADY_EXISTS": AlreadyExistsError,
    "PERMISSION_DENIED": PermissionDeniedError,
    "UNAUTHENTICATED": UnauthenticatedError,
    "ABORTED": AbortedError,
    "UNAVAILABLE": UnavailableError,
    "DEADLINE_EXCEEDED": UnavailableError,
    "CANCELLED": UnavailableError,
    "RESOURCE_EXHAUSTED": ResourceExhaustedError,
}


STREAM_REMOVED = "Stream removed"
"""How grpc-core words a stream that ended without a gRPC status."""


def _status_details(error: grpc.RpcError) -> Any:
    """The google.rpc.Status from the trailing metadata, or None."""
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    for key, value in trailing or ():
        if key == STATUS_DETAILS_KEY:
            status = status_pb2.Status()
            status.ParseFromString(value)
            return status
    return None


def from_rpc_error(error: grpc.RpcError) -> SapsamError:
    """The typed error for a failed gRPC call, reason code and all."""
    code_object = error.code() if hasattr(error, "code") else None
    code = code_object.name if code_object is not None else "UNKNOWN"
    message = (error.details() if hasattr(error, "details") else None) or str(error)
    reason, metadata = code, {}
    fields: list[str] = []
    retry_delay: float | None = None
    status = _status_details(error)
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason, metadata = info.reason, dict(info.metadata)
            elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad_request = error_details_pb2.BadRequest()
                detail.Unpack(bad_request)
                fields.extend(violation.field for violation in bad_request.field_violations)
            elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                retry_info = error_details_pb2.RetryInfo()
                detail.Unpack(retry_info)
                retry_delay = retry_info.retry_delay.ToNanoseconds() / 1e9
    error_class = _CLASS_BY_CODE.get(code, InternalError)
    if code == "UNKNOWN" and status is None and message.startswith(STREAM_REMOVED):
        # Not a server's answer: the call's HTTP/2 stream ended with no gRPC status at all, as
        # a proxy ends it when the server behind it dies mid-call (HAProxy 2.6). The call may
        # or may not have run: as UNAVAILABLE, retried with its request id, a watch resumed.
        error_class, code, reason = UnavailableError, "UNAVAILABLE", "STREAM_REMOVED"
    return error_class(code, reason, message, metadata, tuple(fields), retry_delay)

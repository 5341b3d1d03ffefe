"""Errors on the wire: one table from reasons to gRPC status codes, one from exception types.

Every error the API returns is a ``google.rpc.Status`` carrying ``google.rpc.ErrorInfo`` with the
stable ``reason`` and the domain ``sapsam.dev``; INVALID_ARGUMENT errors also carry
``google.rpc.BadRequest`` naming the offending field, and ABORTED errors carry the table's current
version in the ErrorInfo metadata (``current_version``). Clients branch on the reason, never on the
message text.

Every reason is a value of the proto enum ``sapsam.v1.ErrorReason`` (proto/sapsam/v1/errors.proto),
which clients share: the ``reason`` string is the value's name without its ``ERROR_REASON_``
prefix (:func:`reason_name`). The reasons come from two places: the domain
(``sapsam.domain.errors.Reason``: a refused command) and the API layer itself (authentication,
resource names, etags). :data:`STATUS_BY_REASON` is the only place that decides a status code;
tests/api/test_documented_reasons.py keeps it, the enum, the domain's reasons and docs/api.md in
step. A reason missing from the table is a bug; it is answered FAILED_PRECONDITION (the domain
refused the command, so nothing was written) and logged.

Which exception becomes which status is decided by its type, in :data:`STATUS_BY_ERROR_TYPE`. The
database out of reach (a restart, a failover) is UNAVAILABLE, reason ``DATABASE_UNAVAILABLE``:
retry with the same request id. Anything unexpected becomes INTERNAL with a fixed message: the
exception's text never reaches the client, and the log line names only its type and traceback,
since a message could quote a secret.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

import grpc
import psycopg
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from sapsam.api.api_error import ApiError as ApiError  # re-exported for errors.ApiError
from sapsam.app.solver_processes import SolverRefusedError
from sapsam.app.table_plans import StaleVersionError
from sapsam.audit.export_format import ExportAccessError, NothingToExportError
from sapsam.domain.errors import DomainError
from sapsam.log.records import ConcurrencyConflict
from sapsam_proto.v1 import errors_pb2

REASON_PREFIX: Final = "ERROR_REASON_"
"""``sapsam.v1.ErrorReason`` value names are this prefix and the ErrorInfo ``reason``."""


def reason_name(value: errors_pb2.ErrorReason.ValueType) -> str:
    """The ErrorInfo ``reason`` of an ``ErrorReason`` value: its name without the prefix."""
    return errors_pb2.ErrorReason.Name(value).removeprefix(REASON_PREFIX)


WIRE_REASONS: Final[frozenset[str]] = frozenset(
    reason_name(value)
    for value in errors_pb2.ErrorReason.values()
    if value != errors_pb2.ERROR_REASON_UNSPECIFIED
)
"""Every reason the server may send: the proto enum's, as ErrorInfo spells them."""

ERROR_DOMAIN: Final = "sapsam.dev"
"""The ``ErrorInfo.domain`` of every sapsam error."""

CURRENT_VERSION_KEY: Final = "current_version"
"""ErrorInfo metadata key holding the table's current version on ABORTED errors."""

MAX_MESSAGE_BYTES: Final = 400
"""An error message (and its field violation's description) is cut to this many UTF-8 bytes."""

MAX_DETAIL_BYTES: Final = 200
"""A field name or ErrorInfo metadata key or value is cut to this many UTF-8 bytes."""

INTERNAL_REASON: Final = "INTERNAL"
DATABASE_UNAVAILABLE_REASON: Final = "DATABASE_UNAVAILABLE"

_logger = logging.getLogger("sapsam.api.errors")

_INVALID = grpc.StatusCode.INVALID_ARGUMENT
_PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
_EXISTS = grpc.StatusCode.ALREADY_EXISTS
_DENIED = grpc.StatusCode.PERMISSION_DENIED
_NOT_FOUND = grpc.StatusCode.NOT_FOUND
_UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
_ABORTED = grpc.StatusCode.ABORTED
_INTERNAL = grpc.StatusCode.INTERNAL
_UNAVAILABLE = grpc.StatusCode.UNAVAILABLE
_EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED

STATUS_BY_REASON: Final[Mapping[str, grpc.StatusCode]] = MappingProxyType(
    {
        # Malformed input: wrong whatever the table's state. Carries a BadRequest field violation.
        "INVALID_ARGUMENT": _INVALID,
        "BAD_SEAT_COUNT": _INVALID,
        "BAD_RULE_SET": _INVALID,
        "BAD_COMMITMENT": _INVALID,
        "BAD_NONCE": _INVALID,
        "BAD_ENTROPY": _INVALID,
        "BAD_CUT_POSITION": _INVALID,
        "BAD_CARDS": _INVALID,
        "UNKNOWN_SEAT": _INVALID,
        "BAD_RESOURCE_NAME": _INVALID,
        "BAD_REQUEST_ID": _INVALID,
        "BAD_PAGE_SIZE": _INVALID,
        "BAD_PAGE_TOKEN": _INVALID,
        "BAD_DISPLAY_NAME": _INVALID,
        "BAD_PLAYER_KEY": _INVALID,  # RegisterPlayerKey: size, proof, or another player's key
        "BAD_SIGNATURE": _INVALID,  # a move signed by a key not the player's, or not verifying
        "BAD_SERIES_LENGTH": _INVALID,
        "MISSING_FIELD": _INVALID,
        "REQUEST_ID_REUSED": _INVALID,
        "EXPORT_LIMIT_EXCEEDED": _INVALID,  # VerifyDeal's export beyond docs/audit.md's limits
        "BAD_TREE_SIZE": _INVALID,  # TransparencyService: a size out of range
        "BAD_LEAF_INDEX": _INVALID,
        "BAD_COSIGNATURE": _INVALID,  # AddCheckpointCosignature: malformed or not verifying
        # A right request at the wrong moment: out of phase, out of turn, already done.
        "WRONG_PHASE": _PRECONDITION,
        "NOT_YOUR_TURN": _PRECONDITION,
        "SURRENDER_OFF": _PRECONDITION,
        "ALREADY_ANNOUNCED": _PRECONDITION,
        "WRONG_GAME": _PRECONDITION,
        "SEAT_TAKEN": _PRECONDITION,
        "TABLE_FULL": _PRECONDITION,
        "ALREADY_CONTRIBUTED": _PRECONDITION,
        "ALREADY_CONFIRMED": _PRECONDITION,
        "ALREADY_REVEALED": _PRECONDITION,
        "NO_COMMITMENT": _PRECONDITION,
        "COMMITMENT_MISMATCH": _PRECONDITION,
        "SEAT_TIMED_OUT": _PRECONDITION,
        "WRONG_DEAL": _PRECONDITION,
        "NOTHING_TIMED_OUT": _PRECONDITION,
        "SERIES_COMPLETE": _PRECONDITION,
        "PLAYER_KEY_LIMIT": _PRECONDITION,  # RegisterPlayerKey: the player has 8 keys already
        "SIGNATURE_REQUIRED": _PRECONDITION,  # a player with a key sent an unsigned move
        "TREE_SIZE_NOT_CHECKPOINTED": _PRECONDITION,  # beyond the latest signed checkpoint, yet
        # Something the caller would create exists already.
        "ALREADY_SEATED": _EXISTS,
        "TABLE_EXISTS": _EXISTS,
        "TOKEN_ALREADY_ISSUED": _EXISTS,
        # The caller may not do this: not its seat, not seated, not the operator.
        "NOT_SEATED": _DENIED,
        "NOT_YOUR_SEAT": _DENIED,
        "PLAYERS_ONLY": _DENIED,
        "DEAL_NOT_FINISHED": _DENIED,
        "WITNESS_NOT_ACCEPTED": _DENIED,  # a witness key the operator does not list
        # What the request names does not exist.
        "TABLE_NOT_FOUND": _NOT_FOUND,
        "TABLE_NOT_CREATED": _NOT_FOUND,
        "DEAL_NOT_FOUND": _NOT_FOUND,
        "PLAYER_NOT_FOUND": _NOT_FOUND,
        "CHECKPOINT_NOT_FOUND": _NOT_FOUND,
        "LEAF_NOT_FOUND": _NOT_FOUND,
        # Who is calling is unknown.
        "MISSING_TOKEN": _UNAUTHENTICATED,
        "UNKNOWN_TOKEN": _UNAUTHENTICATED,
        "BAD_AUTHORIZATION_HEADER": _UNAUTHENTICATED,
        "TOKEN_REVOKED": _UNAUTHENTICATED,
        "TOKEN_EXPIRED": _UNAUTHENTICATED,
        # The table moved on: the etag did not match, or another call won the race. Retry after
        # reading the table again; the current version is in the ErrorInfo metadata.
        "VERSION_MISMATCH": _ABORTED,
        "CONCURRENCY_CONFLICT": _ABORTED,
        # Tournaments (sapsam.domain.tournament).
        "TOURNAMENT_EXISTS": _EXISTS,
        "TOURNAMENT_NOT_FOUND": _NOT_FOUND,
        "REGISTRATION_NOT_OPEN": _PRECONDITION,
        "REGISTRATION_CLOSED": _PRECONDITION,
        "ALREADY_REGISTERED": _EXISTS,
        "NOT_REGISTERED": _PRECONDITION,
        "TOURNAMENT_FULL": _PRECONDITION,
        "ALREADY_STARTED": _PRECONDITION,
        "TOO_FEW_PLAYERS": _PRECONDITION,
        "PLAYER_SEATED": _PRECONDITION,
        "ROUND_NOT_COMPLETE": _PRECONDITION,
        "TOURNAMENT_COMPLETE": _PRECONDITION,
        "TOURNAMENT_PAUSED": _PRECONDITION,
        "TOURNAMENT_NOT_PAUSED": _PRECONDITION,
        "TOURNAMENT_CANCELLED": _PRECONDITION,
        "PLAYER_FORFEITED": _PRECONDITION,
        "NATURALS_NOT_PLAYED": _PRECONDITION,
        "DECLARATION_REQUIRED": _PRECONDITION,
        "ALREADY_DECLARED": _PRECONDITION,
        "DECLARATION_MISMATCH": _PRECONDITION,
        "OPERATOR_ONLY": _DENIED,
        # Only the results process can hit these (it credits deals, never a client).
        "NOT_A_TOURNAMENT_TABLE": _INTERNAL,
        "ALREADY_CREDITED": _INTERNAL,
        # Only the server's own commands can hit these (the seed is never sent by a client).
        "BAD_SEED": _INTERNAL,
        "SEED_MISMATCH": _INTERNAL,
        # The database is out of reach or refusing work for now (a restart, a failover, too many
        # connections). Safe to retry with the same request_id: a call recorded all or nothing.
        DATABASE_UNAVAILABLE_REASON: _UNAVAILABLE,
        # The server process is stopping (sapsam.api.stopping): retry, with the same request_id,
        # on another process or once it is back.
        "SERVER_STOPPING": _UNAVAILABLE,
        "STREAM_UNAVAILABLE": _UNAVAILABLE,  # a watched stream's reads kept failing
        # The solver process solving a suggestion stopped (it is replaced); retry (RetryInfo).
        "SOLVER_UNAVAILABLE": _UNAVAILABLE,
        # A caller over one of its limits (sapsam.api.limits); RetryInfo says when to try again.
        "RATE_LIMITED": _EXHAUSTED,
        "TOO_MANY_REGISTRATIONS": _EXHAUSTED,
        "TOO_MANY_STREAMS": _EXHAUSTED,
        # This process's solver processes have as many suggestions running and queued as their
        # bound allows (sapsam.app.solver_processes); RetryInfo says when to try again.
        "SUGGESTIONS_BUSY": _EXHAUSTED,
        # A watch stream whose client read more slowly than the stream grew (sapsam.api.watch);
        # resume from the version in the ErrorInfo metadata.
        "STREAM_BEHIND": _EXHAUSTED,
        "TOO_MANY_COSIGNATURES": _EXHAUSTED,  # a checkpoint holds its most cosignatures
        # The transparency log's tables are missing, unreadable by the server's role, or lack a
        # subtree (sapsam.app.transparency.TransparencyUnavailableError): the operator's to fix.
        "TRANSPARENCY_UNAVAILABLE": _PRECONDITION,
        INTERNAL_REASON: _INTERNAL,
    }
)
"""Every reason code and the gRPC status it is answered with. Never rename a reason."""


def status_code_for(reason: str) -> grpc.StatusCode:
    """The gRPC status code for a reason; an unlisted reason is a refused command."""
    code = STATUS_BY_REASON.get(reason)
    if code is None:
        _logger.warning("reason %s is missing from STATUS_BY_REASON", reason)
        return _PRECONDITION
    return code


def build_status(
    reason: str,
    message: str,
    *,
    field: str | None = None,
    metadata: Mapping[str, str] | None = None,
    retry_delay: float | None = None,
) -> grpc.Status:
    """The ``grpc.Status`` for a reason: ErrorInfo always, BadRequest for INVALID_ARGUMENT,
    RetryInfo when a ``retry_delay`` (seconds) is given.

    The message, the field and the metadata are cut to a few hundred bytes each
    (:data:`MAX_MESSAGE_BYTES`, :data:`MAX_DETAIL_BYTES`), whatever a caller of this function
    quoted: the status travels in the trailing metadata (the message percent-encoded, up to three
    bytes per byte), and metadata over gRPC's limit (8 KB soft, 16 KB hard by default) reaches the
    client as RESOURCE_EXHAUSTED without its ErrorInfo.
    """
    code = status_code_for(reason)
    message = _cut(message, MAX_MESSAGE_BYTES)
    field = None if field is None else _cut(field, MAX_DETAIL_BYTES)
    error_info = error_details_pb2.ErrorInfo(
        reason=reason,
        domain=ERROR_DOMAIN,
        metadata={
            _cut(key, MAX_DETAIL_BYTES): _cut(value, MAX_DETAIL_BYTES)
            for key, value in (metadata or {}).items()
        },
    )
    details = [_pack(error_info)]
    if code == _INVALID:
        violation = error_details_pb2.BadRequest.FieldViolation(
            field=field or "", description=message
        )
        details.append(_pack(error_details_pb2.BadRequest(field_violations=[violation])))
    if retry_delay is not None:
        retry_info = error_details_pb2.RetryInfo()
        retry_info.retry_delay.FromNanoseconds(max(0, round(retry_delay * 1e9)))
        details.append(_pack(retry_info))
    status = status_pb2.Status(code=_code_number(code), message=message, details=details)
    return rpc_status.to_status(status)


def _cut(text: str, limit: int) -> str:
    """``text`` if it is at most ``limit`` bytes in UTF-8, else its longest prefix that is, with
    an ellipsis (three bytes) in place of the rest."""
    if 4 * len(text) <= limit:  # no character takes more than four bytes
        return text
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= limit:
        return text
    return encoded[: limit - 3].decode("utf-8", "ignore") + "\N{HORIZONTAL ELLIPSIS}"


def _pack(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def _code_number(code: grpc.StatusCode) -> int:
    number = code.value[0]
    assert isinstance(number, int)
    assert code_pb2.Code.Name(number) == code.name
    return number


def status_for_exception(error: BaseException, method: str = "") -> grpc.Status:
    """The status a raised exception is answered with: by its type, in
    :data:`STATUS_BY_ERROR_TYPE` (the closest class in its MRO); anything else is INTERNAL and is
    logged without its message."""
    for error_type in type(error).__mro__:
        status_of = STATUS_BY_ERROR_TYPE.get(error_type)
        if status_of is not None:
            return status_of(error, method)
    return _internal_status(error, method)


def _api_error_status(error: ApiError, method: str) -> grpc.Status:
    return build_status(
        error.reason,
        error.message,
        field=error.field,
        metadata=error.metadata,
        retry_delay=error.retry_delay,
    )


def _refusal_status(
    error: DomainError | ExportAccessError | NothingToExportError, method: str
) -> grpc.Status:
    # A domain Reason is a StrEnum: its str() would name the member, so take the value.
    reason = error.reason.value if isinstance(error, DomainError) else error.reason
    return build_status(reason, error.message, field=error.field)


def _solver_refusal_status(error: SolverRefusedError, method: str) -> grpc.Status:
    return build_status(error.reason, error.message, retry_delay=error.retry_seconds)


def _stale_version_status(error: StaleVersionError, method: str) -> grpc.Status:
    stale = version_mismatch(error.expected_version, error.current_version)
    return _api_error_status(stale, method)


def _concurrency_conflict_status(error: ConcurrencyConflict, method: str) -> grpc.Status:
    return build_status(
        "CONCURRENCY_CONFLICT",
        "the table changed while this call was being decided; read it again and retry",
        metadata={CURRENT_VERSION_KEY: str(error.current_version)},
    )


def _operational_error_status(error: psycopg.OperationalError, method: str) -> grpc.Status:
    if not database_unavailable(error):
        return _internal_status(error, method)
    _logger.warning(
        "database unavailable in %s: %s (SQLSTATE %s)",
        method,
        type(error).__name__,
        error.sqlstate,
    )
    return build_status(
        DATABASE_UNAVAILABLE_REASON,
        "the database is not available right now; retry the call with the same request_id",
    )


def _internal_status(error: BaseException, method: str) -> grpc.Status:
    log_unexpected(error, method)
    return build_status(INTERNAL_REASON, "internal error")


STATUS_BY_ERROR_TYPE: Final[Mapping[type[BaseException], Callable[[Any, str], grpc.Status]]] = (
    MappingProxyType(
        {
            # Raised by the API layer itself (auth, resource names, etags, limits).
            ApiError: _api_error_status,
            # A command the domain refused; TableNotFoundError and friends are DomainErrors.
            DomainError: _refusal_status,
            # An export the caller may not have, or of nothing (sapsam.audit.export_format).
            ExportAccessError: _refusal_status,
            NothingToExportError: _refusal_status,
            # The request's etag is stale: ABORTED VERSION_MISMATCH, before anything was decided.
            StaleVersionError: _stale_version_status,
            # Another call won every race for the next stream version: ABORTED, retry.
            ConcurrencyConflict: _concurrency_conflict_status,
            # A suggestion the solver processes could not take (SUGGESTIONS_BUSY) or finish
            # (SOLVER_UNAVAILABLE): nothing was recorded, RetryInfo says when to try again.
            SolverRefusedError: _solver_refusal_status,
            # The database out of reach is UNAVAILABLE; other OperationalErrors are INTERNAL.
            psycopg.OperationalError: _operational_error_status,
        }
    )
)
"""Exception type -> the function that builds its status (given the error and the method)."""


# SQLSTATEs that say the database, not the request, is at fault, and that a retry can get past:
# connection exceptions (08), insufficient resources (53: too many connections, disk full),
# transaction rollbacks (40: serialization failure, deadlock), the server shutting down or not yet
# accepting connections (57P01 to 57P05), a lock not available in time (55P03).
_RETRYABLE_SQLSTATE_CLASSES: Final = ("08", "53", "40")
_RETRYABLE_SQLSTATES: Final = frozenset({"57P01", "57P02", "57P03", "57P04", "57P05", "55P03"})


def database_unavailable(error: BaseException) -> bool:
    """Whether ``error`` means the database is out of reach for now, so a retry may succeed.

    psycopg's OperationalError without a SQLSTATE is the client side's view of the same thing: a
    connection lost or refused, or no pooled connection free in time (``PoolTimeout``). Other
    OperationalErrors (a statement timeout, a program limit) would fail again: not these.
    """
    if not isinstance(error, psycopg.OperationalError):
        return False
    sqlstate = error.sqlstate
    return (
        sqlstate is None
        or sqlstate.startswith(_RETRYABLE_SQLSTATE_CLASSES)
        or sqlstate in _RETRYABLE_SQLSTATES
    )


def log_unexpected(error: BaseException, method: str) -> None:
    """Log an unexpected exception by type and traceback only (its message may hold secrets)."""
    # Frames only, without source lines: a line of code could quote a value as well.
    frames = " <- ".join(
        f"{frame.filename}:{frame.lineno} {frame.name}"
        for frame in reversed(traceback.extract_tb(error.__traceback__))
    )
    _logger.error("unexpected %s in %s at %s", type(error).__name__, method, frames)


def version_mismatch(expected: int, current: int) -> ApiError:
    """The ABORTED error for a request whose ``expected_version`` is stale."""
    return ApiError(
        "VERSION_MISMATCH",
        f"the table is at version {current}, not {expected}; read it again and retry",
        field="expected_version",
        metadata={CURRENT_VERSION_KEY: str(current)},
    )

"""The TableService requests' common parts, read for the servicers (``sapsam.api.table_servicer``,
``sapsam.api.seat_moves``): etags, deal numbers, callers, signatures, arrangements, deadlines and
page tokens. Each bad value is an ``ApiError`` naming its field.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from typing import Any, Final, TypedDict

import grpc
from google.protobuf.message import Message

from sapsam.api import auth, views
from sapsam.api.api_error import ApiError
from sapsam.api.interception import PlainStatus, StatusError
from sapsam.api.request_digest import request_digest
from sapsam.api.table_messages import STAGE_STATUS
from sapsam.app.tables import TableOutcome
from sapsam.domain.commands import PlayerSignature
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.families import PHASES_BY_STAGE
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import CardError, parse_cards
from sapsam_proto.v1 import table_pb2, table_service_pb2

DEFAULT_PAGE_SIZE: Final = 50
MAX_PAGE_SIZE: Final = 100

# What a table does after its series (the request's enum to the domain's option).
AFTER_SERIES: Final[dict[int, str]] = {
    table_service_pb2.AFTER_SERIES_UNSPECIFIED: "close",
    table_service_pb2.AFTER_SERIES_CLOSE: "close",
    table_service_pb2.AFTER_SERIES_NEW_SERIES: "new_series",
}

# The phase names of each listed status, every family's (its stage's, through the family seam:
# sapsam.domain.families.PHASES_BY_STAGE), as the read models record them.
STATUS_PHASES: Final[dict[int, tuple[str, ...]]] = {
    STAGE_STATUS[stage]: phases for stage, phases in PHASES_BY_STAGE.items()
}


def expected_version(request: Any) -> int | None:
    """The request's etag, if it sent one; the table service checks it after retry detection."""
    return int(request.expected_version) if request.HasField("expected_version") else None


def deal_number(request: Any) -> int | None:
    """The deal the request acts in, if it names one; the domain refuses any other deal."""
    return int(request.deal_number) if request.HasField("deal_number") else None


class CallTerms(TypedDict):
    """The keywords every mutating call passes the table service: the request's etag, and its
    digest (the same request id with another request is REQUEST_ID_REUSED)."""

    expected_version: int | None
    request_digest: bytes


class DealCallTerms(CallTerms):
    """A move in a deal's keywords: also the deal it names, if it names one."""

    deal_number: int | None


def call_terms(request: Message) -> CallTerms:
    """The request's :class:`CallTerms`."""
    return CallTerms(
        expected_version=expected_version(request), request_digest=request_digest(request)
    )


def deal_call_terms(request: Message) -> DealCallTerms:
    """The request's :class:`DealCallTerms` (a request with a ``deal_number`` field)."""
    return DealCallTerms(**call_terms(request), deal_number=deal_number(request))


def player_or_operator(caller: auth.Caller) -> str:
    """The actor a call is recorded under: the player, or the operator."""
    return views.OPERATOR_ACTOR if caller.is_operator else str(caller.player_id)


def player_only(caller: auth.Caller) -> str:
    """The calling player's id; the operator is refused (PLAYERS_ONLY)."""
    if caller.player_id is None:
        raise ApiError("PLAYERS_ONLY", "only a player can do this, not the operator")
    return caller.player_id


def signature_of(
    request: table_service_pb2.CommitArrangementRequest
    | table_service_pb2.RevealArrangementRequest
    | table_service_pb2.DeclareNaturalRequest
    | table_service_pb2.AnnounceSurrenderRequest
    | table_service_pb2.PlaceCardsRequest
    | table_service_pb2.CommitFantasylandRequest
    | table_service_pb2.RevealFantasylandRequest
    | table_service_pb2.RevealDiscardsRequest,
) -> PlayerSignature | None:
    """The move's signature, if the request carries one (docs/fairness.md §19)."""
    if not request.HasField("signature"):
        return None
    return PlayerSignature(request.signature.public_key, request.signature.signature)


def check_deadline(context: grpc.ServicerContext) -> None:
    """DEADLINE_EXCEEDED if the call's deadline passed before its move was made."""
    # A call whose deadline already passed does nothing; the append itself is all or nothing.
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        raise StatusError(
            PlainStatus(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded before the move")
        )


def event_of(outcome: TableOutcome, event_type: type[Any]) -> Any:
    """The first event of ``event_type`` the call appended (or, for a retry, had appended)."""
    for recorded in outcome.events:
        if recorded.type == event_type.TYPE:
            return DEFAULT_CODEC.decode(recorded.type, recorded.schema_version, recorded.data)
    raise RuntimeError(f"the call recorded no {event_type.TYPE}")


def arrangement_of(message: table_pb2.Arrangement) -> Arrangement:
    """The request's rows as an arrangement (BAD_CARDS naming the row that does not parse)."""
    rows = []
    for row_name in ("front", "middle", "back"):
        try:
            rows.append(parse_cards(list(getattr(message, row_name))))
        except CardError as error:
            raise ApiError("BAD_CARDS", str(error), field=f"arrangement.{row_name}") from None
    return Arrangement(rows[0], rows[1], rows[2])


def _is_plain_text(text: str, max_length: int) -> bool:
    return len(text) <= max_length and text.isascii() and text.isprintable()


def encode_page_token(status: int, created_at: str, table_id: uuid.UUID) -> str:
    """ListTables' next_page_token after the listed table ``table_id``."""
    text = json.dumps({"s": status, "c": created_at, "t": str(table_id)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode()


def decode_page_token(token: str, status: int) -> tuple[str, uuid.UUID] | None:
    """Where a page_token says the page starts (None: the first page); BAD_PAGE_TOKEN for a
    token this server did not issue for this filter."""
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


def surrender_from_choice(choice: int) -> bool:
    """An AnnounceSurrender request's choice: True to surrender; unset or unknown is refused."""
    if choice == table_pb2.SURRENDER_CHOICE_SURRENDER:
        return True
    if choice == table_pb2.SURRENDER_CHOICE_PLAY:
        return False
    raise ApiError(
        "INVALID_ARGUMENT",
        "choice must be SURRENDER_CHOICE_PLAY or SURRENDER_CHOICE_SURRENDER",
        field="choice",
    )

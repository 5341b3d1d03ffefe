"""Resource names on the wire and the ids behind them.

``tables/{table}``, ``tables/{table}/seats/{seat}``, ``tables/{table}/deals/{deal}`` and
``players/{player}``; table and player ids are UUIDs, seats are numbered from 0, deals from 1.
A malformed name is INVALID_ARGUMENT (``BAD_RESOURCE_NAME``) naming the request field.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Final

from sapsam.api.errors import ApiError

MAX_REQUEST_ID_LENGTH: Final = 64

_TABLE = re.compile(r"^tables/([^/]+)$")
_SEAT = re.compile(r"^tables/([^/]+)/seats/(\d{1,3})$")
_DEAL = re.compile(r"^tables/([^/]+)/deals/(\d{1,6})$")
_PLAYER = re.compile(r"^players/([^/]+)$")


@dataclass(frozen=True)
class SeatName:
    """A parsed seat name."""

    table_id: uuid.UUID
    seat: int


@dataclass(frozen=True)
class DealName:
    """A parsed deal name."""

    table_id: uuid.UUID
    deal_number: int


def table_name(table_id: uuid.UUID) -> str:
    """``tables/{table}``."""
    return f"tables/{table_id}"


def seat_name(table_id: uuid.UUID, seat: int) -> str:
    """``tables/{table}/seats/{seat}``."""
    return f"tables/{table_id}/seats/{seat}"


def deal_name(table_id: uuid.UUID, deal_number: int) -> str:
    """``tables/{table}/deals/{deal}``."""
    return f"tables/{table_id}/deals/{deal_number}"


def player_name(player_id: str) -> str:
    """``players/{player}``; empty for no player."""
    return f"players/{player_id}" if player_id else ""


def _bad(field: str, value: str, pattern: str) -> ApiError:
    shown = value if len(value) <= 80 else value[:77] + "..."
    if not value:
        return ApiError("MISSING_FIELD", f"{field} is required, as {pattern}", field=field)
    return ApiError("BAD_RESOURCE_NAME", f"{field} {shown!r} is not {pattern}", field=field)


def _uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def parse_table(value: str, field: str) -> uuid.UUID:
    """The table id of ``tables/{table}``."""
    match = _TABLE.match(value)
    table_id = _uuid(match.group(1)) if match else None
    if table_id is None:
        raise _bad(field, value, "tables/{table} with a UUID")
    return table_id


def parse_seat(value: str, field: str = "seat") -> SeatName:
    """The table id and seat number of ``tables/{table}/seats/{seat}``."""
    match = _SEAT.match(value)
    table_id = _uuid(match.group(1)) if match else None
    if match is None or table_id is None:
        raise _bad(field, value, "tables/{table}/seats/{seat}")
    return SeatName(table_id, int(match.group(2)))


def parse_deal(value: str, field: str = "name") -> DealName:
    """The table id and deal number of ``tables/{table}/deals/{deal}``."""
    match = _DEAL.match(value)
    table_id = _uuid(match.group(1)) if match else None
    if match is None or table_id is None or int(match.group(2)) < 1:
        raise _bad(field, value, "tables/{table}/deals/{deal} with a deal number from 1")
    return DealName(table_id, int(match.group(2)))


def parse_player(value: str, field: str = "name") -> uuid.UUID:
    """The player id of ``players/{player}``."""
    match = _PLAYER.match(value)
    player_id = _uuid(match.group(1)) if match else None
    if player_id is None:
        raise _bad(field, value, "players/{player} with a UUID")
    return player_id


def check_request_id(request_id: str) -> str:
    """The request id if well formed (printable, at most 64 characters); may be empty."""
    if len(request_id) > MAX_REQUEST_ID_LENGTH or not request_id.isprintable():
        raise ApiError(
            "BAD_REQUEST_ID",
            f"request_id must be printable and at most {MAX_REQUEST_ID_LENGTH} characters",
            field="request_id",
        )
    return request_id


def scoped_request_id(method: str, request_id: str) -> str:
    """The store's request id for a mutating call: the client's (checked) scoped by method, or a
    fresh, unshared one when the client sent none. (The services scope it by caller too.)"""
    return f"{method}/{check_request_id(request_id) or uuid.uuid4()}"

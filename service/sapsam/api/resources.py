"""Resource names on the wire and the ids behind them.

``tables/{table}``, ``tables/{table}/seats/{seat}``, ``tables/{table}/deals/{deal}``,
``players/{player}`` and ``tournaments/{tournament}``; table, player and tournament ids are UUIDs,
seats are numbered from 0, deals from 1.

Each resource has exactly one spelling, the one the server writes: a UUID in lowercase hex with
its four hyphens (``str(uuid.UUID)``), a number in ASCII decimal without leading zeros. Anything
else (uppercase, 32 hex digits without hyphens, ``{...}``, ``urn:uuid:``, ``deals/01``, Arabic-Indic
or fullwidth digits, ``seats/00``, a trailing newline) is INVALID_ARGUMENT (``BAD_RESOURCE_NAME``)
naming the request field and quoting at most a short prefix of the value; an empty one is
``MISSING_FIELD``. The patterns spell out their ASCII classes: a regex digit class matches any
Unicode digit and ``uuid.UUID()`` accepts many spellings, so neither decides what is a name.
"""

from __future__ import annotations

import functools
import re
import uuid
from dataclasses import dataclass
from typing import Final

from sapsam.api.api_error import ApiError
from sapsam.quoting import quote_prefix

MAX_REQUEST_ID_LENGTH: Final = 64

# Canonical spellings only (matched with fullmatch, so no trailing newline slips through).
_UUID: Final = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_SEAT_NUMBER: Final = "0|[1-9][0-9]{0,2}"  # 0 to 999
_DEAL_NUMBER: Final = "[1-9][0-9]{0,5}"  # 1 to 999999
_TABLE = re.compile(f"tables/({_UUID})")
_SEAT = re.compile(f"tables/({_UUID})/seats/({_SEAT_NUMBER})")
_DEAL = re.compile(f"tables/({_UUID})/deals/({_DEAL_NUMBER})")
_PLAYER = re.compile(f"players/({_UUID})")
_TOURNAMENT = re.compile(f"tournaments/({_UUID})")


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
    return seat_of(table_name(table_id), seat)


def deal_name(table_id: uuid.UUID, deal_number: int) -> str:
    """``tables/{table}/deals/{deal}``."""
    return deal_of(table_name(table_id), deal_number)


def seat_of(table: str, seat: int) -> str:
    """``{table}/seats/{seat}`` for the table's name already spelt (``tables/{table}``): a
    message naming many seats spells the table once (``str(uuid)`` is Python code)."""
    return f"{table}/seats/{seat}"


def deal_of(table: str, deal_number: int) -> str:
    """``{table}/deals/{deal}`` for the table's name already spelt (as :func:`seat_of`)."""
    return f"{table}/deals/{deal_number}"


def player_name(player_id: str) -> str:
    """``players/{player}``; empty for no player."""
    return f"players/{player_id}" if player_id else ""


_UUID_SPELLING: Final = "a lowercase, hyphenated UUID"


def _bad(field: str, value: str, pattern: str) -> ApiError:
    if not value:
        return ApiError("MISSING_FIELD", f"{field} is required, as {pattern}", field=field)
    return ApiError(
        "BAD_RESOURCE_NAME", f"{field} {quote_prefix(value)} is not {pattern}", field=field
    )


# A name's id, parsed once per id seen lately: every table call names its table, and
# ``uuid.UUID()`` costs more than the pattern's match (UUIDs are immutable, so shared).
_uuid_of: Final = functools.lru_cache(maxsize=4096)(uuid.UUID)


def _matched(pattern: re.Pattern[str], value: str, field: str, spelling: str) -> re.Match[str]:
    match = pattern.fullmatch(value)
    if match is None:
        raise _bad(field, value, spelling)
    return match


def parse_table(value: str, field: str) -> uuid.UUID:
    """The table id of ``tables/{table}``."""
    match = _matched(_TABLE, value, field, f"tables/{{table}} with {_UUID_SPELLING}")
    return _uuid_of(match.group(1))


def parse_seat(value: str, field: str = "seat") -> SeatName:
    """The table id and seat number of ``tables/{table}/seats/{seat}``."""
    spelling = f"tables/{{table}}/seats/{{seat}} with {_UUID_SPELLING} and a seat number 0-999"
    match = _matched(_SEAT, value, field, spelling)
    return SeatName(_uuid_of(match.group(1)), int(match.group(2)))


def parse_deal(value: str, field: str = "name") -> DealName:
    """The table id and deal number of ``tables/{table}/deals/{deal}``."""
    spelling = f"tables/{{table}}/deals/{{deal}} with {_UUID_SPELLING} and a deal number from 1"
    match = _matched(_DEAL, value, field, spelling)
    return DealName(_uuid_of(match.group(1)), int(match.group(2)))


def parse_player(value: str, field: str = "name") -> uuid.UUID:
    """The player id of ``players/{player}``."""
    match = _matched(_PLAYER, value, field, f"players/{{player}} with {_UUID_SPELLING}")
    return _uuid_of(match.group(1))


def parse_tournament(value: str, field: str) -> uuid.UUID:
    """The tournament id of ``tournaments/{tournament}``."""
    spelling = f"tournaments/{{tournament}} with {_UUID_SPELLING}"
    match = _matched(_TOURNAMENT, value, field, spelling)
    return _uuid_of(match.group(1))


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

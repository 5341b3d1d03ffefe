"""ListMyDeals: the calling player's hand history, a page at a time.

The page comes from the application's query over the read models (``TableQueries.deal_history``:
``seat_scores`` and ``table_state``, one statement). The page token carries the last line's sort
key and the player it was issued to, so a token never pages through another player's history
(BAD_PAGE_TOKEN), and bad input is refused before any read. Nothing is recorded.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid

from sapsam.api import auth, resources
from sapsam.api.api_error import ApiError
from sapsam.api.common_messages import timestamp_from_text
from sapsam.api.table_requests import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, player_only
from sapsam.app.store_interface import PlayedDealLine
from sapsam.app.table_queries import TableQueries
from sapsam_proto.v1 import table_service_pb2

SortKey = tuple[str, uuid.UUID, int, int]
MAX_TOKEN_CHARS = 512
"""A token this server issues is about 200 characters; anything much longer is not one."""
_MAX_NUMBER = 2**31 - 1


def encode_history_token(player_id: str, key: SortKey) -> str:
    """The next_page_token after the line whose sort key is ``key``."""
    created_at, table_id, deal, seat = key
    text = json.dumps(
        {"p": player_id, "c": created_at, "t": str(table_id), "d": deal, "s": seat},
        separators=(",", ":"),
    )
    return base64.urlsafe_b64encode(text.encode()).decode()


def _bad_token() -> ApiError:
    return ApiError(
        "BAD_PAGE_TOKEN",
        "page_token is not one this server issued to you for ListMyDeals",
        field="page_token",
    )


def decode_history_token(token: str, player_id: str) -> SortKey | None:
    """Where a page_token says the page starts (None: the first page); BAD_PAGE_TOKEN for a
    token this server did not issue to ``player_id``."""
    if not token:
        return None
    if len(token) > MAX_TOKEN_CHARS:
        raise _bad_token()
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
        if not isinstance(decoded, dict) or decoded.get("p") != player_id:
            raise ValueError("not this player's token")
        created_at, table_id = decoded["c"], decoded["t"]
        deal, seat = decoded["d"], decoded["s"]
        # The key reaches SQL: only what this server writes there (an ASCII timestamp, a uuid,
        # two small non-negative integers; NUL or a lone surrogate would fail in the driver).
        if not (isinstance(created_at, str) and created_at.isascii() and created_at.isprintable()):
            raise ValueError("not a creation time")
        if len(created_at) > 64 or not isinstance(table_id, str):
            raise ValueError("not a table")
        for number in (deal, seat):
            if type(number) is not int or not 0 <= number <= _MAX_NUMBER:
                raise ValueError("not a deal or seat number")
        return created_at, uuid.UUID(table_id), deal, seat
    # RecursionError: deeply nested JSON; UnicodeDecodeError is a ValueError.
    except (ValueError, RecursionError, KeyError, TypeError, binascii.Error):
        raise _bad_token() from None


def played_deal_message(line: PlayedDealLine) -> table_service_pb2.PlayedDeal:
    """One line of the history as the API shows it."""
    message = table_service_pb2.PlayedDeal(
        deal=resources.deal_name(line.table_id, line.deal_number),
        seat=resources.seat_name(line.table_id, line.seat),
        deal_number=line.deal_number,
        delta=line.delta,
        series_total=line.series_total,
        fouled=line.fouled,
        rule_set_name=line.rule_set_name,
        seat_count=line.seat_count,
    )
    if line.scored_at:
        message.score_time.CopyFrom(timestamp_from_text(line.scored_at))
    return message


async def list_my_deals(
    tables: TableQueries, request: table_service_pb2.ListMyDealsRequest
) -> table_service_pb2.ListMyDealsResponse:
    """A page of the calling player's scored deals (the operator: PLAYERS_ONLY)."""
    player_id = player_only(auth.current_caller())
    page_size = request.page_size or DEFAULT_PAGE_SIZE
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise ApiError(
            "BAD_PAGE_SIZE", f"page_size must be 0 to {MAX_PAGE_SIZE}", field="page_size"
        )
    after = decode_history_token(request.page_token, player_id)
    lines = await tables.deal_history(player_id, after, page_size + 1)
    next_token = ""
    if len(lines) > page_size:
        next_token = encode_history_token(player_id, lines[page_size - 1].sort_key)
    return table_service_pb2.ListMyDealsResponse(
        deals=[played_deal_message(line) for line in lines[:page_size]],
        next_page_token=next_token,
    )

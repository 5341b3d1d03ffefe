"""Requests that broke the server once, sent first on every fuzz run (tests/api/test_fuzz_rpcs.py).

Each was found by the fuzz test (or is a near neighbour of one) and is listed with what it did.
Kept here, a fixed finding stays fixed whatever the fuzz budget or seed.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from fuzz_strategies import World
from google.protobuf.timestamp_pb2 import Timestamp

from sapsam_proto.v1.rule_set_pb2 import RuleSet


def _page_token(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


UUID0 = "00000000-0000-0000-0000-000000000000"
_CUP: dict[str, Any] = {
    "display_name": "cup",
    "seats_per_table": 2,
    "rounds": 1,
    "deals_per_round": 1,
    "registration_close_time": Timestamp(seconds=4_102_444_800),
    "max_entrants": 8,
}
PINNED: dict[str, list[tuple[Callable[[World], dict[str, Any]], str]]] = {
    # Page tokens of deeply nested JSON (RecursionError) or with numbers beyond bigint
    # (NumericValueOutOfRange) were INTERNAL: now BAD_PAGE_TOKEN.
    "ListTables": [
        (lambda w: {"page_token": _page_token({"s": 0, "c": "not a time", "t": UUID0})}, "bob"),
        (lambda w: {"page_token": base64.urlsafe_b64encode(b"[" * 100_000).decode()}, "bob"),
    ],
    # The history's token carries the player and numbers that reach SQL.
    "ListMyDeals": [
        (lambda w: {"page_token": base64.urlsafe_b64encode(b"[" * 100_000).decode()}, "bob"),
        (lambda w: {"page_token": _page_token({"p": "x", "c": "", "t": UUID0})}, "bob"),
    ],
    "ListTournaments": [
        (lambda w: {"page_token": base64.urlsafe_b64encode(b"[" * 100_000).decode()}, "bob"),
        (
            lambda w: {
                "page_token": _page_token(
                    {"query": "tournaments", "status": 0, "time": 2**63, "id": UUID0}
                )
            },
            "bob",
        ),
    ],
    "GetStandings": [
        (
            lambda w: {
                "tournament": f"tournaments/{w.tournament_id}",
                "page_token": _page_token(
                    {"query": "standings", "tournament": w.tournament_id, "offset": 2**63}
                ),
            },
            "alice",
        ),
    ],
    "GetLeaderboard": [
        (lambda w: {"rule_set_name": "pagat\x00"}, "bob"),  # NUL reached PostgreSQL: INTERNAL
        (lambda w: {"period": "0000-01"}, "bob"),
        (
            lambda w: {
                "page_token": _page_token(
                    {"query": "leaderboard", "rule_set": None, "period": None, "offset": 2**63}
                )
            },
            "bob",
        ),
        (
            lambda w: {
                "page_token": _page_token(
                    {"query": "leaderboard", "rule_set": None, "period": None, "offset": 2**63 - 1}
                )
            },
            "bob",
        ),
    ],
    # NULs in names are refused cleanly; an invalid Timestamp (nanos -1, seconds past year 9999)
    # made protobuf raise ValueError: INTERNAL.
    "CreateTable": [
        (lambda w: {"rule_set": RuleSet(name="house\x00"), "seat_count": 2}, "alice"),
    ],
    "CreateTournament": [
        (lambda w: {**_CUP, "display_name": "cup\x00"}, "operator"),
        (lambda w: {**_CUP, "rule_set": RuleSet(name="house\x00")}, "operator"),
        (
            lambda w: {**_CUP, "registration_close_time": Timestamp(seconds=1, nanos=-1)},
            "operator",
        ),
        (
            lambda w: {**_CUP, "registration_open_time": Timestamp(seconds=2**63 - 1)},
            "operator",
        ),
        # A seating seed was drawn for every round asked for, before the domain refused more than
        # 50: 2^31-1 rounds never answered (and would have filled the memory).
        (lambda w: {**_CUP, "rounds": 2**31 - 1}, "operator"),
    ],
    "RevokePlayerTokens": [  # one request id, two players: the second is REQUEST_ID_REUSED
        (lambda w: {"request_id": "pinned-revoke", "player": w.player_names[2]}, "operator"),
        (lambda w: {"request_id": "pinned-revoke", "player": w.player_names[1]}, "operator"),
    ],
    "WatchTable": [  # a live wait cut short by its deadline logged a false database outage
        (lambda w: {"table": w.names[0], "after_version": 2**63 - 1}, "alice"),
    ],
}
"""By RPC: (request fields from the world, who sends it), sent before the generated requests."""

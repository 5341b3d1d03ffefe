"""The OperatorService over a real server: the tables awaited, the stuck ones, a forced timeout,
and every refusal (writing nothing)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Api, bearer, error_reason

from sapsam_proto.v1 import (
    operator_service_pb2,
    operator_service_pb2_grpc,
    table_pb2,
    table_service_pb2,
)


def operator_call(api: Api, method: str, request: Any, token: str = OPERATOR_TOKEN) -> Any:
    stub = operator_service_pb2_grpc.OperatorServiceStub(api.channel)
    response = getattr(stub, method)(request, metadata=bearer(token))
    api.record(response, "operator")  # type: ignore[arg-type]
    return response


def refused(
    api: Api, method: str, request: object, token: str = OPERATOR_TOKEN
) -> tuple[object, str]:
    before = api.event_count()
    with pytest.raises(grpc.RpcError) as caught:
        operator_call(api, method, request, token)
    assert api.event_count() == before, "a refused call wrote something"
    code, reason, _, _ = error_reason(caught.value)
    return code, reason


def dealt_table(api: Api) -> tuple[str, list]:
    table, players = api.seated_table(2, "pagat")
    api.call(
        "StartDeal",
        table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table),
        players[0].token,
    )
    view = api.call("GetTable", table_service_pb2.GetTableRequest(name=table), players[0].token)
    cutter = next(player for player in players if player.seat == view.table.cutter_seat)
    api.call(
        "CutDeck",
        table_service_pb2.CutDeckRequest(
            request_id=str(uuid.uuid4()), seat=cutter.seat, position=7
        ),
        cutter.token,
    )
    return table, players


def force(
    table: str, seat: int, request_id: str = ""
) -> operator_service_pb2.ForceSeatTimeoutRequest:
    return operator_service_pb2.ForceSeatTimeoutRequest(
        request_id=request_id or str(uuid.uuid4()), table=table, seat=seat
    )


def test_the_operator_sees_whom_each_table_awaits_and_forces_timeouts(api: Api) -> None:
    table, players = dealt_table(api)
    listed = operator_call(
        api,
        "GetAwaitedTables",
        operator_service_pb2.GetAwaitedTablesRequest(phases=[table_pb2.TABLE_PHASE_ARRANGING]),
    )
    (line,) = [entry for entry in listed.tables if entry.table == table]
    assert line.phase == table_pb2.TABLE_PHASE_ARRANGING
    assert line.awaiting == operator_service_pb2.AWAITING_SEATS
    assert list(line.seats) == [0, 1]
    assert set(line.players) == {player.name for player in players}
    assert line.waiting_since.seconds > 0 and line.deadline_time.seconds > 0
    assert not line.past_deadline
    # Not stuck yet: within its deadline, and no threshold asked for.
    stuck = operator_call(api, "GetStuckTables", operator_service_pb2.GetStuckTablesRequest())
    assert table not in [entry.table for entry in stuck.tables]
    # Waiting longer than one second: it is, once a second has passed.
    time.sleep(1.1)
    stuck = operator_call(
        api,
        "GetStuckTables",
        operator_service_pb2.GetStuckTablesRequest(waiting_longer_than_seconds=1),
    )
    assert table in [entry.table for entry in stuck.tables]

    request_id = str(uuid.uuid4())
    forced = operator_call(api, "ForceSeatTimeout", force(table, 1, request_id))
    assert forced.table.phase == table_pb2.TABLE_PHASE_ARRANGING
    # A retry returns the original answer and records nothing more.
    before = api.event_count()
    again = operator_call(api, "ForceSeatTimeout", force(table, 1, request_id))
    assert again.table == forced.table and api.event_count() == before
    timed_out = [
        event for event in api.logged_events(table) if type(event).__name__ == "SeatTimedOut"
    ]
    assert [(event.seat, event.stage) for event in timed_out] == [(1, "arranging")]
    # The same seat again: not awaited any more.
    assert refused(api, "ForceSeatTimeout", force(table, 1)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOTHING_TIMED_OUT",
    )
    # The last seat: the reveals open with nobody to reveal; the seed is revealed and scored.
    done = operator_call(api, "ForceSeatTimeout", force(table, 0))
    assert done.table.phase == table_pb2.TABLE_PHASE_BETWEEN_DEALS
    listed = operator_call(api, "GetAwaitedTables", operator_service_pb2.GetAwaitedTablesRequest())
    (line,) = [entry for entry in listed.tables if entry.table == table]
    assert line.awaiting == operator_service_pb2.AWAITING_ANYONE and not line.seats


def test_refusals_write_nothing(api: Api) -> None:
    table, players = api.seated_table(2, "pagat")
    player_token = players[0].token
    for method, request in (
        ("ForceSeatTimeout", force(table, 0)),
        ("GetAwaitedTables", operator_service_pb2.GetAwaitedTablesRequest()),
        ("GetStuckTables", operator_service_pb2.GetStuckTablesRequest()),
    ):
        assert refused(api, method, request, player_token) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "OPERATOR_ONLY",
        )
    assert refused(api, "ForceSeatTimeout", force(table, 0)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "WRONG_PHASE",
    )
    unknown = f"tables/{uuid.uuid4()}"
    assert refused(api, "ForceSeatTimeout", force(unknown, 0)) == (
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
    )
    code, _ = refused(api, "ForceSeatTimeout", force("tables/nope", 0))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    dealt, _ = dealt_table(api)
    assert refused(api, "ForceSeatTimeout", force(dealt, 2)) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "UNKNOWN_SEAT",
    )
    assert (
        refused(api, "GetAwaitedTables", operator_service_pb2.GetAwaitedTablesRequest(limit=1001))[
            0
        ]
        == grpc.StatusCode.INVALID_ARGUMENT
    )
    assert (
        refused(
            api,
            "GetStuckTables",
            operator_service_pb2.GetStuckTablesRequest(waiting_longer_than_seconds=0),
        )[0]
        == grpc.StatusCode.INVALID_ARGUMENT
    )

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
    too_many_phases = operator_service_pb2.GetAwaitedTablesRequest(
        phases=[table_pb2.TABLE_PHASE_ARRANGING] * 12
    )
    assert refused(api, "GetAwaitedTables", too_many_phases)[0] == grpc.StatusCode.INVALID_ARGUMENT
    assert (
        refused(
            api,
            "GetStuckTables",
            operator_service_pb2.GetStuckTablesRequest(waiting_longer_than_seconds=0),
        )[0]
        == grpc.StatusCode.INVALID_ARGUMENT
    )


def void(deal: str, reason: str = "a client crashed") -> operator_service_pb2.VoidDealRequest:
    return operator_service_pb2.VoidDealRequest(
        request_id=str(uuid.uuid4()), deal=deal, reason=reason
    )


def test_the_operator_voids_a_deal_and_the_next_one_starts(api: Api) -> None:
    table, players = dealt_table(api)
    deal = f"{table}/deals/1"
    before = api.call(
        "GetDealResult", table_service_pb2.GetDealResultRequest(name=deal), players[0].token
    ).result
    assert not before.seed_revealed and not before.seed
    for bad in (void(f"{table}/deals/2"), void(deal, ""), void(deal, "x" * 201)):
        code, _ = refused(api, "VoidDeal", bad)
        assert code in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT)
    assert refused(api, "VoidDeal", void(deal), players[0].token) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "OPERATOR_ONLY",
    )
    request = void(deal)
    voided = operator_call(api, "VoidDeal", request)
    assert voided.table.phase == table_pb2.TABLE_PHASE_BETWEEN_DEALS
    assert len(voided.seed) == 32
    # A retry answers the same, recording nothing more.
    count = api.event_count()
    assert operator_call(api, "VoidDeal", request) == voided and api.event_count() == count
    events = api.logged_events(table)
    assert type(events[-1]).__name__ == "DealVoided"
    assert events[-1].seed == voided.seed.hex() and events[-1].reason == "a client crashed"
    assert not any(type(event).__name__ in ("SeedRevealed", "DealScored") for event in events)
    # Nothing left to void; the next deal starts, numbered 2.
    assert refused(api, "VoidDeal", void(deal)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "WRONG_PHASE",
    )
    started = api.call(
        "StartDeal",
        table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table),
        players[0].token,
    )
    assert started.deal == f"{table}/deals/2"
    unknown = f"tables/{uuid.uuid4()}/deals/1"
    assert refused(api, "VoidDeal", void(unknown)) == (
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
    )


def replace(seat: str, player: str) -> operator_service_pb2.ReplaceSeatRequest:
    return operator_service_pb2.ReplaceSeatRequest(
        request_id=str(uuid.uuid4()), seat=seat, player=player
    )


def test_the_operator_gives_a_seat_to_another_player_between_deals(api: Api) -> None:
    table, players = dealt_table(api)
    newcomer = api.register("newcomer")
    seat = f"{table}/seats/1"
    # Mid-deal: refused; end the deal first.
    assert refused(api, "ReplaceSeat", replace(seat, newcomer.name)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "WRONG_PHASE",
    )
    operator_call(api, "VoidDeal", void(f"{table}/deals/1"))
    assert refused(api, "ReplaceSeat", replace(seat, newcomer.name), players[0].token) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "OPERATOR_ONLY",
    )
    assert refused(api, "ReplaceSeat", replace(seat, players[0].name)) == (
        grpc.StatusCode.ALREADY_EXISTS,
        "ALREADY_SEATED",
    )
    unknown = f"players/{uuid.uuid4()}"
    assert refused(api, "ReplaceSeat", replace(seat, unknown)) == (
        grpc.StatusCode.NOT_FOUND,
        "PLAYER_NOT_FOUND",
    )
    assert refused(api, "ReplaceSeat", replace(f"{table}/seats/5", newcomer.name)) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "UNKNOWN_SEAT",
    )
    replaced = operator_call(api, "ReplaceSeat", replace(seat, newcomer.name))
    assert replaced.table.seats[1].player == newcomer.name
    events = api.logged_events(table)
    assert type(events[-1]).__name__ == "SeatReplaced"
    previous = next(p for p in players if p.seat == seat)
    assert events[-1].previous_player_id == previous.name.removeprefix("players/")
    # The newcomer plays from the next deal on; the previous player holds no seat any more.
    api.call(
        "StartDeal",
        table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table),
        newcomer.token,
    )
    with pytest.raises(grpc.RpcError) as caught:
        api.call(
            "StartDeal",
            table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table),
            previous.token,
        )
    assert error_reason(caught.value)[1] == "NOT_SEATED"

    # The seat's moves are the newcomer's now (the servicer checked the seat against who held it
    # when every seat was first taken, and refused the newcomer), and no longer the previous's.
    def entropy(player: Any) -> Any:
        return api.call(
            "ContributeEntropy",
            table_service_pb2.ContributeEntropyRequest(
                request_id=str(uuid.uuid4()), seat=seat, entropy=b"newcomer"
            ),
            player.token,
        )

    with pytest.raises(grpc.RpcError) as caught:
        entropy(previous)
    assert error_reason(caught.value)[1] == "NOT_YOUR_SEAT"
    entropy(newcomer)

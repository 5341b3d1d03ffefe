"""The stuck tables as a health detail: ``sapsam.tables.stuck`` turns NOT_SERVING while a table
is past its deadline with nobody timing it out, and back once the operator moves it on."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import grpc
import psycopg
import pytest
from api_client import OPERATOR_TOKEN, Api, bearer
from grpc_health.v1 import health_pb2, health_pb2_grpc
from serving import TEST_SERVER_KEYS, serving

from sapsam.api.server import RunningServer, Services
from sapsam.api.stuck_tables_health import STUCK_HEALTH_NAME
from sapsam.cli.bootstrap import build_services
from sapsam_proto.v1 import operator_service_pb2, operator_service_pb2_grpc, table_service_pb2


@pytest.fixture
def quick_server(database_url: str) -> Iterator[RunningServer]:
    services = build_services(
        database_url, pool_size=4, server_keys=TEST_SERVER_KEYS, stuck_check_seconds=0.2
    )
    with serving(database_url, services=services) as running:
        yield running


def wait_for_health(channel: grpc.Channel, expected: int, timeout: float = 20) -> None:
    stub = health_pb2_grpc.HealthStub(channel)
    give_up = time.monotonic() + timeout
    status = None
    while time.monotonic() < give_up:
        try:
            status = stub.Check(health_pb2.HealthCheckRequest(service=STUCK_HEALTH_NAME)).status
        except grpc.RpcError:
            status = None  # not reported yet
        if status == expected:
            return
        time.sleep(0.1)
    raise AssertionError(f"health of {STUCK_HEALTH_NAME} stayed {status}, not {expected}")


def test_a_stuck_table_turns_the_health_detail_not_serving(
    quick_server: RunningServer, database_url: str
) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{quick_server.port}") as channel:
        api = Api(channel, database_url)
        wait_for_health(channel, health_pb2.HealthCheckResponse.SERVING)
        table, players = api.seated_table(2, "pagat")
        api.call(
            "StartDeal",
            table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table),
            players[0].token,
        )
        view = api.call("GetTable", table_service_pb2.GetTableRequest(name=table), OPERATOR_TOKEN)
        cutter = next(player for player in players if player.seat == view.table.cutter_seat)
        api.call(
            "CutDeck",
            table_service_pb2.CutDeckRequest(
                request_id=str(uuid.uuid4()), seat=cutter.seat, position=5
            ),
            cutter.token,
        )
        # As if its deadline had passed an hour ago and no sweeper had acted: the read model's
        # deadline moved back (the log's own deadline, 90 s ahead, keeps the sweeper away).
        with psycopg.connect(database_url, autocommit=True) as connection:
            connection.execute(
                "UPDATE table_state SET deadline_ms = deadline_ms - 3600000 WHERE table_id = %s",
                [table.removeprefix("tables/")],
            )
        wait_for_health(channel, health_pb2.HealthCheckResponse.NOT_SERVING)
        # The server's own health is untouched: it still takes calls.
        health = health_pb2_grpc.HealthStub(channel)
        overall = health.Check(health_pb2.HealthCheckRequest(service="")).status
        assert overall == health_pb2.HealthCheckResponse.SERVING
        operator = operator_service_pb2_grpc.OperatorServiceStub(channel)
        stuck = operator.GetStuckTables(
            operator_service_pb2.GetStuckTablesRequest(), metadata=bearer(OPERATOR_TOKEN)
        )
        assert [entry.table for entry in stuck.tables] == [table]
        for seat in (0, 1):
            operator.ForceSeatTimeout(
                operator_service_pb2.ForceSeatTimeoutRequest(
                    request_id=str(uuid.uuid4()), table=table, seat=seat
                ),
                metadata=bearer(OPERATOR_TOKEN),
            )
        wait_for_health(channel, health_pb2.HealthCheckResponse.SERVING)


def _quick_services(database_url: str, waiting_seconds: int | None) -> Services:
    return build_services(
        database_url,
        pool_size=4,
        server_keys=TEST_SERVER_KEYS,
        stuck_check_seconds=0.2,
        stuck_waiting_seconds=waiting_seconds,
    )


def test_a_table_that_simply_waits_counts_once_the_server_has_a_threshold(
    database_url: str,
) -> None:
    # A table without deadlines that waits for someone to start its first deal: never past a
    # deadline, so stuck only for a server given a threshold (sapsam serve
    # --waiting-longer-than), as `sapsam tables stuck --waiting-longer-than` lists it.
    with (
        serving(database_url, services=_quick_services(database_url, None)) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        table, _ = Api(channel, database_url).seated_table(2, "pagat")
        time.sleep(1.5)  # several checks, the table waiting longer than 1 s
        wait_for_health(channel, health_pb2.HealthCheckResponse.SERVING)
    with (
        serving(database_url, services=_quick_services(database_url, 1)) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        wait_for_health(channel, health_pb2.HealthCheckResponse.NOT_SERVING)
        operator = operator_service_pb2_grpc.OperatorServiceStub(channel)
        listed = operator.GetStuckTables(
            operator_service_pb2.GetStuckTablesRequest(waiting_longer_than_seconds=1),
            metadata=bearer(OPERATOR_TOKEN),
        )
        assert [entry.table for entry in listed.tables] == [table]

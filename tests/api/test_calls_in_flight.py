"""A player gets a bounded number of unary calls running at once (each may hold a thread of the
bridge every caller shares): beyond it RATE_LIMITED with RetryInfo, while other players go on."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import psycopg
import pytest
from api_client import OPERATOR_TOKEN, Api, bearer, error_reason

from sapsam.api.limits import CallerLimits
from sapsam.api.server import ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam.store import write_stamps
from sapsam_proto.v1 import player_service_pb2, table_service_pb2

IN_FLIGHT = 2


@pytest.fixture
def api(database_url: str) -> Iterator[Api]:
    limits = CallerLimits(calls_in_flight_per_caller=IN_FLIGHT)
    running = start_server(
        ServerConfig(
            listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=1, limits=limits
        ),
        build_services(database_url),
    )
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            yield Api(channel, database_url)
    finally:
        running.stop()


def _lock_waiters(database_url: str) -> int:
    with psycopg.connect(database_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_player_has_a_few_calls_running_at_once(api: Api) -> None:
    table, players = api.seated_table(2, "pagat")
    busy, other = players
    get_table = table_service_pb2.GetTableRequest(name=table)
    with ThreadPoolExecutor(max_workers=IN_FLIGHT) as pool:
        with psycopg.connect(api.database_url) as locker:
            locker.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")  # reads wait under it
            # The server's copy of the table is current (it served every write): make it stale,
            # so GetTable reads the log, and waits under the lock.
            write_stamps.stamps().bump("table-" + table.rsplit("/", 1)[1])
            stuck = [
                pool.submit(api.tables.GetTable, get_table, metadata=bearer(busy.token), timeout=30)
                for _ in range(IN_FLIGHT)
            ]
            deadline = time.monotonic() + 30
            while _lock_waiters(api.database_url) < IN_FLIGHT:
                assert time.monotonic() < deadline, "the calls never reached the lock"
                time.sleep(0.05)
            with pytest.raises(grpc.RpcError) as raised:
                api.tables.GetTable(get_table, metadata=bearer(busy.token), timeout=10)
            code, reason, _, _ = error_reason(raised.value)
            assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
            # Another player is not held up by it.
            request = player_service_pb2.GetPlayerRequest(name=other.name)
            assert api.call("GetPlayer", request, other.token).player.name == other.name
            locker.rollback()
        assert all(call.result(timeout=30).table.name == table for call in stuck)
    assert api.call("GetTable", get_table, busy.token).table.name == table  # slots freed

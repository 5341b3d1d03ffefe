"""One player's calls stuck on the database cannot take every pooled connection: with the
default limits and the default pool, another player's call is still served."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import psycopg
from api_client import Api, bearer
from serving import serving

from sapsam.api.limits import CallerLimits
from sapsam.cli.bootstrap import POOL_SIZE
from sapsam.store import write_stamps
from sapsam_proto.v1 import player_service_pb2, table_service_pb2


def _lock_waiters(database_url: str) -> int:
    with psycopg.connect(database_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_one_players_stuck_calls_leave_connections_for_others(database_url: str) -> None:
    in_flight = CallerLimits().calls_in_flight_per_caller
    with (
        serving(database_url, pool_size=POOL_SIZE) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        api = Api(channel, database_url)
        table, (busy, other) = api.seated_table(2, "pagat")
        get_table = table_service_pb2.GetTableRequest(name=table)
        metadata = bearer(busy.token)
        with ThreadPoolExecutor(max_workers=in_flight) as pool:
            with psycopg.connect(database_url) as locker:
                locker.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")  # reads wait
                # The server's copy of the table is current: make it stale, so GetTable reads
                # the log and waits.
                write_stamps.stamps().bump("table-" + table.rsplit("/", 1)[1])
                stuck = [
                    pool.submit(api.tables.GetTable, get_table, metadata=metadata, timeout=60)
                    for _ in range(in_flight)
                ]
                deadline = time.monotonic() + 30
                while _lock_waiters(database_url) < min(in_flight, POOL_SIZE):
                    assert time.monotonic() < deadline, "the calls never reached the lock"
                    time.sleep(0.05)
                request = player_service_pb2.GetPlayerRequest(name=other.name)
                response = api.players.GetPlayer(request, metadata=bearer(other.token), timeout=5)
                assert response.player.name == other.name
                locker.rollback()
            for call in stuck:
                assert call.result(timeout=60).table.name == table

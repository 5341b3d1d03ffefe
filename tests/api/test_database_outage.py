"""Losing the database connections: calls are answered UNAVAILABLE (retry with the same request
id), never INTERNAL, and the server recovers on its own once the database answers again."""

from __future__ import annotations

import time
import uuid

import grpc
import psycopg
import pytest
from api_client import Api, Watcher, error_reason
from psycopg import errors
from psycopg_pool import PoolTimeout

from sapsam.api.errors import status_for_exception
from sapsam.api.server import RunningServer
from sapsam.store import write_stamps
from sapsam_proto.v1 import table_service_pb2


def _terminate_server_connections(database_url: str) -> int:
    """End every other session on the test database, as a PostgreSQL restart would, and wait
    until those sessions are gone (the server's pool may open new ones meanwhile)."""
    with psycopg.connect(database_url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pid FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
        pids = [row[0] for row in rows]
        admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", [pids])
        deadline = time.monotonic() + 30
        while admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids]
        ).fetchone() != (0,):
            assert time.monotonic() < deadline, "sessions survived pg_terminate_backend"
            time.sleep(0.02)
    return len(pids)


def test_calls_after_the_connections_died_are_unavailable_then_recover(
    server: RunningServer, api: Api, database_url: str
) -> None:
    table, players = api.seated_table(2, "pagat", series_length=1)
    request = table_service_pb2.GetTableRequest(name=table)
    api.call("GetTable", request, players[0].token)
    assert _terminate_server_connections(database_url) > 0

    failures = []
    for _ in range(64):
        # The server's copy is current and would answer without the database: make it stale, so
        # each GetTable reads the log through the pool.
        write_stamps.stamps().bump("table-" + table.rsplit("/", 1)[1])
        try:
            api.call("GetTable", request, players[0].token)
            break
        except grpc.RpcError as error:
            code, reason, _, _ = error_reason(error)
            failures.append((code, reason))
    else:
        raise AssertionError("the server never recovered")
    # The server's background work may meet the dead connections first; whatever calls do meet
    # one are told to retry.
    assert set(failures) <= {(grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE")}, failures

    # Writes work again too, and a retried request id is still answered once.
    start = table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table)
    first = api.call("StartDeal", start, players[0].token)
    again = api.call("StartDeal", start, players[0].token)
    assert first == again


@pytest.mark.parametrize(
    ("error", "retry"),
    [
        (psycopg.OperationalError("connection lost"), True),  # no SQLSTATE: the client's view
        (PoolTimeout("no connection free in time"), True),
        (errors.AdminShutdown(), True),
        (errors.CannotConnectNow(), True),
        (errors.TooManyConnections(), True),
        (errors.SerializationFailure(), True),
        (errors.DeadlockDetected(), True),
        (errors.LockNotAvailable(), True),
        (errors.QueryCanceled(), False),  # a statement timeout would strike again
        (errors.ProgramLimitExceeded(), False),
        (errors.ObjectNotInPrerequisiteState(), False),
        (errors.UniqueViolation(), False),
        (RuntimeError("a bug"), False),
    ],
)
def test_only_a_database_out_of_reach_is_unavailable(error: Exception, retry: bool) -> None:
    status = status_for_exception(error, "/sapsam.v1.TableService/GetTable")
    expected = grpc.StatusCode.UNAVAILABLE if retry else grpc.StatusCode.INTERNAL
    assert status.code == expected


def test_a_watch_across_the_outage_misses_nothing_once_resumed(
    server: RunningServer, api: Api, database_url: str
) -> None:
    table, players = api.seated_table(2, "pagat", series_length=1)
    spectator = api.register("spectator")
    watcher = Watcher(api, table, spectator.token)
    watcher.wait_for(lambda: len(watcher.messages) >= len(api.logged_events(table)))
    _terminate_server_connections(database_url)

    # The move may meet a dead connection first: the client retries with the same request id.
    start = table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table)
    for _ in range(16):
        try:
            api.call("StartDeal", start, players[0].token)
            break
        except grpc.RpcError as error:
            assert error_reason(error)[:2] == (
                grpc.StatusCode.UNAVAILABLE,
                "DATABASE_UNAVAILABLE",
            )
    logged = api.logged_events(table)

    # The stream either carried on or ended with UNAVAILABLE; resumed from the last version it
    # delivered, it gives every event, in order, once.
    def delivered_all() -> bool:
        return len(watcher.messages) >= len(logged) or watcher.error is not None

    watcher.wait_for(delivered_all)
    received = [response.event.version for response in watcher.messages]
    if watcher.error is not None:
        assert isinstance(watcher.error, grpc.RpcError)
        code, reason, _, _ = error_reason(watcher.error)
        assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE")
        resumed = Watcher(api, table, spectator.token, after_version=received[-1])
        resumed.wait_for(lambda: len(received) + len(resumed.messages) >= len(logged))
        received += [response.event.version for response in resumed.messages]
        resumed.cancel()
    watcher.cancel()
    assert received == list(range(1, len(logged) + 1))

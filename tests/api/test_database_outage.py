"""Losing the database connections: calls are answered UNAVAILABLE (retry with the same request
id), never INTERNAL, and the server recovers on its own once the database answers again."""

from __future__ import annotations

import time
import uuid

import grpc
import psycopg
from api_client import Api, error_reason

from sapsam.api.generated.v1 import table_service_pb2
from sapsam.api.server import RunningServer

_OTHER_SESSIONS = (
    "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
)


def _terminate_server_connections(database_url: str) -> int:
    """End every other session on the test database, as a PostgreSQL restart would, and wait
    until they are gone."""
    with psycopg.connect(database_url, autocommit=True) as admin:
        ended = len(admin.execute(f"SELECT pg_terminate_backend(pid) {_OTHER_SESSIONS}").fetchall())
        deadline = time.monotonic() + 30
        while admin.execute(f"SELECT count(*) {_OTHER_SESSIONS}").fetchone() != (0,):
            assert time.monotonic() < deadline, "sessions survived pg_terminate_backend"
            time.sleep(0.02)
    return ended


def test_calls_after_the_connections_died_are_unavailable_then_recover(
    server: RunningServer, api: Api, database_url: str
) -> None:
    table, players = api.seated_table(2, "pagat", series_length=1)
    request = table_service_pb2.GetTableRequest(name=table)
    api.call("GetTable", request, players[0].token)
    assert _terminate_server_connections(database_url) > 0

    failures = []
    for _ in range(64):
        try:
            api.call("GetTable", request, players[0].token)
            break
        except grpc.RpcError as error:
            code, reason, _, _ = error_reason(error)
            failures.append((code, reason))
    else:
        raise AssertionError("the server never recovered")
    # At least the call on the first dead connection fails, and every failure says "retry".
    assert failures
    assert set(failures) == {(grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE")}, failures

    # Writes work again too, and a retried request id is still answered once.
    start = table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table)
    first = api.call("StartDeal", start, players[0].token)
    again = api.call("StartDeal", start, players[0].token)
    assert first == again

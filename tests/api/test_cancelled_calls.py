"""Calls cut off by their deadline at every point of their work (before, during and after the
append's transaction) leave the server's pool clean: no transaction left open, no connection
held, every connection usable again, and a retry with the same request id answers OK (the
original result if the cut-off append committed)."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import grpc
import psycopg
from api_client import bearer, error_reason
from serving import serving_api

from sapsam_proto.v1 import table_service_pb2

POOL_SIZE = 3
DEDICATED = 2  # the feed's LISTEN connection, the results follower's


def _server_connections(database_url: str) -> dict[str, int]:
    """The other sessions on this database by state: the server's pool and its two connections of
    its own (the event feed's LISTEN, the results follower's), as the test holds none open."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT coalesce(state, ''), count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND backend_type = 'client backend' GROUP BY 1"
        ).fetchall()
    return {str(state): int(count) for state, count in rows}


def test_calls_cut_off_anywhere_leave_the_pool_clean(database_url: str) -> None:
    with serving_api(database_url, pool_size=POOL_SIZE) as api:
        creator = api.register("creator")
        cut_off: list[table_service_pb2.CreateTableRequest] = []
        # Deadlines from 0.5 ms to 40 ms: some calls never start, some end inside the
        # transaction, some after the commit before the answer.
        for step in range(80):
            request = table_service_pb2.CreateTableRequest(
                request_id=str(uuid.uuid4()), rule_set_preset="pagat", seat_count=2
            )
            try:
                api.tables.CreateTable(
                    request, metadata=bearer(creator.token), timeout=0.0005 * (1 + step)
                )
            except grpc.RpcError as error:
                # UNAVAILABLE: too little time left to wait for a connection; RATE_LIMITED: the
                # server still works on earlier cut-off calls (they count in flight until they
                # end). Refusals the caller hears with their reason, never INTERNAL.
                if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                    code, reason, _, _ = error_reason(error)
                    assert (code, reason) in (
                        (grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE"),
                        (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED"),
                    ), (code, reason)
                cut_off.append(request)
        assert cut_off, "no call was cut off: the deadlines are too long for this machine"

        deadline = time.monotonic() + 20
        while True:
            states = _server_connections(database_url)
            left_open = {s: n for s, n in states.items() if s not in ("idle", "")}
            if not left_open and sum(states.values()) <= POOL_SIZE + DEDICATED:
                break
            assert time.monotonic() < deadline, f"server sessions not back to idle: {states}"
            time.sleep(0.1)

        # Every connection works: as many calls at once as the pool holds, twice over, each
        # a retry of a cut-off request (the original table if that append had committed).
        def retry(request: table_service_pb2.CreateTableRequest) -> str:
            response = api.tables.CreateTable(request, metadata=bearer(creator.token), timeout=30)
            return str(response.table.name)

        with ThreadPoolExecutor(max_workers=POOL_SIZE * 2) as pool:
            names = list(pool.map(retry, cut_off))
        assert len(set(names)) == len(cut_off)
        again = [retry(request) for request in cut_off[:5]]
        assert again == names[:5]  # replayed, not created twice

"""Streams that scale: one server process with hundreds of open WatchTable streams still answers
health checks and ordinary calls at once, an append reaches every stream, and a consumer that
cannot keep up is ended STREAM_BEHIND and resumes from its version.

Real server, real sockets, real PostgreSQL. The time bounds are correctness bounds (a stream must
never hold what other calls need, as a thread per stream did), far above what the calls take: every
health check answers within its 5 s deadline, and the median call within 1 s (a bound on the
maximum failed on a machine loaded by other work, where one call in twenty waited for the CPU).
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, bearer, error_reason
from grpc_health.v1 import health_pb2, health_pb2_grpc
from scenarios import Seated, World
from serving import serving

from sapsam.api.server import RunningServer
from sapsam.api.watch import AFTER_VERSION_KEY
from sapsam_proto.v1 import table_service_pb2, table_service_pb2_grpc

PLAYERS = 10
STREAMS_PER_PLAYER = 30  # within the default limit of 32 open streams per player
CALL_BOUND_SECONDS = 1.0


def _eventually(check: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


@pytest.fixture
def running(database_url: str) -> Iterator[RunningServer]:
    # A watcher may have only 4 events waiting, so that a stalled client overflows quickly.
    with serving(database_url, watch_buffer_events=4) as server:
        yield server


@pytest.fixture
def world(running: RunningServer, database_url: str) -> Iterator[World]:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        yield World(channel, database_url)


def test_hundreds_of_streams_leave_health_and_calls_fast_and_all_hear_an_append(
    running: RunningServer, world: World
) -> None:
    creator = world.player("creator")
    table = world.table_call(
        "CreateTable",
        table_service_pb2.CreateTableRequest(
            request_id=str(uuid.uuid4()), seat_count=4, rule_set_preset="pagat"
        ),
        creator.token,
    ).table.name
    address = f"127.0.0.1:{running.port}"
    channels = [grpc.insecure_channel(address) for _ in range(PLAYERS)]
    streams: list[Any] = []
    try:
        for index, channel in enumerate(channels):
            watcher = world.player(f"watcher {index}")
            stub = table_service_pb2_grpc.TableServiceStub(channel)
            streams += [
                stub.WatchTable(
                    table_service_pb2.WatchTableRequest(table=table, after_version=1),
                    metadata=bearer(watcher.token),
                    timeout=120,
                )
                for _ in range(STREAMS_PER_PLAYER)
            ]
        expected = PLAYERS * STREAMS_PER_PLAYER
        _eventually(lambda: running.gate.in_flight >= expected, f"{expected} streams open")

        health = health_pb2_grpc.HealthStub(channels[0])
        check = health_pb2.HealthCheckRequest(service="")
        get_table = table_service_pb2.GetTableRequest(name=table)
        health_times = [_timed(lambda: health.Check(check, timeout=5)) for _ in range(20)]
        call_times = [
            _timed(lambda: world.table_call("GetTable", get_table, OPERATOR_TOKEN))
            for _ in range(20)
        ]
        assert statistics.median(health_times) < CALL_BOUND_SECONDS, health_times
        assert statistics.median(call_times) < CALL_BOUND_SECONDS, call_times
        assert health.Check(check).status == health_pb2.HealthCheckResponse.SERVING

        joiner = world.player("joiner")
        world.table_call(
            "JoinTable",
            table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table),
            joiner.token,
        )
        for stream in streams:
            event = next(stream).event
            assert (event.version, event.type) == (2, "PlayerSeated")
    finally:
        for stream in streams:
            stream.cancel()
        for channel in channels:
            channel.close()


def _versions_until_error(stream: Any) -> tuple[list[int], grpc.RpcError | None]:
    versions: list[int] = []
    try:
        for response in stream:
            versions.append(response.event.version)
    except grpc.RpcError as error:
        return versions, error
    return versions, None


def _table_version(world: World, seated: Seated) -> int:
    table = world.table_call(
        "GetTable", table_service_pb2.GetTableRequest(name=seated.table), OPERATOR_TOKEN
    ).table
    return int(table.version)


def test_a_consumer_that_falls_behind_is_ended_stream_behind_and_resumes(
    running: RunningServer, world: World
) -> None:
    seated = world.seated(seat_count=2, series_length=10)
    start = _table_version(world, seated)
    # A client that reads nothing: no read-ahead beyond a small window, so its stream stalls.
    stalled_channel = grpc.insecure_channel(
        f"127.0.0.1:{running.port}",
        options=[("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)],
    )
    token = seated.players[0].token
    stub = table_service_pb2_grpc.TableServiceStub(stalled_channel)
    try:
        stream = stub.WatchTable(
            table_service_pb2.WatchTableRequest(table=seated.table, after_version=start),
            metadata=bearer(token),
            timeout=120,
        )
        _eventually(lambda: running.gate.in_flight >= 1, "the stream open")
        for _ in range(3):  # a deal records 12 events: far more than the window and the buffer
            world.played(seated)
        head = _table_version(world, seated)

        versions, error = _versions_until_error(stream)
        assert error is not None, "the stalled stream was never ended"
        code, reason, info, _ = error_reason(error)
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "STREAM_BEHIND")
        resume_after = int(info.metadata[AFTER_VERSION_KEY])
        assert versions == list(range(start + 1, resume_after + 1))  # in order, none skipped
        assert resume_after < head

        # It resumes from its version and gets the rest, in order, none missed.
        resumed = stub.WatchTable(
            table_service_pb2.WatchTableRequest(table=seated.table, after_version=resume_after),
            metadata=bearer(token),
            timeout=30,
        )
        rest = [next(resumed).event.version for _ in range(head - resume_after)]
        resumed.cancel()
        assert rest == list(range(resume_after + 1, head + 1))
    finally:
        stalled_channel.close()

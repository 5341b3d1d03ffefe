"""SIGTERM to a real `sapsam serve` process: calls in flight finish, or are answered UNAVAILABLE
(reason SERVER_STOPPING, retryable) — never CANCELLED — and so are calls that arrive meanwhile and
open WatchTable streams; SDK players playing a series carry on across a restart of the server."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import grpc
import psycopg
import pytest
from api_client import OPERATOR_TOKEN, Api, bearer, error_reason
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status
from test_two_processes import free_port, serve_command

from sapsam.store import write_stamps
from sapsam_client import connect, solver_arranger
from sapsam_client.seat import Seat
from sapsam_proto.v1 import player_service_pb2, table_service_pb2

GRACE_SECONDS = 1.0


class Serve:
    """One `sapsam serve` process on a fixed port."""

    def __init__(self, database_url: str, port: int) -> None:
        self.port = port
        # A file, not a pipe: a full pipe would stall the server's logging, and the server.
        self.stderr = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed by kill()
        self.process = subprocess.Popen(
            serve_command(database_url, port, "--grace-seconds", str(GRACE_SECONDS)),
            env={**os.environ, "SAPSAM_OPERATOR_TOKEN": OPERATOR_TOKEN},
            stdout=subprocess.DEVNULL,
            stderr=self.stderr,
        )

    def wait_until_serving(self, timeout: float = 60) -> None:
        with grpc.insecure_channel(f"127.0.0.1:{self.port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            deadline = time.monotonic() + timeout
            while True:
                assert self.process.poll() is None, self.log()
                try:
                    response = health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if response.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)

    def terminate(self) -> None:
        self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float = 60) -> int:
        return self.process.wait(timeout)

    def log(self) -> str:
        return self.full_log()[-4000:]

    def full_log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.stderr.close()


@pytest.fixture
def serve(database_url: str) -> Iterator[Serve]:
    server = Serve(database_url, free_port())
    try:
        server.wait_until_serving()
        yield server
    finally:
        server.kill()


def _outcome(call: Future[object]) -> tuple[str, str]:
    """(status code, ErrorInfo reason or '-') of a finished call."""
    error = call.exception(timeout=60)
    if error is None:
        return "OK", "-"
    assert isinstance(error, grpc.RpcError), error
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    reason = error_reason(error)[1] if status is not None else "-"
    return error.code().name, reason


def _watch(api: Api, table: str, token: str) -> grpc.RpcError | None:
    stream = api.tables.WatchTable(
        table_service_pb2.WatchTableRequest(table=table), metadata=bearer(token)
    )
    try:
        for _ in stream:
            pass
    except grpc.RpcError as error:
        return error
    return None


def _lock_waiters(database_url: str) -> int:
    with psycopg.connect(database_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_sigterm_answers_in_flight_calls_unavailable_never_cancelled(
    serve: Serve, database_url: str
) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{serve.port}") as channel:
        api = Api(channel, database_url)
        table, players = api.seated_table(2, "pagat", series_length=1)
        token = players[0].token
        get_table = table_service_pb2.GetTableRequest(name=table)
        get_player = player_service_pb2.GetPlayerRequest(name=players[1].name)
        with ThreadPoolExecutor(max_workers=8) as pool:
            stream = pool.submit(_watch, api, table, token)
            # A call stuck on the database past the grace period: the log is locked under it.
            with psycopg.connect(database_url) as locker:
                locker.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
                # The server's copy of the table is current: make it stale, so GetTable reads
                # the log (the stamps are shared by every process of the machine).
                write_stamps.stamps().bump("table-" + table.rsplit("/", 1)[1])
                stuck = pool.submit(
                    api.tables.GetTable, get_table, metadata=bearer(token), timeout=60
                )
                deadline = time.monotonic() + 30
                while _lock_waiters(database_url) == 0:
                    assert time.monotonic() < deadline, "the call never reached the lock"
                    time.sleep(0.05)

                # Calls keep arriving throughout the stop.
                stop_calling = threading.Event()
                # (the pool outlives the callers: they stop before it shuts down)
                racing: list[Future[object]] = []

                def keep_calling() -> None:
                    while not stop_calling.is_set():
                        call = pool.submit(
                            api.players.GetPlayer, get_player, metadata=bearer(token), timeout=30
                        )
                        racing.append(call)
                        call.exception(timeout=60)
                        time.sleep(0.01)

                callers = [threading.Thread(target=keep_calling) for _ in range(3)]
                for caller in callers:
                    caller.start()
                time.sleep(0.2)
                serve.terminate()
                assert serve.wait() == 0, serve.log()
                stop_calling.set()
                for caller in callers:
                    caller.join(60)
                locker.rollback()

            stream_error = stream.result(timeout=60)

    assert _outcome(stuck) == ("UNAVAILABLE", "SERVER_STOPPING")
    assert stream_error is not None
    assert (stream_error.code(), error_reason(stream_error)[1]) == (
        grpc.StatusCode.UNAVAILABLE,
        "SERVER_STOPPING",
    )
    outcomes = {_outcome(call) for call in racing}
    assert ("OK", "-") in outcomes
    # Refused by the stopping server (SERVER_STOPPING), or by grpc once its port closes: no
    # connection (UNAVAILABLE), or, for a call that arrived in that very instant and never ran,
    # CANCELLED, both without ErrorInfo. Every one is retried by the SDK.
    assert outcomes <= {
        ("OK", "-"),
        ("UNAVAILABLE", "SERVER_STOPPING"),
        ("UNAVAILABLE", "-"),
        ("CANCELLED", "-"),
    }, outcomes
    # sapsam itself answered no call CANCELLED: every call it ran is logged with its status.
    assert "CANCELLED" not in serve.full_log()


def test_sdk_players_finish_their_series_across_a_server_restart(database_url: str) -> None:
    port = free_port()
    first = Serve(database_url, port)
    second: Serve | None = None
    try:
        first.wait_until_serving()
        address = f"127.0.0.1:{port}"
        # 30 attempts: about 100 s of capped, jittered back-off, so the restart fits even on a
        # loaded machine (10 gave about 13 s, and a slow start-up failed the series there).
        clients = [connect(address, attempts=30, timeout=10) for _ in range(2)]
        for index, client in enumerate(clients):
            client.register(f"p{index}-{uuid.uuid4().hex[:6]}")
        table = clients[0].create_table(2, series_length=2).name
        seats = [client.join_table(table) for client in clients]
        failures: list[BaseException] = []
        scored: list[int] = []

        def play(seat: Seat) -> None:
            try:
                scored.append(len(seat.play_series(solver_arranger).results))
            except BaseException as error:
                failures.append(error)

        threads = [threading.Thread(target=play, args=(seat,)) for seat in seats]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 60
        while clients[0].get_table(table).deal_number < 2:  # the last deal is under way
            assert time.monotonic() < deadline and not failures, failures
            time.sleep(0.02)

        first.terminate()
        assert first.wait() == 0, first.log()
        second = Serve(database_url, port)
        second.wait_until_serving()
        for thread in threads:
            thread.join(120)
        assert failures == []
        assert scored == [2, 2]
        for client in clients:
            client.close()
    finally:
        first.kill()
        if second is not None:
            second.kill()

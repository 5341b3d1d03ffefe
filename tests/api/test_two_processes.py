"""Two `sapsam serve` processes on one database: players split across them finish a deal, and a
watcher on each process sees every event, in order. Both stop gracefully on SIGTERM."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Api, Watcher, hidden_information_violations
from free_ports import free_port
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sapsam.rules.presets import preset


def serve_command(database_url: str, port: int, *options: str) -> list[str]:
    """The command line of `sapsam serve` on ``database_url``, listening on ``port``."""
    return [
        sys.executable,
        "-m",
        "sapsam.cli",
        "serve",
        "--database-url",
        database_url,
        "--listen",
        f"127.0.0.1:{port}",
        *options,
    ]


class ServerProcess:
    """One `sapsam serve` child process."""

    def __init__(self, database_url: str) -> None:
        self.port = free_port()
        environment = {**os.environ, "SAPSAM_OPERATOR_TOKEN": OPERATOR_TOKEN}
        self.process = subprocess.Popen(
            serve_command(database_url, self.port),
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")

    def wait_until_serving(self, timeout: float = 60) -> None:
        health = health_pb2_grpc.HealthStub(self.channel)
        deadline = time.monotonic() + timeout
        while True:
            assert self.process.poll() is None, (
                self.process.stderr.read() if self.process.stderr else ""
            )
            try:
                status = health.Check(health_pb2.HealthCheckRequest(), timeout=1).status
                if status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)

    def stop(self) -> tuple[int, str]:
        """SIGTERM, then the exit code and everything it logged."""
        self.channel.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, log = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, log = self.process.communicate()
        return self.process.returncode, log


@pytest.fixture
def two_servers(database_url: str) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    servers = (ServerProcess(database_url), ServerProcess(database_url))
    try:
        for server in servers:
            server.wait_until_serving()
        yield servers
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.process.kill()
                server.process.communicate()


def test_players_split_across_two_processes_finish_a_deal(
    two_servers: tuple[ServerProcess, ServerProcess], database_url: str
) -> None:
    first, second = two_servers
    api = Api(first.channel, database_url)
    other = Api(second.channel, database_url)
    table, players = api.seated_table(4, "pagat", series_length=1)
    # Seats 1 and 3 play through the second process; the rest through the first.
    for player in players[1::2]:
        api.routes[player.token] = other
    spectator = api.register("spectator")
    watchers = [Watcher(api, table, spectator.token), Watcher(other, table, spectator.token)]

    api.play_deal(table, players, preset("pagat"), deal_index=0)

    logged = api.logged_events(table)
    for watcher in watchers:
        watcher.wait()
        streamed = [response.event for response in watcher.messages]
        assert [event.version for event in streamed] == list(range(1, len(logged) + 1))
        assert [event.type for event in streamed] == [event.TYPE for event in logged]
        assert hidden_information_violations(watcher.observations, api.secrets) == []
    first_stream = [r.SerializeToString() for r in watchers[0].messages]
    assert first_stream == [r.SerializeToString() for r in watchers[1].messages]

    tokens = [player.token for player in players] + [spectator.token, OPERATOR_TOKEN]
    for server in (first, second):
        code, log = server.stop()
        assert code == 0, log
        lines = [json.loads(line) for line in log.splitlines() if line.strip()]
        calls = [line for line in lines if "method" in line]
        assert calls, "each process logged its calls"
        assert all(
            {"time", "method", "table", "seat", "status", "duration_ms", "pid"} <= line.keys()
            for line in calls
        )
        assert all(line["time"].endswith("Z") for line in lines)  # every line, UTC
        assert not any(token in log for token in tokens)
        assert any(line.get("message") == "stopped" for line in lines)


class WorkersProcess:
    """`sapsam serve --workers 2` as a child process, its log (stderr) read as it comes."""

    def __init__(self, database_url: str) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            serve_command(database_url, self.port, "--workers", "2"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[dict[str, Any]] = []
        self._raw: list[str] = []
        self._serving: set[int] = set()
        self._both_serving = threading.Event()
        # The workers write to the same pipe: it ends when the last of them has exited.
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()

    def _read_log(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._raw.append(line)
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # not a log record (a blank line, a crash's traceback): kept in .log
            if not isinstance(record, dict):
                continue
            self.lines.append(record)
            if str(record.get("message", "")).startswith("serving on"):
                self._serving.add(record["pid"])
                if len(self._serving) == 2:
                    self._both_serving.set()

    def serving_pids(self) -> set[int]:
        return set(self._serving)

    @property
    def log(self) -> str:
        return "".join(self._raw)

    def wait_until_both_serve(self) -> None:
        # The workers bind one after the other: connections made before the second one listens
        # all reach the first.
        assert self._both_serving.wait(timeout=60), self.log

    def wait_for_log_end(self) -> None:
        self._reader.join(timeout=60)
        assert not self._reader.is_alive(), "a worker still holds the log open"

    def kill_leftovers(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if not self._reader.is_alive():
            return  # every worker closed the log: none is left (and their pids may be reused)
        for pid in self._serving:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_workers_share_one_port(database_url: str) -> None:
    server = WorkersProcess(database_url)
    try:
        server.wait_until_both_serve()
        # Fresh connections are spread over the processes by the kernel (SO_REUSEPORT): with 24
        # of them, all landing on one process has a chance of about 1 in 8 million. Each channel
        # keeps a subchannel pool of its own: from gRPC's global pool a new channel could take
        # the connection the last one had not yet closed, and all 24 calls went down one
        # connection to one process whenever the machine was busy (closing a channel is done on
        # gRPC's threads, later).
        for _ in range(24):
            with grpc.insecure_channel(
                f"127.0.0.1:{server.port}", options=[("grpc.use_local_subchannel_pool", 1)]
            ) as channel:
                health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), wait_for_ready=True, timeout=60
                )
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=60) == 0, server.log
        server.wait_for_log_end()
    finally:
        server.kill_leftovers()
    serving_pids = {
        line["pid"] for line in server.lines if line.get("method") == "/grpc.health.v1.Health/Check"
    }
    assert len(serving_pids) == 2, "both worker processes answered calls"


def test_workers_stop_gracefully_when_the_supervisor_is_killed(database_url: str) -> None:
    # Orphaned workers would keep the shared port and take the next server's connections.
    server = WorkersProcess(database_url)
    try:
        server.wait_until_both_serve()
        workers = server.serving_pids()
        server.process.kill()
        server.process.wait()
        server.wait_for_log_end()
        stopped = {line["pid"] for line in server.lines if line.get("message") == "stopped"}
        assert stopped == workers, server.log
        with socket.socket() as probe:  # nobody listens there any more
            assert probe.connect_ex(("127.0.0.1", server.port)) != 0
    finally:
        server.kill_leftovers()


_SLEEPING_WORKERS = (
    "import sys, time\n"
    "from sapsam.api.worker_processes import run_worker_processes\n"
    "sys.exit(run_worker_processes(2, time.sleep, (120,)))\n"
)


def _spawned_children(pid: int, count: int) -> list[int]:
    """The pids of ``pid``'s children once its ``count`` workers (and multiprocessing's resource
    tracker, which some starts add) exist; the workers are the processes running the spawn."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/task/{pid}/children") as listing:
            children = [int(child) for child in listing.read().split()]
        workers = []
        for child in children:
            try:
                with open(f"/proc/{child}/cmdline", "rb") as cmdline:
                    if b"spawn_main" in cmdline.read():
                        workers.append(child)
            except FileNotFoundError:
                continue
        if len(workers) == count:
            return workers
        time.sleep(0.02)
    raise AssertionError(f"{count} workers of {pid} never started")


def test_workers_stopped_while_starting_stop_cleanly() -> None:
    # The supervisor's SIGTERM can reach a worker before it installed its own handler (it is
    # still importing, or, here, never installs one): that worker stopped as asked, exit 0.
    process = subprocess.Popen([sys.executable, "-c", _SLEEPING_WORKERS])
    try:
        _spawned_children(process.pid, 2)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()


def test_a_worker_killed_from_outside_is_an_error() -> None:
    # A worker ended by someone else's signal is not a clean stop: the supervisor stops the
    # other one and exits non-zero.
    process = subprocess.Popen([sys.executable, "-c", _SLEEPING_WORKERS])
    try:
        first, _second = _spawned_children(process.pid, 2)
        os.kill(first, signal.SIGTERM)
        assert process.wait(timeout=60) != 0
    finally:
        if process.poll() is None:
            process.kill()

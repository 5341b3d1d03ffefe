"""``sapsam serve`` as a subprocess for a benchmark: started on a free loopback port, ready when
health says SERVING (and every worker logged that it serves), stopped with SIGTERM at the end.

Only flags that ``sapsam serve --help`` lists are passed, so the scripts run against the server
as it is and as it becomes (a renamed limit flag is simply not passed; the JSON says which were).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import grpc
from _postgres import free_port
from _procs import process_tree
from grpc_health.v1 import health_pb2, health_pb2_grpc

ECHO_METHOD = "/sapsam.bench.v1.EchoService/Echo"
"""``sapsam serve --bench-echo``'s echo RPC: raw bytes in, the same bytes out."""

# A benchmark measures the server at a load no one caller would bring: the per-caller limits
# (0 turns each off) would otherwise measure themselves.
LIMITS_OFF = (
    ("--calls-per-second", "0"),
    ("--calls-in-flight-per-player", "0"),
    ("--registrations-per-minute", "0"),
    ("--token-lookups-per-second", "0"),
    ("--streams-per-player", "0"),
    ("--max-streams-per-caller", "0"),
    ("--streams-per-caller", "0"),
)


@lru_cache(maxsize=1)
def serve_help() -> str:
    """``sapsam serve --help``'s text."""
    command = [sys.executable, "-m", "sapsam.cli", "serve", "--help"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def supported(flag: str) -> bool:
    """Whether ``sapsam serve`` has this flag."""
    return any(word.strip(",[]") == flag for word in serve_help().split())


@dataclass
class Server:
    """The running ``sapsam serve`` and what it was started with."""

    process: subprocess.Popen[bytes]
    port: int
    command: list[str]
    log_path: Path

    @property
    def target(self) -> str:
        """Where clients connect."""
        return f"127.0.0.1:{self.port}"

    def pids(self) -> list[int]:
        """The supervisor and its worker processes."""
        return process_tree(self.process.pid)


def _serving_lines(log_path: Path) -> int:
    count = 0
    for line in log_path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and str(record.get("message", "")).startswith("serving on"):
            count += 1
    return count


def _healthy(target: str) -> bool:
    with grpc.insecure_channel(target) as channel:
        try:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=1
            )
        except grpc.RpcError:
            return False
    return bool(answer.status == health_pb2.HealthCheckResponse.SERVING)


@contextmanager
def running_server(
    database_url: str, workers: int, *, extra: Sequence[str] = (), operator_token: str = ""
) -> Iterator[Server]:
    """``sapsam serve --workers N --bench-echo`` on ``database_url`` until the block ends."""
    port = free_port()
    command = [sys.executable, "-m", "sapsam.cli", "serve", "--listen", f"127.0.0.1:{port}"]
    command += ["--workers", str(workers), "--database-url", database_url, "--bench-echo"]
    if operator_token:
        command += ["--operator-token", operator_token]
    for flag, value in LIMITS_OFF:
        if supported(flag):
            command += [flag, value]
    command += list(extra)
    log_path = Path(tempfile.mkstemp(prefix="sapsam-bench-server-", suffix=".log")[1])
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        healthy_since: float | None = None
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"sapsam serve exited: {log_path.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError("sapsam serve did not become ready in time")
            if healthy_since is None and _healthy(f"127.0.0.1:{port}"):
                healthy_since = time.monotonic()
            # Every worker says so in its log; should the line change, 5 s after health.
            if healthy_since is not None and (
                _serving_lines(log_path) >= workers or time.monotonic() - healthy_since > 5
            ):
                break
            time.sleep(0.2)
        yield Server(process, port, command, log_path)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            for pid in process_tree(process.pid):
                os.kill(pid, signal.SIGKILL)
            process.wait()
        log_path.unlink(missing_ok=True)


def describe(server: Server) -> str:
    """The server's command line as the JSON reports it (without the interpreter's path)."""
    words = server.command[2:]
    shown = [
        "URL" if index and words[index - 1] == "--database-url" else word
        for index, word in enumerate(words)
    ]
    return " ".join(shown)

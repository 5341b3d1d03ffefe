"""A real `sapsam serve` child process on a fixed port, to SIGKILL and start again on the same
port and database (the clients' survival tests).

The same as ``Serve`` in tests/api/test_graceful_stop.py (which these tests cannot import: that
folder is on the path only when its own tests run), plus ``restart``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import grpc
from free_ports import free_port
from grpc_health.v1 import health_pb2, health_pb2_grpc

OPERATOR_TOKEN = "operator-token-for-client-tests-0123456789"


class ServedProcess:
    """`sapsam serve` on ``127.0.0.1:port`` over ``database_url``; its log kept in a file (a full
    pipe would stall the server)."""

    def __init__(self, database_url: str, port: int | None = None) -> None:
        self.database_url = database_url
        self.port = port or free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed by close()
        self.process = self._start()
        self.starts = 1

    def _start(self) -> subprocess.Popen[bytes]:
        command = [sys.executable, "-m", "sapsam.cli", "serve"]
        command += ["--database-url", self.database_url, "--listen", self.address]
        return subprocess.Popen(
            command,
            env={**os.environ, "SAPSAM_OPERATOR_TOKEN": OPERATOR_TOKEN},
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )

    def wait_until_serving(self, timeout: float = 90) -> None:
        with grpc.insecure_channel(self.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            deadline = time.monotonic() + timeout
            while True:
                assert self.process.poll() is None, self.tail()
                try:
                    response = health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if response.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: nothing stops gracefully, open streams and calls just break."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def restart(self, down_seconds: float = 1.0) -> None:
        """SIGKILL, ``down_seconds`` with nobody on the port, then the same command again."""
        self.kill()
        time.sleep(down_seconds)
        self.process = self._start()
        self.starts += 1
        self.wait_until_serving()

    def tail(self) -> str:
        self.log.seek(0)
        return self.log.read()[-4000:]

    def close(self) -> None:
        self.kill()
        self.log.close()

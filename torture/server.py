"""``sapsam serve`` as a child process the torture run can SIGKILL and start again.

The server runs in its own session (process group), so "kill the server" can mean the whole group
at once, only the supervisor of ``--workers`` (its workers notice and stop), or one worker.
Everything it logs goes to one file per torture run; :func:`log_findings` counts what in it
points at a bug (INTERNAL answers, tracebacks).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def _live_processes() -> Iterator[tuple[int, int, int]]:
    """(pid, parent pid, process group) of every live (not zombie) process, read from /proc."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z":
            yield int(entry.name), int(fields[1]), int(fields[2])


def _group_members(group: int) -> list[int]:
    """Live processes of a process group."""
    return [pid for pid, _, process_group in _live_processes() if process_group == group]


def _workers(parent: int) -> list[int]:
    """The ``--workers`` processes of a supervisor (not multiprocessing's resource tracker)."""
    found = []
    for child in _children(parent):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in command:
            found.append(child)
    return found


def _children(parent: int) -> list[int]:
    """Live child processes of ``parent``."""
    return [pid for pid, parent_pid, _ in _live_processes() if parent_pid == parent]


@dataclass
class ServerProcess:
    """The one ``sapsam serve`` of a phase: start it, wait for it, kill it, start it again."""

    database_url: str
    port: int
    workers: int
    log_path: Path
    extra_arguments: tuple[str, ...] = ()
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    start_seconds: list[float] = field(default_factory=list)

    @property
    def target(self) -> str:
        """host:port to connect to."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start ``sapsam serve`` (not waiting for it)."""
        command = [
            sys.executable,
            "-m",
            "sapsam.cli",
            "serve",
            "--database-url",
            self.database_url,
            "--listen",
            self.target,
            "--workers",
            str(self.workers),
            *self.extra_arguments,
        ]
        with self.log_path.open("ab") as log:
            log.write(f"## torture: start #{self.starts + 1} {time.time():.3f}\n".encode())
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        self.starts += 1

    def wait_serving(self, timeout: float = 120.0) -> float:
        """Wait for the health service to say SERVING; returns the seconds waited.

        A server that exits meanwhile (e.g. its database is still down) is started again.
        """
        began = time.monotonic()
        with grpc.insecure_channel(self.target) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while True:
                if self.process is not None and self.process.poll() is not None:
                    self.stop_group()
                    time.sleep(0.5)
                    self.start()
                try:
                    answer = health.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
                    if answer.status == health_pb2.HealthCheckResponse.SERVING:
                        waited = time.monotonic() - began
                        self.start_seconds.append(waited)
                        return waited
                except grpc.RpcError:
                    pass
                if time.monotonic() - began > timeout:
                    raise RuntimeError(f"the server did not serve within {timeout:.0f} s")
                time.sleep(0.1)

    def kill(self, mode: str) -> str:
        """SIGKILL the server: ``group`` (every process), ``supervisor`` or ``worker`` (one of
        ``--workers``); waits until no process of it is left. Returns what was killed."""
        assert self.process is not None
        group = self.process.pid
        if mode == "worker":
            workers = _workers(group)
            if workers:
                os.kill(workers[0], signal.SIGKILL)
            else:
                mode = "group"
        if mode == "supervisor":
            os.kill(group, signal.SIGKILL)
        elif mode == "group":
            os.killpg(group, signal.SIGKILL)
        self._wait_group_gone(group, timeout=30.0)
        return mode

    def _wait_group_gone(self, group: int, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while True:
            self.process.poll()
            if not _group_members(group):
                break
            if time.monotonic() > deadline:
                # Workers that did not stop within the timeout: ours, so end them.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGKILL)
                deadline = time.monotonic() + timeout
            time.sleep(0.05)
        self.process.wait()

    def stop_group(self) -> None:
        """Make sure no process of the current server is left (SIGKILL)."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self._wait_group_gone(self.process.pid, timeout=30.0)

    def terminate(self, timeout: float = 60.0) -> int | None:
        """SIGTERM and wait for a graceful stop; the exit code (None if it had to be killed)."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop_group()
            return None


_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE)


def log_findings(log_path: Path) -> dict[str, object]:
    """What the server logged that points at a bug: INTERNAL/UNKNOWN answers, tracebacks, and
    the methods they came from."""
    internal: dict[str, int] = {}
    statuses: dict[str, int] = {}
    errors = 0
    text = log_path.read_text(errors="replace") if log_path.exists() else ""
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        status = record.get("status")
        if isinstance(status, str):
            statuses[status] = statuses.get(status, 0) + 1
            if status in ("INTERNAL", "UNKNOWN"):
                method = str(record.get("method", "?"))
                internal[method] = internal.get(method, 0) + 1
        if record.get("level") in ("ERROR", "CRITICAL"):
            errors += 1
    return {
        "internal_answers": internal,
        "statuses": statuses,
        "tracebacks": len(_TRACEBACK.findall(text)),
        "error_lines": errors,
    }

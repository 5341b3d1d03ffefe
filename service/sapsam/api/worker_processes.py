"""Several server processes on one port: spawned, their signals forwarded, stopped together.

Why apart: the server (``sapsam.api.server``) serves on one event loop in one process; Python runs
about one core per process, so ``sapsam serve --workers N`` runs N of them, sharing one port
through SO_REUSEPORT. This is that supervision alone (plain ``multiprocessing``, nothing of
gRPC): any ``target`` runs in each worker, which stops gracefully on SIGTERM and by itself once
its supervisor is gone.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any


def run_worker_processes(count: int, target: Callable[..., int], arguments: tuple[Any, ...]) -> int:
    """Run ``target(*arguments)`` in ``count`` fresh processes until they exit; forward signals.

    The processes are spawned (not forked: grpc must not be initialised before a fork). On SIGTERM
    or SIGINT each child gets SIGTERM and stops gracefully. If one child exits on its own, the
    others are stopped too; the result is the first non-zero exit code, or 0. A child that our
    SIGTERM ended before it could handle it (still starting up: nothing in flight) stopped as
    asked, not in error; one killed by anyone else's signal is an error. Should this process be
    killed outright, each child notices and stops gracefully on its own.
    """
    context = multiprocessing.get_context("spawn")
    children = [
        context.Process(target=_run_child, args=(target, arguments), name=f"sapsam-worker-{index}")
        for index in range(count)
    ]
    stopping = threading.Event()

    def request_stop(signal_number: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {
        number: signal.signal(number, request_stop) for number in (signal.SIGTERM, signal.SIGINT)
    }
    try:
        for child in children:
            child.start()
        while not stopping.is_set() and all(child.is_alive() for child in children):
            stopping.wait(0.2)
        terminated: set[int] = set()
        for index, child in enumerate(children):
            if child.is_alive() and child.pid is not None:
                child.terminate()  # SIGTERM: the child stops gracefully
                terminated.add(index)
        for child in children:
            child.join()
        codes = [
            0
            if index in terminated and child.exitcode == -signal.SIGTERM
            else (child.exitcode or 0)
            for index, child in enumerate(children)
        ]
        return next((code for code in codes if code != 0), 0)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _run_child(target: Callable[..., int], arguments: tuple[Any, ...]) -> None:
    _stop_when_orphaned()
    raise SystemExit(target(*arguments))


def _stop_when_orphaned() -> None:
    """Send this worker SIGTERM once its supervisor is gone, however it went: a graceful stop
    once it serves (before that, SIGTERM's default ends it, with nothing in flight).

    A supervisor killed outright (SIGKILL, the OOM killer) cannot stop its workers; left running,
    they would keep the port (shared through SO_REUSEPORT) and take connections meant for the next
    ``sapsam serve``. The parent's sentinel becomes ready when the parent exits, with no race.
    """
    parent = multiprocessing.parent_process()
    if parent is None:  # pragma: no cover - only called in spawned workers
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="sapsam-orphan-watch", daemon=True).start()

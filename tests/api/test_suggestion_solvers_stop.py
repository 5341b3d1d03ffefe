"""SIGTERM to a real `sapsam serve` whose solver process (``sapsam.app.solver_processes``) is
busy with a suggestion that does not finish (the solver held still with SIGSTOP): the call is
answered UNAVAILABLE, SERVER_STOPPING, at the grace period's end, the server exits 0 within a
bound, and no solver process outlives it."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
from api_client import bearer
from scenarios import World
from test_graceful_stop import Serve, _outcome, serve  # noqa: F401 - the fixture is used by name

from sapsam_proto.v1 import table_service_pb2

STOP_BOUND_SECONDS = 30.0
"""The grace period (1 s), the solver processes' stop (at most some 4 s) and a loaded machine."""


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.update(int(child) for child in (task / "children").read_text().split())
    return found


def _solver_processes(pid: int) -> set[int]:
    """The server's children that run the solver (not multiprocessing's resource tracker)."""
    solvers = set()
    for child in _children(pid):
        with contextlib.suppress(FileNotFoundError):
            command = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
            if b"spawn_main" in command:
                solvers.add(child)
    return solvers


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_sigterm_stops_a_server_whose_solver_is_busy(serve: Serve, database_url: str) -> None:  # noqa: F811
    with grpc.insecure_channel(f"127.0.0.1:{serve.port}") as channel:
        world = World(channel, database_url)
        seated = world.seated()
        world.dealt(seated)
        player = seated.players[0]
        request = table_service_pb2.GetSuggestionRequest(seat=player.seat)

        def suggest() -> object:
            return world.api.tables.GetSuggestion(request, metadata=bearer(player.token))

        suggest()  # the solver process starts
        (solver,) = _solver_processes(serve.process.pid)
        os.kill(solver, signal.SIGSTOP)
        with ThreadPoolExecutor(1) as callers:
            held = callers.submit(suggest)
            time.sleep(0.5)  # the call is in flight, its solver held still
            assert not held.done()
            started = time.monotonic()
            serve.terminate()
            assert serve.wait(STOP_BOUND_SECONDS) == 0, serve.log()
            assert time.monotonic() - started < STOP_BOUND_SECONDS
            assert _outcome(held) == ("UNAVAILABLE", "SERVER_STOPPING")
    deadline = time.monotonic() + 10
    while _running(solver):
        assert time.monotonic() < deadline, "the solver process outlived the server"
        time.sleep(0.05)

"""GetSuggestion's solver processes over a real server (``sapsam.app.solver_processes``):

- the solving happens in the solver process, not in the serving process: while four open-face
  streets are solved, the solver process's CPU time grows by their work and the serving
  process's (this test's process, where the server runs) by a small part of it;
- beyond the bound on suggestions waiting (one solver, one suggestion at a time) a call is
  refused at once, RESOURCE_EXHAUSTED, SUGGESTIONS_BUSY, with ErrorInfo and RetryInfo, and
  writes nothing, whoever asks; the call being solved is answered;
- a queued call whose deadline passes leaves the queue (the bound counts it no more);
- a solver process killed mid-call fails that call UNAVAILABLE, SOLVER_UNAVAILABLE (never
  INTERNAL), and the next call is answered by a new process.

The solver process is held still with SIGSTOP where a test needs a call to stay "being solved",
so that nothing here depends on how fast the machine is.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import grpc
import pytest
from api_client import Player, bearer, error_reason
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status
from open_face_game import by_seat, open_face_table, table_of
from scenarios import World
from serving import serving

from sapsam.api.table_servicer import TableServicer
from sapsam.app.solver_processes import SolverProcesses
from sapsam.cli.bootstrap import build_services
from sapsam_proto.v1 import table_service_pb2

WAIT_SECONDS = 60.0


@contextlib.contextmanager
def _serving(database_url: str, waiting: int) -> Iterator[tuple[World, SolverProcesses]]:
    """A server with one solver process and ``waiting`` suggestions at most; its solvers."""
    services = build_services(database_url, suggestion_processes=1, suggestions_waiting=waiting)
    solvers = cast(TableServicer, services.table_service)._tables.solvers
    with (
        serving(database_url, services=services) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        yield World(channel, database_url), solvers


def _suggest(world: World, player: Player, timeout: float | None = None) -> Any:
    request = table_service_pb2.GetSuggestionRequest(seat=player.seat)
    return world.api.tables.GetSuggestion(request, metadata=bearer(player.token), timeout=timeout)


def _retry_seconds(error: grpc.RpcError) -> float:
    status = rpc_status.from_call(error)
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return float(info.retry_delay.ToNanoseconds()) / 1e9
    raise AssertionError("no RetryInfo")


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def _held_still(pid: int) -> Iterator[None]:
    """The solver process stopped (SIGSTOP) until the block ends."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def _closed_hand(world: World) -> list[Player]:
    """Two players, each holding its 13 cards at a dealt table."""
    seated = world.seated()
    world.dealt(seated)
    return list(seated.players)


def test_the_serving_process_does_not_do_the_solvers_work(database_url: str) -> None:
    with _serving(database_url, waiting=4) as (world, solvers):
        seated = open_face_table(world, 2, "ofc_classic")
        world.dealt(seated)
        player = by_seat(seated, table_of(world, seated).open_face.turn_seat)
        first = _suggest(world, player)  # the solver process starts (and builds its tables)
        (solver,) = solvers.pids()
        serving_before, solver_before = _cpu_seconds(os.getpid()), _cpu_seconds(solver)
        with ThreadPoolExecutor(4) as callers:
            answers = list(callers.map(lambda _: _suggest(world, player), range(4)))
        serving_cpu = _cpu_seconds(os.getpid()) - serving_before
        solver_cpu = _cpu_seconds(solver) - solver_before
        assert all(answer == first for answer in answers)
        # Four first streets of five cards, 200 futures each: some 0.1 s of CPU each at least.
        assert solver_cpu >= 0.2, solver_cpu
        # The server's part (four calls, the table read, the client's side in this process):
        # solving here, as a thread of this process did before, would cost all of solver_cpu.
        assert serving_cpu < solver_cpu / 3, (serving_cpu, solver_cpu)


def test_beyond_the_bound_a_suggestion_is_refused_at_once_and_writes_nothing(
    database_url: str,
) -> None:
    with _serving(database_url, waiting=1) as (world, solvers):
        ann, bob = _closed_hand(world)
        _suggest(world, ann)
        (solver,) = solvers.pids()
        with ThreadPoolExecutor(1) as callers, _held_still(solver):
            solving: Future[Any] = callers.submit(_suggest, world, ann)
            _until(lambda: solvers.waiting == 1)
            before = world.event_count()
            for player in (bob, ann):  # whoever asks
                started = time.monotonic()
                with pytest.raises(grpc.RpcError) as refused:
                    _suggest(world, player)
                assert time.monotonic() - started < WAIT_SECONDS / 4
                code, reason, info, _ = error_reason(refused.value)
                assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "SUGGESTIONS_BUSY")
                assert info.domain == "sapsam.dev"
                assert 0 < _retry_seconds(refused.value) <= 1
            assert world.event_count() == before
            assert not solving.done()
        assert solving.result(WAIT_SECONDS).WhichOneof("suggestion") == "arrangement"
        _until(lambda: solvers.waiting == 0)
        assert _suggest(world, bob).WhichOneof("suggestion") == "arrangement"


def test_a_queued_call_whose_deadline_passes_leaves_the_queue(database_url: str) -> None:
    with _serving(database_url, waiting=2) as (world, solvers):
        ann, bob = _closed_hand(world)
        _suggest(world, ann)
        (solver,) = solvers.pids()
        with ThreadPoolExecutor(1) as callers, _held_still(solver):
            solving: Future[Any] = callers.submit(_suggest, world, ann)
            _until(lambda: solvers.waiting == 1)
            with pytest.raises(grpc.RpcError) as late:
                _suggest(world, bob, timeout=0.5)
            assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            _until(lambda: solvers.waiting == 1)  # bob's call left the queue
            assert not solving.done()
        assert solving.result(WAIT_SECONDS).WhichOneof("suggestion") == "arrangement"


def test_a_solver_process_killed_mid_call_fails_it_unavailable_and_is_replaced(
    database_url: str,
) -> None:
    with _serving(database_url, waiting=2) as (world, solvers):
        ann, bob = _closed_hand(world)
        _suggest(world, ann)
        (solver,) = solvers.pids()
        failed: list[grpc.RpcError] = []

        def ask() -> None:
            try:
                _suggest(world, ann)
            except grpc.RpcError as error:
                failed.append(error)

        caller = threading.Thread(target=ask)
        with _held_still(solver):
            caller.start()
            _until(lambda: solvers.waiting == 1)
            os.kill(solver, signal.SIGKILL)
        caller.join(WAIT_SECONDS)
        (error,) = failed
        code, reason, _, _ = error_reason(error)
        assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "SOLVER_UNAVAILABLE")
        assert 0 < _retry_seconds(error) <= 5
        assert _suggest(world, bob).WhichOneof("suggestion") == "arrangement"
        assert solvers.pids() and solver not in solvers.pids()

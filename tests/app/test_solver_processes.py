"""The solver processes (``sapsam.app.solver_processes``) on their own, with plain functions of
the standard library as the work: started lazily and spawned at a lower CPU priority; the bound
on suggestions waiting refuses at once; a queued caller who leaves takes its work with it; a
process that dies fails only the call it was solving and is replaced; the stop ends processes
busy with long work without waiting for it.

The server's side (GetSuggestion refused SUGGESTIONS_BUSY or SOLVER_UNAVAILABLE over gRPC, the
serving process's CPU left alone) is tests/api/test_suggestion_solvers.py."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sapsam.app.solver_processes import (
    SOLVER_NICENESS,
    SolverBusyError,
    SolverProcesses,
    SolverUnavailableError,
)


def _niceness(pid: int) -> int:
    # /proc/PID/stat: the command's parentheses may hold spaces; nice is field 19.
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[16])


async def _until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


async def test_the_processes_start_on_the_first_call_at_a_lower_priority() -> None:
    solvers = SolverProcesses(processes=1)
    try:
        assert solvers.pids() == ()
        assert await solvers.solve(pow, 2, 10) == 1024
        (pid,) = solvers.pids()
        assert pid != os.getpid()
        assert await solvers.solve(os.getpid) == pid
        assert _niceness(pid) == min(19, _niceness(os.getpid()) + SOLVER_NICENESS)
        assert solvers.waiting == 0
    finally:
        await solvers.stop()


async def test_beyond_the_bound_a_call_is_refused_at_once() -> None:
    solvers = SolverProcesses(processes=1, max_waiting=2)
    try:
        await solvers.solve(pow, 2, 2)  # the process is up
        running = asyncio.create_task(solvers.solve(time.sleep, 1.0))
        queued = asyncio.create_task(solvers.solve(pow, 3, 3))
        await _until(lambda: solvers.waiting == 2)
        # At once: refused before the call's first pause, so it waits for nothing (a bound in
        # seconds here failed whenever a loaded machine held the test up for it).
        call = solvers.solve(pow, 4, 4)
        with pytest.raises(SolverBusyError) as refused:
            call.send(None)
        assert refused.value.reason == "SUGGESTIONS_BUSY" and refused.value.retry_seconds > 0
        assert await running is None and await queued == 27
        assert solvers.waiting == 0
        assert await solvers.solve(pow, 4, 4) == 256
    finally:
        await solvers.stop()


async def test_a_queued_caller_who_leaves_takes_its_work_with_it(tmp_path: Path) -> None:
    solvers = SolverProcesses(processes=1, max_waiting=3)
    never_made = tmp_path / "never made"
    try:
        await solvers.solve(pow, 2, 2)
        running = asyncio.create_task(solvers.solve(time.sleep, 1.0))
        queued = asyncio.create_task(solvers.solve(os.mkdir, str(never_made)))
        await _until(lambda: solvers.waiting == 2)
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        assert solvers.waiting == 1  # at once: the slot it held is free again
        await running
        await solvers.solve(pow, 2, 2)  # the process has done everything handed to it
        assert not never_made.exists()
    finally:
        await solvers.stop()


async def test_a_caller_who_leaves_while_solved_keeps_the_slot_until_the_process_is_done(
    tmp_path: Path,
) -> None:
    solvers = SolverProcesses(processes=1, max_waiting=1)
    started, release = tmp_path / "started", tmp_path / "release"
    try:
        await solvers.solve(pow, 2, 2)
        # Work that says when the process has begun it (a pause of the test's own could end
        # before the pool handed the work over, and the cancel would then take it), and lasts
        # until the test releases it (a fixed second could end first on a stalled machine);
        # a minute at most, should the test never release it.
        work = [
            "sh",
            "-c",
            f"touch '{started}'; i=0; until [ -e '{release}' ] || [ $i -ge 6000 ];"
            " do sleep 0.01; i=$((i + 1)); done",
        ]
        running = asyncio.create_task(solvers.solve(subprocess.run, work, check=True))
        await _until(started.exists)  # handed to the process
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        with pytest.raises(SolverBusyError):  # the process is still busy with it
            await solvers.solve(pow, 2, 2)
        release.touch()
        await _until(lambda: solvers.waiting == 0)
        assert await solvers.solve(pow, 2, 3) == 8
    finally:
        release.touch()  # the stop ends the process, not its shell
        await solvers.stop()


async def test_a_process_that_dies_fails_its_call_and_is_replaced() -> None:
    solvers = SolverProcesses(processes=1)
    try:
        await solvers.solve(pow, 2, 2)
        (first,) = solvers.pids()
        with pytest.raises(SolverUnavailableError) as lost:
            await solvers.solve(os._exit, 3)
        assert lost.value.reason == "SOLVER_UNAVAILABLE" and lost.value.retry_seconds > 0
        assert solvers.waiting == 0
        assert await solvers.solve(pow, 2, 5) == 32
        (second,) = solvers.pids()
        assert second != first
    finally:
        await solvers.stop()


async def test_a_process_that_died_idle_is_replaced_before_the_next_call() -> None:
    solvers = SolverProcesses(processes=1)
    try:
        await solvers.solve(pow, 2, 2)
        (first,) = solvers.pids()
        os.kill(first, 9)
        # The pool notices the death on its own: it marks itself broken, then reaps the process.
        await _until(lambda: not Path(f"/proc/{first}").exists())
        assert await solvers.solve(pow, 2, 6) == 64
        assert solvers.pids() != (first,)
    finally:
        await solvers.stop()


async def test_the_stop_ends_busy_processes_without_waiting_for_their_work() -> None:
    solvers = SolverProcesses(processes=2, max_waiting=4)
    busy = [asyncio.create_task(solvers.solve(time.sleep, 60)) for _ in range(3)]
    await _until(lambda: solvers.waiting == 3 and len(solvers.pids()) == 2)
    pids = solvers.pids()
    started = time.monotonic()
    await solvers.stop()
    assert time.monotonic() - started < 10
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or _zombie(pid)
    for task in busy:
        with pytest.raises((SolverUnavailableError, asyncio.CancelledError)):
            await task
    with pytest.raises(SolverUnavailableError):
        await solvers.solve(pow, 2, 2)


def _zombie(pid: int) -> bool:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return fields[0] == "Z"

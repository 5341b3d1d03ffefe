"""The solver's own processes: ``GetSuggestion``'s solving, out of the serving process's GIL.

The solver is pure Python and CPU-bound (about 10 ms for a closed hand, 0.1 s for an open-face
street, up to about 0.3 s for a Fantasyland hand). Run in a thread of the serving process it
would hold the GIL, and the process's event loop (every other table's calls and streams) would
get about half the interpreter while suggestions run. Here it runs in a small pool of processes
of its own per serving process:

- **spawned, never forked**: a fork of a process that runs gRPC's threads and an event loop
  copies their locks in whatever state they are; a spawned process starts a fresh interpreter;
- **started lazily**: none before the first suggestion (a server nobody asks for hints runs
  none), then one more whenever a call finds none idle, up to ``processes``; each builds the
  closed solver's tables once as it starts (``sapsam.rules.solver.prepare``);
- **at a lower CPU priority** (``os.nice(SOLVER_NICENESS)``), so that on a busy machine the
  serving processes' calls win the cores and the hints wait;
- **bounded**: at most ``max_waiting`` suggestions in this process, running or queued, at once;
  beyond it a call is refused at once (:class:`SolverBusyError`: RESOURCE_EXHAUSTED,
  ``SUGGESTIONS_BUSY``, with RetryInfo), so many players, each within its own per-player limit,
  cannot queue work without end; a queued call whose caller goes away (cancelled, its deadline
  passed) leaves the queue and costs nothing; only the ``processes`` calls being solved are
  handed to the processes, so nothing waits inside them for a caller who left;
- **replaced when one dies**: the calls it was solving are answered :class:`SolverUnavailableError`
  (UNAVAILABLE, ``SOLVER_UNAVAILABLE``, with RetryInfo) and the next call starts a new pool;
- **stopped with the server** (:meth:`SolverProcesses.stop`, after the calls in flight had their
  grace period): whatever is left is terminated, then killed, never waited for without end.

What goes to a process is small and picklable (cards, rules, the cards the seat has seen, a
seed: ``sapsam.app.suggestion_solving``); what comes back is the suggestion.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Final, ParamSpec, TypeVar

DEFAULT_PROCESSES: Final = 1
"""Solver processes per serving process (``sapsam serve --suggestion-processes``)."""
WAITING_PER_PROCESS: Final = 2
"""The default bound on suggestions waiting, per solver process: one being solved, one queued
(``sapsam serve --suggestions-waiting``)."""
SOLVER_NICENESS: Final = 10
"""How much lower the solver processes' CPU priority is than the server's (``os.nice``): at 10
the scheduler gives a busy serving process about ten times a solver's share of a core."""
BUSY_RETRY_SECONDS: Final = 0.5
"""RetryInfo of SUGGESTIONS_BUSY: a queue of a few solves of at most about 0.3 s each."""
UNAVAILABLE_RETRY_SECONDS: Final = 1.0
"""RetryInfo of SOLVER_UNAVAILABLE: a new solver process starts in about a second."""
STOP_SECONDS: Final = 2.0
"""How long :meth:`SolverProcesses.stop` lets the processes end on their own (each finishes
at most the solve it is on) before it terminates them."""

_logger = logging.getLogger("sapsam.app.solver_processes")

Result = TypeVar("Result")
Arguments = ParamSpec("Arguments")


class SolverRefusedError(Exception):
    """A suggestion the solver processes could not take or finish; nothing was recorded
    (``sapsam.api.errors`` answers ``reason`` with RetryInfo after ``retry_seconds``)."""

    reason = ""

    def __init__(self, message: str, retry_seconds: float) -> None:
        super().__init__(message)
        self.message = message
        self.retry_seconds = retry_seconds


class SolverBusyError(SolverRefusedError):
    """As many suggestions as the bound allows are being solved or queued in this process."""

    reason = "SUGGESTIONS_BUSY"


class SolverUnavailableError(SolverRefusedError):
    """The solver process solving the call stopped (it is replaced), or the server stops."""

    reason = "SOLVER_UNAVAILABLE"


def _start_solver_process() -> None:
    """A solver process's start: lower priority; Ctrl-C on a terminal is the server's to handle
    (it stops the pool); the solver's tables built before the first call."""
    os.nice(SOLVER_NICENESS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from sapsam.rules.solver import prepare  # in the solver process only

    prepare()


class SolverProcesses:
    """``processes`` solver processes and the bound on suggestions waiting for them (module
    documentation). Used from one event loop."""

    def __init__(self, processes: int = DEFAULT_PROCESSES, max_waiting: int | None = None) -> None:
        if processes < 1:
            raise ValueError("a solver pool needs at least one process")
        self.processes = processes
        self.max_waiting = WAITING_PER_PROCESS * processes if max_waiting is None else max_waiting
        if self.max_waiting < 1:
            raise ValueError("a solver pool must let at least one suggestion wait")
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None
        self._slots = asyncio.Semaphore(processes)
        self._waiting = 0
        self._stopped = False

    @property
    def waiting(self) -> int:
        """Suggestions in this process being solved or queued now."""
        return self._waiting

    def pids(self) -> tuple[int, ...]:
        """The solver processes running now (none before the first suggestion)."""
        executor = self._executor
        processes = getattr(executor, "_processes", None) or {}
        return tuple(process.pid for process in processes.values())

    async def solve(
        self,
        function: Callable[Arguments, Result],
        *arguments: Arguments.args,
        **keywords: Arguments.kwargs,
    ) -> Result:
        """``function(*arguments, **keywords)`` in a solver process (a module-level function,
        picklable arguments); :class:`SolverBusyError` at once when the bound is reached,
        :class:`SolverUnavailableError` when its process died or the pool is stopped."""
        if self._stopped:
            raise SolverUnavailableError("the server is stopping", UNAVAILABLE_RETRY_SECONDS)
        if self._waiting >= self.max_waiting:
            raise SolverBusyError(
                f"the server's solvers are busy ({self._waiting} suggestions waiting);"
                " retry after the delay given",
                BUSY_RETRY_SECONDS,
            )
        self._waiting += 1
        submitted = False
        try:
            await self._slots.acquire()  # a caller who leaves here leaves the queue
            try:
                executor, future = self._submit(function, *arguments, **keywords)
            except BaseException:
                self._slots.release()
                raise
            submitted = True
            # The slot is the process's until the solve ends, whether or not the caller waits.
            loop = asyncio.get_running_loop()
            future.add_done_callback(lambda _: _call_soon(loop, self._solve_ended))
            try:
                return await asyncio.wrap_future(future)
            except BrokenProcessPool:
                self._discard(executor)
                raise SolverUnavailableError(
                    "the solver process stopped while solving this call; retry after the delay"
                    " given",
                    UNAVAILABLE_RETRY_SECONDS,
                ) from None
        finally:
            if not submitted:
                self._waiting -= 1

    def _solve_ended(self) -> None:
        self._slots.release()
        self._waiting -= 1

    def _submit(
        self,
        function: Callable[Arguments, Result],
        *arguments: Arguments.args,
        **keywords: Arguments.kwargs,
    ) -> tuple[concurrent.futures.ProcessPoolExecutor, concurrent.futures.Future[Result]]:
        if self._stopped:
            raise SolverUnavailableError("the server is stopping", UNAVAILABLE_RETRY_SECONDS)
        executor = self._running_executor()
        try:
            return executor, executor.submit(function, *arguments, **keywords)
        except BrokenProcessPool:
            # A process died while idle: nothing of this call ran, so a new pool takes it.
            self._discard(executor)
            executor = self._running_executor()
            return executor, executor.submit(function, *arguments, **keywords)

    def _running_executor(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._executor is None:
            self._executor = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_solver_process,
            )
        return self._executor

    def _discard(self, executor: concurrent.futures.ProcessPoolExecutor) -> None:
        """Forget a broken pool (its processes are gone); the next call starts a new one."""
        if self._executor is executor:
            _logger.warning("a solver process stopped; starting new ones on the next suggestion")
            self._executor = None
            executor.shutdown(wait=False, cancel_futures=True)

    async def stop(self) -> None:
        """Stop the processes: no new solve starts; each process ends after the solve it is on,
        within :data:`STOP_SECONDS`, else it is terminated, then killed. Never hangs."""
        self._stopped = True
        executor, self._executor = self._executor, None
        if executor is None:
            return
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        await asyncio.to_thread(_end_processes, processes, STOP_SECONDS)


def _end_processes(processes: list[multiprocessing.process.BaseProcess], seconds: float) -> None:
    """Wait up to ``seconds`` for ``processes`` to exit, then terminate, then kill them."""
    for ending, wait in ((None, seconds), ("terminate", 1.0), ("kill", 1.0)):
        for process in processes:
            if ending is not None and process.is_alive():
                getattr(process, ending)()
        deadline = time.monotonic() + wait
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        if not any(process.is_alive() for process in processes):
            return
    _logger.error("solver processes %s did not end", [process.pid for process in processes])


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    """``callback`` on ``loop`` from any thread; nothing once the loop is closed (the process
    is ending and nobody waits for the slot)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback)

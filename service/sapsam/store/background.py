"""A background loop: the one way the server runs recurring work (deadline sweeps, the results
follower, the serving heartbeat) beside its RPCs, as a task of the worker's event loop, and the
stop signal that ends it at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any


class StopSignal:
    """Set once, when the work it is handed to should end; every wait it offers returns as soon
    as it is set, so a stop never waits out a pause or a poll interval.

    Calling it (``signal()``) says whether it is set, so it serves wherever a
    ``should_stop: Callable[[], bool]`` is expected. Set it on its event loop."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def __call__(self) -> bool:
        return self._event.is_set()

    def is_set(self) -> bool:
        """True once ``set`` was called."""
        return self._event.is_set()

    def set(self) -> None:
        """Ask for the stop and wake every wait in progress."""
        self._event.set()

    async def wait(self, seconds: float) -> bool:
        """Pause ``seconds`` unless the stop comes first; True if stopping."""
        if not self._event.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._event.wait(), max(0.0, seconds))
        return self._event.is_set()

    async def wait_for(self, awaitable: Awaitable[Any], seconds: float) -> bool:
        """Wait until ``awaitable`` is done (a notification on a LISTEN connection, say),
        ``seconds`` pass, or the stop comes, whichever is first; True if stopping. The awaitable
        is cancelled if it is not done by then."""
        if self._event.is_set():
            if asyncio.iscoroutine(awaitable):
                awaitable.close()  # never started: nothing to wait for
            return True
        work = asyncio.ensure_future(awaitable)
        stopped = asyncio.ensure_future(self._event.wait())
        try:
            await asyncio.wait(
                (work, stopped), timeout=max(0.0, seconds), return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for task in (work, stopped):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        if work.done() and not work.cancelled():
            work.result()  # its failure is the caller's
        return self._event.is_set()


class BackgroundLoop:
    """Runs ``await step(stop)`` in a task again and again until ``stop()``, pausing ``pause``
    seconds after each run. ``stop`` is the loop's ``StopSignal``: a step that runs long returns
    once it is set, and waits through it (``stop.wait``, ``stop.wait_for``), never
    ``asyncio.sleep``, so that ``stop()`` returns as soon as the step in progress notices. A step
    that raises is logged (the error's type only: a message might hold what a log must not) and
    the loop goes on.

    After failures in a row the pause doubles, up to ``max_pause`` (default ``pause``: no
    back-off), and is back to ``pause`` after the first step that succeeds. Work over many
    tables isolates each table inside its step (``sapsam.store.table_failures``); this back-off
    is for a step failing as a whole (the database out of reach)."""

    STOP_WAIT_SECONDS = 10.0
    """How long ``stop`` lets the step in progress notice before cancelling it."""

    def __init__(
        self,
        name: str,
        step: Callable[[StopSignal], Awaitable[object]],
        pause: float,
        logger: logging.Logger,
        max_pause: float | None = None,
    ) -> None:
        self._name = name
        self._step = step
        self._pause = pause
        self._max_pause = max(pause, max_pause if max_pause is not None else pause)
        self._failures = 0
        self._logger = logger
        self._stopping: StopSignal | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the task on the running loop."""
        self._stopping = StopSignal()
        self._task = asyncio.get_running_loop().create_task(self._run(), name=self._name)

    async def stop(self) -> None:
        """Ask the loop to end and wait (up to ``STOP_WAIT_SECONDS``) for the step in progress to
        notice; cancel it after that."""
        if self._stopping is not None:
            self._stopping.set()
        task = self._task
        if task is None:
            return
        done, _ = await asyncio.wait((task,), timeout=self.STOP_WAIT_SECONDS)
        if not done:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def failures(self) -> int:
        """Steps failed in a row until now (0 after a step that succeeded)."""
        return self._failures

    def next_pause(self) -> float:
        """The pause after the latest step: ``pause``, doubled per failure in a row, capped."""
        if self._failures == 0:
            return self._pause
        return min(self._pause * (1 << min(self._failures - 1, 30)), self._max_pause)

    async def _run(self) -> None:
        stopping = self._stopping
        assert stopping is not None
        while not stopping.is_set():
            try:
                await self._step(stopping)
            except Exception as error:  # a failed step must not stop the next one
                self._failures += 1
                self._logger.error(
                    "%s failed: %s (%d in a row; next try in %.1f s)",
                    self._name,
                    type(error).__name__,
                    self._failures,
                    self.next_pause(),
                )
            else:
                self._failures = 0
            await stopping.wait(self.next_pause())

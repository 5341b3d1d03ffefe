"""A background loop: the one way the server runs recurring work (deadline sweeps, the results
follower) beside its RPCs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable


class BackgroundLoop:
    """Runs ``step(should_stop)`` in a daemon thread again and again until ``stop()``, pausing
    ``pause`` seconds after each run. A step that raises is logged (the error's type only: a
    message might hold what a log must not) and the loop goes on; a long-running step should
    return once ``should_stop()`` is true.

    After failures in a row the pause doubles, up to ``max_pause`` (default ``pause``: no
    back-off), and is back to ``pause`` after the first step that succeeds. Work over many
    tables isolates each table inside its step (``sapsam.store.table_failures``); this back-off
    is for a step failing as a whole (the database out of reach)."""

    def __init__(
        self,
        name: str,
        step: Callable[[Callable[[], bool]], object],
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
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def stop(self) -> None:
        """Ask the loop to end and wait (up to 10 s) for the step in progress."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    @property
    def failures(self) -> int:
        """Steps failed in a row until now (0 after a step that succeeded)."""
        return self._failures

    def next_pause(self) -> float:
        """The pause after the latest step: ``pause``, doubled per failure in a row, capped."""
        if self._failures == 0:
            return self._pause
        return min(self._pause * (1 << min(self._failures - 1, 30)), self._max_pause)

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._step(self._stopping.is_set)
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
            self._stopping.wait(self.next_pause())

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
    return once ``should_stop()`` is true."""

    def __init__(
        self,
        name: str,
        step: Callable[[Callable[[], bool]], object],
        pause: float,
        logger: logging.Logger,
    ) -> None:
        self._name = name
        self._step = step
        self._pause = pause
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

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._step(self._stopping.is_set)
            except Exception as error:  # a failed step must not stop the next one
                self._logger.error("%s failed: %s", self._name, type(error).__name__)
            self._stopping.wait(self._pause)

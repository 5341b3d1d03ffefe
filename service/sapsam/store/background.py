"""A background loop: the one way the server runs recurring work (deadline sweeps, the results
follower, the serving heartbeat) beside its RPCs, and the stop signal that ends it at once."""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import threading
from collections.abc import Callable


class StopSignal:
    """Set once, when the work it is handed to should end; every wait it offers returns as soon
    as it is set, so a stop never waits out a pause or a poll interval.

    Calling it (``signal()``) says whether it is set, so it serves wherever a
    ``should_stop: Callable[[], bool]`` is expected. ``set`` may be called from any thread or a
    signal handler."""

    def __init__(self) -> None:
        self._event = threading.Event()
        # A socket pair, so that a wait on a database connection's socket (select) wakes too.
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_reader.setblocking(False)
        self._wake_writer.setblocking(False)

    def __call__(self) -> bool:
        return self._event.is_set()

    def is_set(self) -> bool:
        """True once ``set`` was called."""
        return self._event.is_set()

    def set(self) -> None:
        """Ask for the stop and wake every wait in progress."""
        if self._event.is_set():
            return
        self._event.set()
        # Set once, so one byte; an error means the pair is closed: nobody waits on it.
        with contextlib.suppress(OSError):
            self._wake_writer.send(b"\0")

    def wait(self, seconds: float) -> bool:
        """Pause ``seconds`` unless the stop comes first; True if stopping."""
        return self._event.wait(seconds)

    def wait_readable(self, fileno: int, seconds: float) -> bool:
        """Wait until ``fileno`` has something to read, ``seconds`` pass, or the stop comes;
        True if stopping. For a LISTEN connection: ``connection.fileno()``, then read its
        notifications without blocking (``connection.notifies(timeout=0)``)."""
        if self._event.is_set():
            return True
        # poll, not select: a busy server's descriptors may be numbered past select's 1024.
        waiting = select.poll()
        waiting.register(fileno, select.POLLIN)
        waiting.register(self._wake_reader, select.POLLIN)
        waiting.poll(max(0, round(seconds * 1000)))
        return self._event.is_set()

    def close(self) -> None:
        """Release the wake-up sockets (the signal still answers ``is_set``)."""
        self._wake_reader.close()
        self._wake_writer.close()


class BackgroundLoop:
    """Runs ``step(stop)`` in a daemon thread again and again until ``stop()``, pausing ``pause``
    seconds after each run. ``stop`` is the loop's ``StopSignal``: a step that runs long returns
    once it is set, and waits through it (``stop.wait``, ``stop.wait_readable``), never
    ``time.sleep``, so that ``stop()`` returns as soon as the step in progress notices. A step that
    raises is logged (the error's type only: a message might hold what a log must not) and the
    loop goes on.

    After failures in a row the pause doubles, up to ``max_pause`` (default ``pause``: no
    back-off), and is back to ``pause`` after the first step that succeeds. Work over many
    tables isolates each table inside its step (``sapsam.store.table_failures``); this back-off
    is for a step failing as a whole (the database out of reach)."""

    def __init__(
        self,
        name: str,
        step: Callable[[StopSignal], object],
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
        self._stopping = StopSignal()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def stop(self) -> None:
        """Ask the loop to end and wait (up to 10 s) for the step in progress to notice."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._stopping.close()

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
                self._step(self._stopping)
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

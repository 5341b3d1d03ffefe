"""The background loop runs its step again and again, survives a failing step, and stops at
once: neither its pause nor a step waiting through its stop signal holds the stop up."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable

import pytest

from sapsam.store.background import BackgroundLoop, StopSignal


def test_a_failing_step_is_logged_and_the_loop_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    runs: list[int] = []
    three = threading.Event()

    def step(should_stop: Callable[[], bool]) -> None:
        runs.append(len(runs))
        if len(runs) == 1:
            raise ValueError("secret detail that must not be logged")
        if len(runs) >= 3:
            three.set()

    loop = BackgroundLoop("test-loop", step, 0.01, logging.getLogger("test.background"))
    with caplog.at_level(logging.ERROR, logger="test.background"):
        loop.start()
        assert three.wait(10)
        loop.stop()
    assert "test-loop failed: ValueError" in caplog.text
    assert "secret detail" not in caplog.text
    count = len(runs)
    threading.Event().wait(0.05)
    assert len(runs) == count  # stopped: no more runs


def test_stop_ends_a_long_step_that_watches_should_stop() -> None:
    started = threading.Event()

    def step(should_stop: Callable[[], bool]) -> None:
        started.set()
        while not should_stop():
            threading.Event().wait(0.01)

    loop = BackgroundLoop("test-long", step, 1.0, logging.getLogger("test.background"))
    loop.start()
    assert started.wait(10)
    loop.stop()
    assert not loop._thread.is_alive()


# Far longer than any stop may take: a stop that waited for it would fail the bound below.
LONG_SECONDS = 60.0
STOP_BOUND_SECONDS = 2.0


def test_stop_does_not_wait_out_the_pause() -> None:
    ran = threading.Event()
    loop = BackgroundLoop(
        "test-pause", lambda stop: ran.set(), LONG_SECONDS, logging.getLogger("test.background")
    )
    loop.start()
    assert ran.wait(10)
    started = time.monotonic()
    loop.stop()
    assert time.monotonic() - started < STOP_BOUND_SECONDS
    assert not loop._thread.is_alive()


def test_stop_wakes_a_step_waiting_on_a_quiet_socket() -> None:
    # The results follower waits so on its LISTEN connection; here, a socket nobody writes to.
    quiet, other_end = socket.socketpair()
    waiting = threading.Event()
    woken: list[bool] = []

    def step(stop: StopSignal) -> None:
        waiting.set()
        woken.append(stop.wait_readable(quiet.fileno(), LONG_SECONDS))

    loop = BackgroundLoop("test-socket", step, LONG_SECONDS, logging.getLogger("test.background"))
    with quiet, other_end:
        loop.start()
        assert waiting.wait(10)
        started = time.monotonic()
        loop.stop()
        assert time.monotonic() - started < STOP_BOUND_SECONDS
    assert woken == [True]


def test_a_wait_on_a_socket_ends_when_it_has_something_to_read() -> None:
    signal = StopSignal()
    readable, writer = socket.socketpair()
    with readable, writer:
        writer.send(b"x")
        started = time.monotonic()
        assert signal.wait_readable(readable.fileno(), LONG_SECONDS) is False
        assert time.monotonic() - started < STOP_BOUND_SECONDS
    signal.set()
    assert signal() and signal.wait(LONG_SECONDS)
    signal.close()

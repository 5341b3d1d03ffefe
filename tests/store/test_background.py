"""The background loop runs its step again and again, survives a failing step, and stops."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import pytest

from sapsam.store.background import BackgroundLoop


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

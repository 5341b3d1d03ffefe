"""The background loop runs its step again and again, survives a failing step, and stops at
once: neither its pause nor a step waiting through its stop signal holds the stop up."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from sapsam.store.background import BackgroundLoop, StopSignal

# Far longer than any stop may take: a stop that waited for it would fail the bound below.
LONG_SECONDS = 60.0
STOP_BOUND_SECONDS = 2.0


async def test_a_failing_step_is_logged_and_the_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runs: list[int] = []
    three = asyncio.Event()

    async def step(stop: StopSignal) -> None:
        runs.append(len(runs))
        if len(runs) == 1:
            raise ValueError("secret detail that must not be logged")
        if len(runs) >= 3:
            three.set()

    loop = BackgroundLoop("test-loop", step, 0.01, logging.getLogger("test.background"))
    with caplog.at_level(logging.ERROR, logger="test.background"):
        loop.start()
        await asyncio.wait_for(three.wait(), 10)
        await loop.stop()
    assert "test-loop failed: ValueError" in caplog.text
    assert "secret detail" not in caplog.text
    count = len(runs)
    await asyncio.sleep(0.05)
    assert len(runs) == count  # stopped: no more runs


async def test_stop_ends_a_long_step_that_watches_its_stop_signal() -> None:
    started = asyncio.Event()
    ended: list[bool] = []

    async def step(stop: StopSignal) -> None:
        started.set()
        while not stop():
            await asyncio.sleep(0.01)
        ended.append(True)

    loop = BackgroundLoop("test-long", step, 1.0, logging.getLogger("test.background"))
    loop.start()
    await asyncio.wait_for(started.wait(), 10)
    await loop.stop()
    assert ended == [True]


async def test_stop_does_not_wait_out_the_pause() -> None:
    ran = asyncio.Event()

    async def step(stop: StopSignal) -> None:
        ran.set()

    loop = BackgroundLoop("test-pause", step, LONG_SECONDS, logging.getLogger("test.background"))
    loop.start()
    await asyncio.wait_for(ran.wait(), 10)
    started = time.monotonic()
    await loop.stop()
    assert time.monotonic() - started < STOP_BOUND_SECONDS


async def test_stop_wakes_a_step_waiting_for_something_that_never_comes() -> None:
    # The results follower waits so for a notification on its LISTEN connection.
    waiting = asyncio.Event()
    woken: list[bool] = []

    async def step(stop: StopSignal) -> None:
        waiting.set()
        woken.append(await stop.wait_for(asyncio.Event().wait(), LONG_SECONDS))

    loop = BackgroundLoop("test-wait", step, LONG_SECONDS, logging.getLogger("test.background"))
    loop.start()
    await asyncio.wait_for(waiting.wait(), 10)
    started = time.monotonic()
    await loop.stop()
    assert time.monotonic() - started < STOP_BOUND_SECONDS
    assert woken == [True]


async def test_a_wait_for_something_ends_when_it_comes() -> None:
    signal = StopSignal()
    arrived = asyncio.Event()
    asyncio.get_running_loop().call_later(0.01, arrived.set)
    started = time.monotonic()
    assert await signal.wait_for(arrived.wait(), LONG_SECONDS) is False
    assert time.monotonic() - started < STOP_BOUND_SECONDS
    signal.set()
    assert signal() and await signal.wait(LONG_SECONDS)

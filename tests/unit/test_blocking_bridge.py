"""The blocking bridge runs synchronous work on the loop's own bounded pool, with the caller's
context variables, and drains a synchronous generator there, closing it when left early."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Iterator

from sapsam.api import blocking

CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="nobody")


def _where() -> tuple[str, str]:
    return threading.current_thread().name, CALLER.get()


def test_work_runs_on_the_bridge_with_the_callers_context() -> None:
    async def run() -> tuple[str, str]:
        pool = blocking.open_pool(asyncio.get_running_loop(), threads=2)
        try:
            CALLER.set("player 7")
            return await blocking.run_blocking(_where)
        finally:
            pool.shutdown()

    thread, caller = asyncio.run(run())
    assert thread.startswith(blocking.THREAD_NAME_PREFIX)
    assert caller == "player 7"


def test_a_generator_is_drained_on_the_bridge_and_closed_when_left_early() -> None:
    steps: list[str] = []

    def numbers() -> Iterator[int]:
        try:
            for number in range(10):
                steps.append(threading.current_thread().name)
                yield number
        finally:
            steps.append("closed")

    async def first_three() -> list[int]:
        pool = blocking.open_pool(asyncio.get_running_loop(), threads=1)
        taken: list[int] = []
        try:
            items = blocking.iterate_blocking(numbers)
            async for number in items:
                taken.append(number)
                if len(taken) == 3:
                    break
            await items.aclose()
            return taken
        finally:
            pool.shutdown()

    assert asyncio.run(first_three()) == [0, 1, 2]
    assert steps[-1] == "closed"
    assert all(step.startswith(blocking.THREAD_NAME_PREFIX) for step in steps[:-1])

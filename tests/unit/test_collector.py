"""sapsam.api.collector: young collections by count, full ones only on the timer."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from sapsam.api.collector import NEVER_BY_COUNT, collect_fully_every, start_serving_collector
from sapsam.api.gc_pauses import PauseLog


def test_serving_freezes_start_up_and_never_collects_everything_by_count() -> None:
    before = gc.get_threshold()
    log = PauseLog()
    try:
        start_serving_collector()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[2] == NEVER_BY_COUNT
        log.install()
        for _ in range(30):  # far more than Python's default 10 older collections
            gc.collect(1)
        assert {pause.generation for pause in log.take()} == {1}
    finally:
        log.uninstall()
        gc.unfreeze()
        gc.set_threshold(*before)


def test_the_timer_collects_every_generation_and_logs_it(caplog: pytest.LogCaptureFixture) -> None:
    log = PauseLog()

    async def run() -> None:
        collecting = asyncio.create_task(collect_fully_every(0.01))
        await asyncio.sleep(0.2)
        collecting.cancel()
        await asyncio.gather(collecting, return_exceptions=True)

    log.install()
    try:
        with caplog.at_level(logging.INFO, logger="sapsam.api.collector"):
            asyncio.run(run())
    finally:
        log.uninstall()
    assert 2 in {pause.generation for pause in log.take()}
    assert any("full garbage collection" in record.getMessage() for record in caplog.records)

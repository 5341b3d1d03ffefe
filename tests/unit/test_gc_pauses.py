"""sapsam.api.gc_pauses: the collector's pauses, timed, logged and summarised for benchmarks."""

from __future__ import annotations

import asyncio
import gc
import json
import os
from pathlib import Path

from sapsam.api.gc_pauses import PauseLog, report_pauses, summarize


def test_a_collection_is_timed_with_its_generation_and_what_it_collected() -> None:
    log = PauseLog()
    log.install()
    try:
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        gc.collect(2)
    finally:
        log.uninstall()
    pauses = [pause for pause in log.take() if pause.generation == 2]
    assert pauses and pauses[-1].collected >= 1
    assert all(pause.wall_ms >= 0 and pause.cpu_ms >= 0 for pause in pauses)
    assert log.take() == []  # taken once
    gc.collect(0)
    assert log.take() == []  # uninstalled: no longer timed


def test_the_report_appends_a_line_per_collection_and_a_summary_counts_them(
    tmp_path: Path,
) -> None:
    async def run() -> None:
        reporting = asyncio.create_task(report_pauses(tmp_path))
        await asyncio.sleep(0)
        gc.collect(1)
        gc.collect(2)
        reporting.cancel()
        await asyncio.gather(reporting, return_exceptions=True)

    asyncio.run(run())
    lines = (tmp_path / f"gc-{os.getpid()}.jsonl").read_text().splitlines()
    pauses = [json.loads(line) for line in lines]
    assert {1, 2} <= {pause["generation"] for pause in pauses}
    assert set(pauses[0]) == {"at", "generation", "wall_ms", "cpu_ms", "collected"}
    summary = summarize(
        [
            {"generation": 0, "wall_ms": 12.0, "cpu_ms": 10.0},
            {"generation": 0, "wall_ms": 3.0, "cpu_ms": 2.0},
            {"generation": 1, "wall_ms": 40.0, "cpu_ms": 30.0},
        ],
        seconds=2.0,
    )
    assert summary == {
        "by_generation": {
            "0": {"collections": 2, "max_wall_ms": 12.0, "cpu_ms": 12.0},
            "1": {"collections": 1, "max_wall_ms": 40.0, "cpu_ms": 30.0},
        },
        "cpu_ms_per_second": 21.0,
        "pauses_10_ms_or_more": 2,
    }

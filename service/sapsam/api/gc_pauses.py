"""The cyclic collector's pauses in this process, for benchmarks (``sapsam serve --gc-report
DIR``, ``bench/capacity.py``).

A collection stops the event loop: every call and stream message of the process waits for it, so
at a few hundred calls a second its pauses are a large part of a call's p99
(docs/performance.md, "bench/capacity.py"). :class:`PauseLog` times each collection (wall clock
and the thread's CPU) by ``gc.callbacks``; :func:`report_pauses` appends them to
``DIR/gc-<pid>.jsonl`` once a second, one JSON object a line, which the benchmark reads for the
window it measures. Off unless asked for: a production server has no use for the file.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

REPORT_SECONDS: Final = 1.0


@dataclass(frozen=True)
class Pause:
    """One collection."""

    at: float
    """When it ended (``time.time()``)."""
    generation: int
    wall_ms: float
    cpu_ms: float
    """The collecting thread's CPU: the wall time less what other processes took meanwhile."""
    collected: int

    def as_json(self) -> dict[str, Any]:
        """The line written for it."""
        return {
            "at": round(self.at, 3),
            "generation": self.generation,
            "wall_ms": round(self.wall_ms, 3),
            "cpu_ms": round(self.cpu_ms, 3),
            "collected": self.collected,
        }


class PauseLog:
    """Every collection of this process from :meth:`install` on, kept until taken."""

    def __init__(self) -> None:
        self._pauses: list[Pause] = []
        self._started_wall = 0.0
        self._started_cpu = 0.0

    def install(self) -> None:
        """Start timing collections."""
        gc.callbacks.append(self._on_collection)

    def uninstall(self) -> None:
        """Stop timing collections."""
        if self._on_collection in gc.callbacks:
            gc.callbacks.remove(self._on_collection)

    def take(self) -> list[Pause]:
        """The collections since the last take."""
        taken, self._pauses = self._pauses, []
        return taken

    def _on_collection(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started_wall = time.perf_counter()
            self._started_cpu = time.thread_time()
            return
        wall = (time.perf_counter() - self._started_wall) * 1e3
        cpu = (time.thread_time() - self._started_cpu) * 1e3
        self._pauses.append(Pause(time.time(), info["generation"], wall, cpu, info["collected"]))


async def report_pauses(directory: Path) -> None:
    """Time this process's collections and append them to ``directory/gc-<pid>.jsonl`` once a
    second until cancelled (then once more)."""
    log = PauseLog()
    log.install()
    path = directory / f"gc-{os.getpid()}.jsonl"
    try:
        while True:
            await asyncio.sleep(REPORT_SECONDS)
            _append(path, log.take())
    finally:
        log.uninstall()
        _append(path, log.take())


def _append(path: Path, pauses: list[Pause]) -> None:
    if pauses:
        with path.open("a", encoding="utf-8") as file:
            file.writelines(json.dumps(pause.as_json()) + "\n" for pause in pauses)


def summarize(pauses: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """What a benchmark reports of the pauses one or more processes logged in a window of
    ``seconds``: collections and the longest pause by generation, the collector's CPU per second
    and the pauses of 10 ms or more."""
    by_generation: dict[str, dict[str, float]] = {}
    for pause in pauses:
        generation = by_generation.setdefault(
            str(pause["generation"]), {"collections": 0, "max_wall_ms": 0.0, "cpu_ms": 0.0}
        )
        generation["collections"] += 1
        generation["max_wall_ms"] = max(generation["max_wall_ms"], pause["wall_ms"])
        generation["cpu_ms"] = round(generation["cpu_ms"] + pause["cpu_ms"], 3)
    return {
        "by_generation": by_generation,
        "cpu_ms_per_second": round(sum(p["cpu_ms"] for p in pauses) / max(seconds, 1e-9), 3),
        "pauses_10_ms_or_more": sum(1 for p in pauses if p["wall_ms"] >= 10.0),
    }

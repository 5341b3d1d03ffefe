"""When the serving process's cyclic garbage collector runs.

Python frees most objects by their reference counts; the cyclic collector finds only garbage
that refers to itself (grpc leaves a few such objects behind every call). Each collection stops
the event loop, every call and stream message of the process with it, for as long as it walks
its generation (docs/performance.md, "bench/capacity.py": at 1,000 tables a young collection
took ~15 ms of CPU per worker, an older one 30–60, a full one ~280 ms, 470 ms of wall time).

- What start-up made (modules, descriptors, pools) lives as long as the process: frozen out of
  every collection once serving starts (``gc.freeze``).
- Young collections come by count, a tenth as often as Python's default (:data:`THRESHOLDS`): a
  call allocates hundreds of container objects that die young, and at 700 the young generation
  is collected several times a second and promotes the objects of calls in flight.
- Full collections, which walk every object of every open stream (about sixty-five each), never
  come by count, which at this rate made one every two minutes or so per worker; they come every
  :data:`FULL_COLLECTION_SECONDS` instead (:func:`collect_fully_every`), each logged with its
  duration. What they reclaim (the cycles of calls and streams that ended after living through
  an older collection) waits that long, a few megabytes at most.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import Final

NEVER_BY_COUNT: Final = 1_000_000_000
"""A third threshold no count reaches: the full collection only by :func:`collect_fully_every`."""
THRESHOLDS: Final = (10_000, 10, NEVER_BY_COUNT)
"""The collector's thresholds while serving (Python's default: 700, 10, 10)."""
FULL_COLLECTION_SECONDS: Final = 600.0
"""How often a serving process collects every generation."""

_logger = logging.getLogger("sapsam.api.collector")


def start_serving_collector() -> None:
    """Freeze what start-up made and set the serving thresholds (once serving starts)."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


async def collect_fully_every(seconds: float = FULL_COLLECTION_SECONDS) -> None:
    """Collect every generation every ``seconds`` until cancelled, logging each collection."""
    while True:
        await asyncio.sleep(seconds)
        started = time.perf_counter()
        collected = gc.collect()
        _logger.info(
            "full garbage collection: %d objects freed in %.1f ms",
            collected,
            (time.perf_counter() - started) * 1e3,
        )

"""The metrics' cost per call: what counting a call (``sapsam.api.call_metrics``) adds to the
call log's work on every call ``sapsam serve`` ends.

Prints one JSON object. Alternating rounds, in one process, of ``--calls`` calls each:
``record`` alone (``CALLS.record``: the method's and status's series, its latency bucket, the
sum), and the call log's whole ending (``call_subject`` then ``log_call``, which records too, with
the logging ``sapsam serve`` sets up, writing to /dev/null) with and without the recording (the
counter swapped for a no-op in the "without" rounds). Methods and statuses cycle over 24 series,
latencies over the buckets. ``*_ns_per_call`` are the best round's CPU time per call (the figure
least disturbed by other processes), ``median_*`` the middle round's.

No database, no server, no socket: ``python bench/call_metrics.py [--calls 50000] [--rounds 9]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
import uuid

from sapsam.api import call_log
from sapsam.api.call_log import call_subject, configure_logging, log_call
from sapsam.api.call_metrics import CallMetrics
from sapsam_proto.v1 import table_service_pb2

METHODS = [f"/sapsam.v1.TableService/Method{index}" for index in range(8)]
STATUSES = ["OK", "FAILED_PRECONDITION", "INVALID_ARGUMENT"]


class _NoCount:
    def record(self, method: str, status: str, seconds: float) -> None:
        return None


def _round(calls: int, work: str) -> float:
    """CPU seconds for ``calls`` calls of ``work``."""
    metrics = CallMetrics()
    request = table_service_pb2.GetTableRequest(name=f"tables/{uuid.uuid4()}")
    call_log.CALLS = metrics if work != "log_without" else _NoCount()  # type: ignore[assignment]
    started_cpu = time.process_time()
    if work == "record":
        for index in range(calls):
            metrics.record(METHODS[index % 8], STATUSES[index % 3], (index % 97) * 0.0003)
    else:
        for index in range(calls):
            started = time.perf_counter()
            table, seat = call_subject(request)
            log_call(METHODS[index % 8], table, seat, STATUSES[index % 3], started)
    return time.process_time() - started_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=9)
    arguments = parser.parse_args()
    configure_logging(log_format="json")
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(open(os.devnull, "w"))  # noqa: SIM115 - lives as long as the process
    works = ("record", "log_with", "log_without")
    seconds: dict[str, list[float]] = {work: [] for work in works}
    for _ in range(arguments.rounds):
        for work in works:
            seconds[work].append(_round(arguments.calls, work))
    figures: dict[str, object] = {"calls": arguments.calls, "rounds": arguments.rounds}
    for work in works:
        figures[f"{work}_ns_per_call"] = round(min(seconds[work]) / arguments.calls * 1e9)
        figures[f"median_{work}_ns_per_call"] = round(
            statistics.median(seconds[work]) / arguments.calls * 1e9
        )
    figures["load_average"] = [round(load, 2) for load in os.getloadavg()]
    json.dump(figures, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

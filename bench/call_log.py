"""The call log's cost per call: the time ``sapsam serve`` spends writing one call's log line.

Prints one JSON object. Each round logs ``--calls`` calls as the call-log interceptor does when a
call ends (``call_subject``: the table and seat from the request's resource names; ``log_call``:
the line and the logging call) with the logging ``sapsam serve`` sets up
(``configure_logging``), its handler writing to ``/dev/null``, so what is measured is the line
and the logging machinery, not a terminal. Two request shapes alternate: ``GetTable`` (a table
name) and ``CutDeck`` (a seat name). ``us_per_call`` is the best round's wall time per call and
``cpu_us_per_call`` its process CPU time per call (the best is the figure least disturbed by
other processes on the machine); ``median_us_per_call`` is the middle round's.

No database, no server, no socket: ``python bench/call_log.py [--calls 20000] [--rounds 7]``.
Issue #14 asked for a fraction of the 62 us per call it measured. On this machine the first
version's line (``json.dumps`` of a dict, ``logger.info``; the parent of 28f0b18) took 15 us of
CPU per call and 28f0b18's about 9: best rounds of separate runs of this script on each commit,
alternated, 2026-12-02, on a machine shared with other jobs; not one run's ratio, since one run
measures only the code it imports.
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

from sapsam.api.call_log import call_subject, configure_logging, log_call
from sapsam_proto.v1 import table_service_pb2


def _log_one_call(method: str, request: object, started: float, status: str) -> None:
    """What ``CallLogInterceptor`` does for a call that ends."""
    table, seat = call_subject(request)
    log_call(method, table, seat, status, started)


def _round(calls: int) -> tuple[float, float]:
    table = f"tables/{uuid.uuid4()}"
    shapes = [
        ("/sapsam.v1.TableService/GetTable", table_service_pb2.GetTableRequest(name=table), "OK"),
        (
            "/sapsam.v1.TableService/CutDeck",
            table_service_pb2.CutDeckRequest(seat=f"{table}/seats/2", position=7),
            "FAILED_PRECONDITION",
        ),
    ]
    wall, cpu = time.perf_counter(), time.process_time()
    for number in range(calls):
        method, request, status = shapes[number & 1]
        _log_one_call(method, request, time.perf_counter(), status)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    """Measure and print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    arguments = parser.parse_args()
    stderr = sys.stderr
    with open(os.devnull, "w") as devnull:
        sys.stderr = devnull  # configure_logging's handler writes to the stderr of its set-up
        try:
            configure_logging()
        finally:
            sys.stderr = stderr
        _round(1_000)  # warm-up: caches, the regular expression, the allocator
        rounds = [_round(arguments.calls) for _ in range(arguments.rounds)]
        logging.getLogger().handlers.clear()
    per_call = sorted(wall / arguments.calls * 1e6 for wall, _ in rounds)
    cpu_per_call = sorted(cpu / arguments.calls * 1e6 for _, cpu in rounds)
    print(
        json.dumps(
            {
                "calls_per_round": arguments.calls,
                "rounds": arguments.rounds,
                "us_per_call": round(per_call[0], 2),
                "cpu_us_per_call": round(cpu_per_call[0], 2),
                "median_us_per_call": round(statistics.median(per_call), 2),
            }
        )
    )


if __name__ == "__main__":
    main()

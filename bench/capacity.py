"""Capacity at human pace: the most four-seat tables one server plays with every call's p99 at most
100 ms and nothing failing, and the CPU each table costs.

Prints one JSON object. Starts ``sapsam serve --workers 2`` on a free loopback port, on a private
PostgreSQL cluster (fsync on; or ``--database-url``), and ``--generators`` load generator processes
(asyncio, ``grpc.aio``: one task per stream, no thread each). Every table has four players, each
holding a WatchTable stream; every action (start, entropy, cut, arrange = commit and confirm in
one call, reveal) comes a think time after the event that allows it (``--think-seconds``, 5 by
default, give or take a fifth), so a deal takes about five think times and 14 unary calls. Each
seat acts on its own stream's events and makes no call its stream already answered (its hand is
in CardsDealt; the cutter is the seat on the dealer's right of DealStarted; seat 0 checks every
scored deal's result on DealScored). Arrangements are random legal rows made during the think
time, sent as the SDK sends them by default: scheme 2 commitments, moves signed by each player's
registered key (see ``_seats``).

The search: levels of N tables, from ``--start-tables`` (the target, 1,000, by default), doubling
while a level passes (up to ``--max-tables``) and halving the gap once one fails (tables are
added, or stopped, between levels). New tables draw their dealer at random moments over four think
times; a level that added tables waits ``--settle-seconds`` (five think times) before it measures
a window of ``--level-seconds``: per-method p50/p99 of the calls that finished in it, event
delivery lag (an event's record time to its arrival on a stream), deals scored, failures, and the
CPU spent in it by the server, PostgreSQL (the backends serving the benchmark's database; on the
private cluster every cluster process too) and the generators, per table per second. A level
passes when every method's p99 is at most 100 ms and nothing failed. No new level starts after
``--max-seconds``. Per level also the cyclic collector's pauses, of the server's processes
(``sapsam serve --gc-report``) and of the generators: each stops its process's loop, so a call
that meets one waits for it. The generators stand in for clients on other machines: they do
not collect in the window, so that their own pauses do not land in the latencies they time, and
catch up after it (``--generators-collect-in-window``: as before).

Usage: ``python bench/capacity.py [--think-seconds 5] [--start-tables 1000] [--max-tables 1000]
[--level-seconds 25] [--generators 2] [--tables-per-connection 4] [--workers 2] [--single-level]
[--batch-events]``; with ``--batch-events`` every stream asks for the events of one write in one
message (``WatchTableRequest.batch_events``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _game import warm_up_rules
from _postgres import benchmark_database, postgres_spent, read_postgres
from _procs import cpu_by_pid, cpu_delta, latency_summary, rss_mb, stop_cleanly_on_sigterm
from _seats import Connection, Table, Tally
from _server import describe, running_server, supported

from sapsam.api.collector import start_serving_collector
from sapsam.api.gc_pauses import Pause, PauseLog, summarize

P99_LIMIT_MS = 100.0
TARGET_TABLES = 1000


@dataclass(frozen=True)
class GeneratorSettings:
    """What a load generator process is told when it starts (the command line's choices)."""

    target: str
    think_seconds: float
    tables_per_connection: int
    setup_at_once: int
    batch_events: bool
    collect_in_window: bool


async def _generate(settings: GeneratorSettings, pipe: Any) -> None:
    warm_up_rules()
    # As the server does (sapsam.api.collector): start-up's objects frozen, young collections
    # a tenth as often, no full collection by count (one walks every object of the generator's
    # 2,000 streams and stops it for hundreds of ms, delaying the calls it times); a run is
    # too short for the timed ones, which the generator leaves out.
    start_serving_collector()
    pauses = PauseLog()  # a generator's own pauses delay the calls it times: reported beside
    pauses.install()
    tally = Tally()
    gate = asyncio.Semaphore(settings.setup_at_once)
    running: list[tuple[Table, asyncio.Task[None]]] = []
    connections: list[Connection] = []
    loop = asyncio.get_running_loop()
    window_pauses: list[Pause] = []

    def end_window() -> None:
        window_pauses[:] = pauses.take()  # the window's own collections
        gc.enable()

    while True:
        order = await loop.run_in_executor(None, pipe.recv)
        if order[0] == "tables":
            while len(running) < order[1]:
                if len(running) % settings.tables_per_connection == 0:
                    connections.append(Connection(settings.target))
                table = Table(
                    connections[-1], tally, settings.think_seconds, gate, settings.batch_events
                )
                running.append((table, asyncio.create_task(table.play())))
            while len(running) > order[1]:
                table, task = running.pop()
                table.stop()
                task.cancel()
            pipe.send("ok")
        elif order[0] == "status":
            pipe.send(sum(1 for table, _ in running if len(table.seats) == 4))
        elif order[0] == "window":
            tally.reset((order[1], order[2]))
            pauses.take()
            if not settings.collect_in_window:
                # A generator stands in for clients on other machines: its own collections
                # would land in the latencies it times. None in the window; it catches up
                # after (its CPU still counts, but for those few milliseconds).
                gc.disable()
            loop.call_at(order[2], end_window)
            pipe.send("ok")
        elif order[0] == "report":
            pipe.send(
                {
                    "latencies_ms": tally.latencies_ms,
                    "delivery_ms": tally.delivery_ms,
                    "errors": dict(tally.errors),
                    "deals_scored": tally.deals_scored,
                    "messages": tally.messages,
                    "gc_pauses": [pause.as_json() for pause in window_pauses],
                }
            )
        else:
            for table, task in running:
                table.stop()
                task.cancel()
            await asyncio.gather(*(task for _, task in running), return_exceptions=True)
            for connection in connections:
                await connection.channel.close()
            pipe.send("ok")
            return


def generator_process(settings: GeneratorSettings, pipe: Any) -> None:
    """A load generator process: one event loop playing the tables it is given."""
    asyncio.run(_generate(settings, pipe))


class Generators:
    """The generator processes and their pipes."""

    def __init__(self, target: str, count: int, arguments: argparse.Namespace) -> None:
        context = multiprocessing.get_context("spawn")
        settings = GeneratorSettings(
            target,
            arguments.think_seconds,
            arguments.tables_per_connection,
            arguments.setup_at_once,
            arguments.batch_events,
            arguments.generators_collect_in_window,
        )
        self.pipes, self.processes = [], []
        for _ in range(count):
            ours, theirs = context.Pipe()
            process = context.Process(target=generator_process, args=(settings, theirs))
            process.start()
            self.pipes.append(ours)
            self.processes.append(process)

    def pids(self) -> list[int]:
        """The generators' pids."""
        return [process.pid for process in self.processes if process.pid is not None]

    def ask(self, orders: list[tuple[Any, ...]], timeout: float = 120) -> list[Any]:
        """One order to each generator; their answers."""
        for pipe, order in zip(self.pipes, orders, strict=True):
            pipe.send(order)
        answers = []
        for pipe in self.pipes:
            if not pipe.poll(timeout):
                raise RuntimeError("a load generator did not answer")
            answers.append(pipe.recv())
        return answers

    def tell_all(self, *order: Any) -> list[Any]:
        """The same order to every generator."""
        return self.ask([order] * len(self.pipes))

    def stop(self) -> None:
        """End every table and the processes."""
        try:
            self.tell_all("stop")
        finally:
            for process in self.processes:
                process.join(30)
                if process.is_alive():
                    process.kill()


def run_level(
    generators: Generators,
    server: Any,
    database: Any,
    tables: int,
    arguments: argparse.Namespace,
    gc_report: Path | None,
) -> dict[str, Any]:
    """Grow or shrink to ``tables``, let them settle, measure one window."""
    count = len(generators.pipes)
    shares = [tables // count + (1 if index < tables % count else 0) for index in range(count)]
    grew = sum(generators.tell_all("status")) < tables
    generators.ask([("tables", share) for share in shares])
    setup_began = time.monotonic()
    while sum(generators.tell_all("status")) < tables:
        if time.monotonic() - setup_began > arguments.setup_timeout:
            break
        time.sleep(1.0)
    setup_seconds = time.monotonic() - setup_began
    if grew:  # new tables start over four think times, then take a deal to reach their pace
        time.sleep(arguments.settle_seconds)
    begin = time.monotonic() + 0.2
    until = begin + arguments.level_seconds
    wall_window = (time.time() + 0.2, time.time() + 0.2 + arguments.level_seconds)
    generators.tell_all("window", begin, until)
    time.sleep(max(0.0, begin - time.monotonic()))
    server_before, load_before = cpu_by_pid(server.pids()), cpu_by_pid(generators.pids())
    postgres_before = read_postgres(database)
    time.sleep(max(0.0, until - time.monotonic()))
    server_after, load_after = cpu_by_pid(server.pids()), cpu_by_pid(generators.pids())
    postgres_after = read_postgres(database)
    rss = rss_mb(server.pids())
    reports = generators.tell_all("report")
    latencies: dict[str, list[float]] = {}
    for report in reports:
        for method, values in report["latencies_ms"].items():
            latencies.setdefault(method, []).extend(values)
    delivery = [lag for report in reports for lag in report["delivery_ms"]]
    errors = dict(sum((Counter(report["errors"]) for report in reports), Counter()))
    per_method = {method: latency_summary(values) for method, values in sorted(latencies.items())}
    worst = max((summary["p99_ms"] or 0.0 for summary in per_method.values()), default=None)
    postgres = postgres_spent(postgres_before, postgres_after)
    per_table_second = tables * arguments.level_seconds

    def ms_per_table_second(seconds: float | None) -> float | None:
        return None if seconds is None else round(seconds / per_table_second * 1e3, 3)

    calls = sum(len(values) for values in latencies.values())
    deals = sum(report["deals_scored"] for report in reports)
    spent = {
        "server": cpu_delta(server_before, server_after),
        "postgres_backends": postgres["backends_cpu_seconds"],
        "postgres_cluster": postgres["cluster_cpu_seconds"],
        "load_generators": cpu_delta(load_before, load_after),
    }

    def ms_per(count: int) -> dict[str, float | None]:
        # Per deal or per call: unlike per table-second, these do not fall when a saturated
        # machine slows the pace (fewer deals per table per minute).
        return {
            party: None if seconds is None or not count else round(seconds / count * 1e3, 3)
            for party, seconds in spent.items()
        }

    return {
        "tables": tables,
        "streams": tables * 4,
        "passed": bool(per_method) and not errors and worst is not None and worst <= P99_LIMIT_MS,
        "setup_seconds": round(setup_seconds, 1),
        "worst_p99_ms": worst,
        "calls": calls,
        "calls_per_second": round(calls / arguments.level_seconds, 1),
        "deals_scored": deals,
        "deals_per_table_per_minute": round(deals / tables / arguments.level_seconds * 60, 2),
        # With under 100 calls of a method in the window, its p99 is its slowest call.
        "all_calls": latency_summary([ms for values in latencies.values() for ms in values]),
        "event_delivery": latency_summary(delivery),
        "errors": errors,
        "cpu_ms_per_table_per_second": {
            party: ms_per_table_second(seconds) for party, seconds in spent.items()
        },
        "cpu_ms_per_deal": ms_per(deals),
        "cpu_ms_per_call": ms_per(calls),
        "calls_per_deal": round(calls / deals, 1) if deals else None,
        "stream_messages_per_table_per_second": round(
            sum(report["messages"] for report in reports) / tables / arguments.level_seconds, 2
        ),
        "stream_events_per_table_per_second": round(
            len(delivery) / tables / arguments.level_seconds, 2
        ),
        "statements_per_call": (
            round(postgres["statements"] / calls, 2) if postgres["statements"] and calls else None
        ),
        # What the statements are, per call (the most frequent first).
        "statements_per_call_by_text": (
            {
                " ".join(text.split())[:140]: round(count / calls, 3)
                for text, count in sorted(
                    postgres["statements_by_text"].items(), key=lambda item: -item[1]
                )[:12]
            }
            if calls
            else {}
        ),
        "server_rss_mb": rss,
        # The cyclic collector's pauses in the window (sapsam serve --gc-report; each stops
        # its process's loop): a call that meets one waits for it.
        "gc_pauses": {
            "server": (
                None
                if gc_report is None
                else summarize(_server_pauses(gc_report, wall_window), arguments.level_seconds)
            ),
            "load_generators": summarize(
                [pause for report in reports for pause in report["gc_pauses"]],
                arguments.level_seconds,
            ),
        },
        "per_method": per_method,
    }


def _server_pauses(folder: Path, window: tuple[float, float]) -> list[dict[str, Any]]:
    """The server processes' collections that ended in ``window`` (wall clock)."""
    time.sleep(1.5)  # each process appends once a second
    return [
        pause
        for path in folder.glob("gc-*.jsonl")
        for pause in map(json.loads, path.read_text().splitlines())
        if window[0] <= pause["at"] <= window[1]
    ]


def next_level(tables: int, passed: int, failed: int | None, ceiling: int) -> int | None:
    """Double while passing, then halve the gap between the best pass and the first failure."""
    if failed is None:
        return None if tables >= ceiling else min(ceiling, tables * 2)
    if failed - passed <= max(4, passed // 8):
        return None
    return (passed + failed) // 2


def main() -> int:
    """Run the search and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--think-seconds", type=float, default=5.0)
    parser.add_argument("--start-tables", type=int, default=TARGET_TABLES)
    parser.add_argument("--max-tables", type=int, default=TARGET_TABLES)
    parser.add_argument("--level-seconds", type=float, default=25.0)
    parser.add_argument("--settle-seconds", type=float, default=None, help="default 5 thinks")
    parser.add_argument("--setup-timeout", type=float, default=60.0)
    parser.add_argument("--max-seconds", type=float, default=150.0, help="no new level after")
    parser.add_argument(
        "--single-level", action="store_true", help="measure --start-tables only, no search"
    )
    parser.add_argument("--generators", type=int, default=2, help="load generator processes")
    parser.add_argument("--tables-per-connection", type=int, default=4)
    parser.add_argument("--setup-at-once", type=int, default=16, help="tables set up at once")
    parser.add_argument("--workers", type=int, default=2, help="server processes")
    parser.add_argument(
        "--batch-events",
        action="store_true",
        help="streams ask for the events of one write in one message (WatchTable batch_events)",
    )
    parser.add_argument(
        "--generators-collect-in-window",
        action="store_true",
        help="the generators' cyclic collector runs in the measured window too (default: not)",
    )
    parser.add_argument("--database-url", help="PostgreSQL server (default: a private cluster)")
    parser.add_argument("--server-option", action="append", default=[], help="extra serve flag")
    arguments = parser.parse_args()
    stop_cleanly_on_sigterm()
    if arguments.settle_seconds is None:
        arguments.settle_seconds = 5 * arguments.think_seconds
    began = time.monotonic()
    load_before = os.getloadavg()[0]
    levels: list[dict[str, Any]] = []
    gc_report = (
        Path(tempfile.mkdtemp(prefix="sapsam-capacity-gc-")) if supported("--gc-report") else None
    )
    extra = [*arguments.server_option, *(["--gc-report", str(gc_report)] if gc_report else [])]
    with (
        benchmark_database(arguments.database_url, "sapsam_bench_capacity") as database,
        running_server(database.url, arguments.workers, extra=extra) as server,
    ):
        generators = Generators(server.target, arguments.generators, arguments)
        try:
            tables: int | None = arguments.start_tables
            passed, failed = 0, None
            while tables is not None and time.monotonic() - began < arguments.max_seconds:
                level = run_level(generators, server, database, tables, arguments, gc_report)
                levels.append(level)
                print(json.dumps({k: level[k] for k in list(level)[:8]}), file=sys.stderr)
                if level["passed"]:
                    passed = max(passed, tables)
                else:
                    failed = tables if failed is None else min(failed, tables)
                tables = (
                    None
                    if arguments.single_level
                    else next_level(tables, passed, failed, arguments.max_tables)
                )
        finally:
            generators.stop()
        server_line = describe(server)
    best = max(
        (level for level in levels if level["passed"]), key=lambda x: x["tables"], default=None
    )
    print(
        json.dumps(
            {
                "benchmark": "capacity",
                "server": server_line,
                "database": database.label,
                "cpus": os.cpu_count(),
                "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
                "think_seconds": arguments.think_seconds,
                "generators": arguments.generators,
                "batch_events": arguments.batch_events,
                "generators_collect_in_window": arguments.generators_collect_in_window,
                "largest_passing_tables": best["tables"] if best else 0,
                "first_failing_tables": failed,
                "searched_up_to": arguments.max_tables,
                "cpu_ms_per_table_per_second_at_largest": (
                    best["cpu_ms_per_table_per_second"] if best else None
                ),
                "target": {"tables_at_least": TARGET_TABLES, "p99_ms_at_most": P99_LIMIT_MS},
                "meets_target": bool(best and best["tables"] >= TARGET_TABLES),
                "levels": levels,
                "wall_seconds": round(time.monotonic() - began, 1),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What one more WatchTable stream costs per message, one event a message and in batches.

Prints one JSON object. Starts ``sapsam serve`` (``--workers 1`` by default, so every stream of
a table and its calls share one process) on a private PostgreSQL cluster, and one load generator
process that plays ``--tables`` four-seat tables at a short think time (``--think-seconds``), each
seat acting on its own stream, one event a message, as in ``bench/capacity.py``. Then, in rounds,
three phases of ``--window-seconds`` each, in turn, in the same run (so a burst of other work on
the machine lands on all three):

- ``none``: the tables alone;
- ``single``: plus one more stream per seat (four per table, each as the seat's player, so each is
  sent what the seat's own stream is), opened at the table's head, one event a message;
- ``batch``: the same extra streams with ``batch_events`` (the events of one write in a message).

Per phase: server, PostgreSQL and generator CPU, per deal scored too, the tables' events and the
extra streams' messages and events. What an extra message costs: the phase's CPU beyond what
its tables' events cost in the same round's ``none`` (CPU per table event), divided by its extra
messages; the same per extra event. The extra streams
open after ``--settle-seconds`` before each window, and close after it.

Usage: ``python bench/stream_cost.py [--tables 100] [--think-seconds 1] [--window-seconds 15]
[--rounds 4] [--settle-seconds 3] [--workers 1]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import statistics
import sys
import time
from typing import Any

import grpc
from _game import warm_up_rules
from _postgres import benchmark_database, postgres_spent, read_postgres
from _procs import cpu_by_pid, cpu_delta, stop_cleanly_on_sigterm
from _seats import Connection, Table, Tally
from _server import describe, running_server

from sapsam.api.collector import start_serving_collector
from sapsam_proto.v1 import table_service_pb2

PHASES = ("none", "single", "batch")


class HeadTable(Table):
    """A scripted table that also remembers the last version its seat 0 stream brought."""

    head = 0

    def on_event(self, seat: int, event: Any) -> None:
        if seat == 0:
            self.head = max(self.head, event.version)
        super().on_event(seat, event)


class ExtraCount:
    """Messages and events the extra streams received inside the window."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Count a new window (the streams hold this object, so it is reset, not replaced)."""
        self.messages = 0
        self.events = 0
        self.errors = 0


async def _extra_stream(
    table: HeadTable, seat: int, batch: bool, tally: Tally, count: ExtraCount
) -> None:
    request = table_service_pb2.WatchTableRequest(
        table=table.name, after_version=table.head, batch_events=batch
    )
    stream = table.connection.tables.WatchTable(request, metadata=table.metadata[seat])
    try:
        async for response in stream:
            if tally.inside():
                count.messages += 1
                count.events += len(response.events) if batch else 1
    except grpc.aio.AioRpcError as error:
        if error.code() != grpc.StatusCode.CANCELLED:
            count.errors += 1


async def _generate(target: str, think: float, per_connection: int, pipe: Any) -> None:
    warm_up_rules()
    start_serving_collector()  # as the server and bench/capacity.py's generators do
    tally = Tally()
    gate = asyncio.Semaphore(16)
    tables: list[HeadTable] = []
    plays: list[asyncio.Task[None]] = []
    extras: list[asyncio.Task[None]] = []
    count = ExtraCount()
    connections: list[Connection] = []
    loop = asyncio.get_running_loop()
    while True:
        order = await loop.run_in_executor(None, pipe.recv)
        if order[0] == "tables":
            for index in range(order[1]):
                if index % per_connection == 0:
                    connections.append(Connection(target))
                table = HeadTable(connections[-1], tally, think, gate)
                tables.append(table)
                plays.append(asyncio.create_task(table.play()))
            pipe.send("ok")
        elif order[0] == "status":
            pipe.send(sum(1 for table in tables if table.head > 0))
        elif order[0] == "extras":  # ("extras", phase): close the last phase's, open this one's
            for task in extras:
                task.cancel()
            await asyncio.gather(*extras, return_exceptions=True)
            extras = []
            batch = order[1] == "batch"
            if order[1] != "none":
                extras = [
                    asyncio.create_task(_extra_stream(table, seat, batch, tally, count))
                    for table in tables
                    for seat in range(4)
                ]
            pipe.send("ok")
        elif order[0] == "window":
            tally.reset((order[1], order[2]))
            count.reset()
            pipe.send("ok")
        elif order[0] == "report":
            pipe.send(
                {
                    "deals_scored": tally.deals_scored,
                    # Each event of a table reaches its four seats' own streams.
                    "table_events": len(tally.delivery_ms) / 4,
                    "extra_messages": count.messages,
                    "extra_events": count.events,
                    "extra_stream_errors": count.errors,
                    "errors": dict(tally.errors),
                }
            )
        else:
            for task in extras:
                task.cancel()
            for table in tables:
                table.stop()
            for task in plays:
                task.cancel()
            await asyncio.gather(*extras, *plays, return_exceptions=True)
            for connection in connections:
                await connection.channel.close()
            pipe.send("ok")
            return


def generator_process(target: str, think: float, per_connection: int, pipe: Any) -> None:
    """The load generator: one event loop playing every table and holding every stream."""
    asyncio.run(_generate(target, think, per_connection, pipe))


def _ask(pipe: Any, *order: Any, timeout: float = 120) -> Any:
    pipe.send(order)
    if not pipe.poll(timeout):
        raise RuntimeError("the load generator did not answer")
    return pipe.recv()


def _window(
    pipe: Any, server: Any, database: Any, generator: int, seconds: float
) -> dict[str, Any]:
    begin = time.monotonic() + 0.2
    until = begin + seconds
    _ask(pipe, "window", begin, until)
    time.sleep(max(0.0, begin - time.monotonic()))
    server_before, generator_before = cpu_by_pid(server.pids()), cpu_by_pid([generator])
    postgres_before = read_postgres(database)
    time.sleep(max(0.0, until - time.monotonic()))
    server_after, generator_after = cpu_by_pid(server.pids()), cpu_by_pid([generator])
    postgres_after = read_postgres(database)
    report = _ask(pipe, "report")
    deals = report["deals_scored"]
    postgres = postgres_spent(postgres_before, postgres_after)
    spent = {
        "server": cpu_delta(server_before, server_after),
        "postgres_backends": postgres["backends_cpu_seconds"],
        "load_generator": cpu_delta(generator_before, generator_after),
    }
    return {
        **report,
        "cpu_seconds": {party: round(seconds or 0.0, 3) for party, seconds in spent.items()},
        "cpu_ms_per_deal": {
            party: None if seconds is None or not deals else round(seconds / deals * 1e3, 3)
            for party, seconds in spent.items()
        },
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def _per_extra(windows: list[dict[str, Any]], phase: str, party: str) -> dict[str, Any]:
    """Per round: the phase's CPU beyond what its tables' events cost in the round's ``none``
    (CPU per table event there, times this window's table events), per extra message and
    per extra event. Per table event rather than per deal: a window cuts deals at its edges."""
    per_message, per_event = [], []
    by_phase = [windows[index :: len(PHASES)] for index in range(len(PHASES))]
    for rounds in zip(*by_phase, strict=False):  # the last round may lack a phase
        base, this = rounds[0], rounds[PHASES.index(phase)]
        if not this["extra_messages"] or not base["table_events"]:
            continue
        base_per_event = base["cpu_seconds"][party] / base["table_events"]
        extra = this["cpu_seconds"][party] - base_per_event * this["table_events"]
        per_message.append(extra / this["extra_messages"] * 1e6)
        per_event.append(extra / this["extra_events"] * 1e6)

    def summary(values: list[float]) -> dict[str, Any]:
        return {
            "median": round(statistics.median(values), 1) if values else None,
            "rounds": [round(value, 1) for value in values],
        }

    return {"us_per_message": summary(per_message), "us_per_event": summary(per_event)}


def main() -> int:
    """Run the rounds and print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--think-seconds", type=float, default=1.0)
    parser.add_argument("--window-seconds", type=float, default=15.0)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--settle-seconds", type=float, default=3.0)
    parser.add_argument("--tables-per-connection", type=int, default=4)
    parser.add_argument("--workers", type=int, default=1, help="server processes")
    parser.add_argument("--database-url", help="PostgreSQL server (default: a private cluster)")
    parser.add_argument("--server-option", action="append", default=[], help="extra serve flag")
    arguments = parser.parse_args()
    stop_cleanly_on_sigterm()
    began = time.monotonic()
    load_before = os.getloadavg()[0]
    windows: list[dict[str, Any]] = []
    with (
        benchmark_database(arguments.database_url, "sapsam_bench_stream_cost") as database,
        running_server(database.url, arguments.workers, extra=arguments.server_option) as server,
    ):
        context = multiprocessing.get_context("spawn")
        pipe, theirs = context.Pipe()
        process = context.Process(
            target=generator_process,
            args=(server.target, arguments.think_seconds, arguments.tables_per_connection, theirs),
        )
        process.start()
        assert process.pid is not None
        try:
            _ask(pipe, "tables", arguments.tables)
            while _ask(pipe, "status") < arguments.tables:
                time.sleep(0.5)
            time.sleep(5 * arguments.think_seconds)  # every table at its pace
            for _ in range(arguments.rounds):
                for phase in PHASES:
                    _ask(pipe, "extras", phase)
                    time.sleep(arguments.settle_seconds)
                    window = _window(pipe, server, database, process.pid, arguments.window_seconds)
                    windows.append({"phase": phase, **window})
                    print(json.dumps(windows[-1]), file=sys.stderr)
            _ask(pipe, "extras", "none")
        finally:
            with contextlib.suppress(Exception):
                _ask(pipe, "stop")
            process.join(30)
            if process.is_alive():
                process.kill()
        server_line = describe(server)
    print(
        json.dumps(
            {
                "benchmark": "stream_cost",
                "server": server_line,
                "database": database.label,
                "cpus": os.cpu_count(),
                "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
                "tables": arguments.tables,
                "think_seconds": arguments.think_seconds,
                "extra_streams": arguments.tables * 4,
                "per_extra": {
                    phase: {
                        party: _per_extra(windows, phase, party)
                        for party in ("server", "load_generator")
                    }
                    for phase in PHASES[1:]
                },
                "windows": windows,
                "wall_seconds": round(time.monotonic() - began, 1),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

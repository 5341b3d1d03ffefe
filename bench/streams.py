"""Many open WatchTable streams on one server process: memory, health latency while they are open,
and how long one appended event takes to reach all of them.

Prints one JSON object. Starts ``sapsam serve --workers 1`` on a free loopback port, on a private
PostgreSQL cluster (fsync on; or ``--database-url``), then:

1. ``open_tables``: ``--open-tables`` four-seat tables created, seated, their dealer drawn and a
   deal started; the server's RSS then (its process tree, from /proc);
2. ``streams``: ``--streams`` WatchTable streams opened from ``--generators`` asyncio processes
   (``grpc.aio``, ``--streams-per-connection`` per channel), by players that each hold at most 16
   (under the default per-player limit, which the benchmark also turns off where the server has
   the flag), on the first ``--watched-tables`` tables (1 by default: every stream on one table);
   a stream counts as open once it delivered the table's history;
3. while they are open: ``grpc.health.v1.Health/Check`` and ``GetTable`` called at a steady pace
   from this process for ``--probe-seconds``, p50/p99 of each; the server's RSS;
4. ``fan_out``: one ContributeEntropy on each watched table (one event per table), timed from the
   call's start to the moment the last stream received it, ``--fan-outs`` times.

Targets (issue #14): health p99 <= 50 ms, every stream within 2 s, RSS <= 1 GB with 10,000
streams; RSS < 300 MB with 1,000 open tables.

Usage: ``python bench/streams.py [--streams 10000] [--open-tables 1000] [--watched-tables 1]
[--generators 2] [--server-option=--workers=NUMBER]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import time
from typing import Any

import grpc
from _game import SEATS, bearer, create_table_request, request_id
from _postgres import benchmark_database, postgres_spent, read_postgres
from _procs import (
    cpu_by_pid,
    cpu_delta,
    latency_summary,
    progress,
    rss_mb,
    stop_cleanly_on_sigterm,
)
from _seats import Connection
from _server import describe, running_server
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sapsam_proto.v1 import player_service_pb2, table_service_pb2, table_service_pb2_grpc

STREAMS_PER_PLAYER = 16
TARGETS = {
    "health_p99_ms_at_most": 50,
    "fan_out_seconds_at_most": 2.0,
    "rss_mb_with_streams_at_most": 1024,
    "rss_mb_with_open_tables_below": 300,
}


# -- setting up (asyncio, in this process) --------------------------------------------------------


async def _players(connection: Connection, count: int, gate: asyncio.Semaphore) -> list[str]:
    async def one(index: int) -> str:
        async with gate:
            request = player_service_pb2.RegisterPlayerRequest(
                request_id=request_id(), display_name=f"streams {index}"
            )
            return str((await connection.players.RegisterPlayer(request, timeout=60)).token)

    return list(await asyncio.gather(*(one(index) for index in range(count))))


async def _open_table(
    connection: Connection, tokens: list[str], gate: asyncio.Semaphore
) -> tuple[str, list[str]]:
    async with gate:
        stub = connection.tables
        created = await stub.CreateTable(
            create_table_request(), metadata=bearer(tokens[0]), timeout=60
        )
        name = created.table.name
        seats = []
        for token in tokens:
            join = table_service_pb2.JoinTableRequest(request_id=request_id(), table=name)
            seats.append((await stub.JoinTable(join, metadata=bearer(token), timeout=60)).seat)
        choose = table_service_pb2.ChooseDealerRequest(request_id=request_id(), table=name)
        await stub.ChooseDealer(choose, metadata=bearer(tokens[0]), timeout=60)
        start = table_service_pb2.StartDealRequest(request_id=request_id(), table=name)
        await stub.StartDeal(start, metadata=bearer(tokens[0]), timeout=60)
        return str(name), [str(seat) for seat in seats]


async def open_tables(
    target: str, count: int, at_once: int
) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """``count`` tables with a deal started, seated by the same four players: ((name, seats) of
    each table, the players' tokens)."""
    connection = Connection(target)
    gate = asyncio.Semaphore(at_once)
    tokens = await _players(connection, SEATS, gate)
    tables = await asyncio.gather(*(_open_table(connection, tokens, gate) for _ in range(count)))
    await connection.channel.close()
    return list(tables), tokens


async def stream_players(target: str, count: int) -> list[str]:
    """``count`` players' tokens."""
    connection = Connection(target)
    tokens = await _players(connection, count, asyncio.Semaphore(32))
    await connection.channel.close()
    return tokens


async def append_one_each(target: str, tables: list[str], seats: list[str], token: str) -> None:
    """One ContributeEntropy on each table (its seat ``seats[i]``), all at once."""
    connection = Connection(target)
    stub = connection.tables

    async def one(seat: str) -> None:
        request = table_service_pb2.ContributeEntropyRequest(
            request_id=request_id(), seat=seat, entropy=os.urandom(16)
        )
        await stub.ContributeEntropy(request, metadata=bearer(token), timeout=30)

    await asyncio.gather(*(one(seat) for seat in seats))
    await connection.channel.close()


# -- the stream holders (generator processes) ----------------------------------------------------


async def _hold(target: str, assignments: list[tuple[str, str]], per_connection: int, pipe: Any):
    arrivals: dict[tuple[str, int], list[float]] = {}
    opened: dict[str, int] = {}  # streams that delivered the history, by table
    errors: dict[str, int] = {}
    loop = asyncio.get_running_loop()
    # Started and imported: the opening is measured from the "open" order on, without this
    # process's own start-up.
    pipe.send("ready")
    await loop.run_in_executor(None, pipe.recv)
    connections = [Connection(target) for _ in range(0, len(assignments), max(1, per_connection))]

    async def watch(index: int, table: str, token: str) -> None:
        connection = connections[index // max(1, per_connection)]
        stream = connection.tables.WatchTable(
            table_service_pb2.WatchTableRequest(table=table, after_version=0),
            metadata=bearer(token),
        )
        first = True
        try:
            async for response in stream:
                if first:
                    opened[table], first = opened.get(table, 0) + 1, False
                arrivals.setdefault((table, response.event.version), []).append(time.monotonic())
        except grpc.aio.AioRpcError as error:  # our own cancel raises CancelledError instead
            key = f"{error.code().name}: {error.details()}"[:160]
            errors[key] = errors.get(key, 0) + 1
            return
        errors["ended by the server"] = errors.get("ended by the server", 0) + 1

    tasks = [
        asyncio.create_task(watch(index, table, token))
        for index, (table, token) in enumerate(assignments)
    ]
    while True:
        order = await loop.run_in_executor(None, pipe.recv)
        if order[0] == "opened":
            pipe.send({"opened": opened, "errors": errors})
        elif order[0] == "arrivals":
            wanted: dict[str, int] = order[1]
            pipe.send(
                {
                    table: (len(times), max(times) if times else None)
                    for table, version in wanted.items()
                    for times in [arrivals.get((table, version), [])]
                }
            )
        else:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for connection in connections:
                await connection.channel.close()
            pipe.send("ok")
            return


def holder_process(
    target: str, assignments: list[tuple[str, str]], per_connection: int, pipe: Any
) -> None:
    """A generator process holding its share of the streams."""
    asyncio.run(_hold(target, assignments, per_connection, pipe))


# -- measuring -----------------------------------------------------------------------------------


def probe(target: str, table: str, token: str, seconds: float, rate: float) -> dict[str, Any]:
    """Health checks and GetTable calls at ``rate`` per second each, for ``seconds``."""
    health_ms: list[float] = []
    table_ms: list[float] = []
    failures: dict[str, int] = {}
    with grpc.insecure_channel(target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        stub = table_service_pb2_grpc.TableServiceStub(channel)
        until = time.monotonic() + seconds
        next_call = time.monotonic()
        while time.monotonic() < until:
            for name, into in (("health", health_ms), ("GetTable", table_ms)):
                started = time.monotonic()
                try:
                    if name == "health":
                        health.Check(health_pb2.HealthCheckRequest(), timeout=5)
                    else:
                        read = table_service_pb2.GetTableRequest(name=table)
                        stub.GetTable(read, metadata=bearer(token), timeout=5)
                except grpc.RpcError as error:
                    key = f"{name} {error.code().name}"
                    failures[key] = failures.get(key, 0) + 1
                    continue
                into.append((time.monotonic() - started) * 1e3)
            next_call += 1.0 / rate
            time.sleep(max(0.0, next_call - time.monotonic()))
    return {
        "health": latency_summary(health_ms),
        "GetTable": latency_summary(table_ms),
        "failures": failures,
    }


class Holders:
    """The stream-holding processes and their pipes."""

    def __init__(self, target: str, shares: list[list[tuple[str, str]]], per_connection: int):
        context = multiprocessing.get_context("spawn")
        self.pipes, self.processes = [], []
        for share in shares:
            ours, theirs = context.Pipe()
            process = context.Process(
                target=holder_process, args=(target, share, per_connection, theirs)
            )
            process.start()
            self.pipes.append(ours)
            self.processes.append(process)
        if not all(pipe.poll(120) and pipe.recv() == "ready" for pipe in self.pipes):
            for process in self.processes:
                process.kill()
            raise RuntimeError("a stream holder did not start")

    def open(self) -> None:
        """Every holder opens its streams (answered by "opened" orders)."""
        for pipe in self.pipes:
            pipe.send(("open",))

    def ask(self, *order: Any) -> list[Any]:
        """The same order to every holder; their answers."""
        for pipe in self.pipes:
            pipe.send(order)
        answers = []
        for pipe in self.pipes:
            if not pipe.poll(120):
                raise RuntimeError("a stream holder did not answer")
            answers.append(pipe.recv())
        return answers

    def pids(self) -> list[int]:
        """The holders' pids."""
        return [process.pid for process in self.processes if process.pid is not None]

    def stop(self) -> None:
        """Cancel every stream and end the processes."""
        try:
            self.ask("stop")
        finally:
            for process in self.processes:
                process.join(30)
                if process.is_alive():
                    process.kill()


def wait_until_open(holders: Holders, streams: int, timeout: float) -> dict[str, Any]:
    """Wait until every stream delivered its history (or ``timeout``); how many did, how long."""
    began = time.monotonic()
    while True:
        answers = holders.ask("opened")
        by_table: dict[str, int] = {}
        for answer in answers:
            for table, count in answer["opened"].items():
                by_table[table] = by_table.get(table, 0) + count
        opened = sum(by_table.values())
        errors: dict[str, int] = {}
        for answer in answers:
            for key, count in answer["errors"].items():
                errors[key] = errors.get(key, 0) + count
        if opened >= streams or time.monotonic() - began > timeout:
            return {
                "opened": opened,
                "seconds": round(time.monotonic() - began, 1),
                "errors": errors,
                "by_table": by_table,
            }
        time.sleep(0.5)


def fan_out(
    target: str,
    holders: Holders,
    watched: list[tuple[str, list[str]]],
    seat: int,
    token: str,
    open_by_table: dict[str, int],
) -> dict[str, Any]:
    """One ContributeEntropy per watched table; until the last open stream has it."""
    began = time.monotonic()
    try:
        with grpc.insecure_channel(target) as channel:
            stub = table_service_pb2_grpc.TableServiceStub(channel)
            versions = {
                name: stub.GetTable(
                    table_service_pb2.GetTableRequest(name=name), metadata=bearer(token), timeout=10
                ).table.version
                + 1
                for name, _ in watched
            }
        began = time.monotonic()
        seats = [seats[seat] for _, seats in watched]
        asyncio.run(append_one_each(target, [name for name, _ in watched], seats, token))
    except grpc.RpcError as error:  # a wedged server: reported, the run goes on to its end
        return {"events": len(watched), "failed": f"{error.code().name}: {error.details()}"}
    appended = time.monotonic() - began
    expected = sum(open_by_table.get(name, 0) for name, _ in watched)  # the streams open
    while True:
        answers = holders.ask("arrivals", versions)
        received = sum(count for answer in answers for count, _ in answer.values())
        last = [latest for answer in answers for _, latest in answer.values() if latest]
        if received >= expected or time.monotonic() - began > 20:
            break
        time.sleep(0.2)
    # Streams that had not delivered the history may still get this event: count them too.
    time.sleep(1.0)
    late = sum(count for a in holders.ask("arrivals", versions) for count, _ in a.values())
    return {
        "events": len(watched),
        "streams_reached": received,
        "streams_reached_a_second_later": late,
        "streams_expected": expected,
        "append_seconds": round(appended, 3),
        "seconds_to_last_stream": round(max(last) - began, 3) if last else None,
    }


def main() -> int:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=10_000)
    parser.add_argument("--open-tables", type=int, default=1000)
    parser.add_argument("--watched-tables", type=int, default=1)
    parser.add_argument("--generators", type=int, default=2, help="stream-holding processes")
    parser.add_argument("--streams-per-connection", type=int, default=100)
    parser.add_argument("--streams-per-player", type=int, default=STREAMS_PER_PLAYER)
    parser.add_argument("--open-timeout", type=float, default=90.0)
    parser.add_argument("--probe-seconds", type=float, default=10.0)
    parser.add_argument("--probe-rate", type=float, default=20.0, help="calls/s of each kind")
    parser.add_argument("--fan-outs", type=int, default=3, choices=(1, 2, 3, 4))
    parser.add_argument("--database-url", help="PostgreSQL server (default: a private cluster)")
    parser.add_argument("--server-option", action="append", default=[], help="extra serve flag")
    arguments = parser.parse_args()
    stop_cleanly_on_sigterm()
    began = time.monotonic()
    load_before = os.getloadavg()[0]
    with (
        benchmark_database(arguments.database_url, "sapsam_bench_streams") as database,
        running_server(database.url, 1, extra=arguments.server_option) as server,
    ):
        rss_idle = rss_mb(server.pids())
        progress(f"server up; opening {arguments.open_tables} tables")
        started = time.monotonic()
        count = max(arguments.open_tables, arguments.watched_tables)
        tables, seat_tokens = asyncio.run(open_tables(server.target, count, 32))
        opened_tables = {"tables": count, "seconds": round(time.monotonic() - started, 1)}
        time.sleep(1.0)  # let the server settle (freed request buffers, finished log lines)
        opened_tables["server_rss_mb"] = rss_mb(server.pids())
        watched = tables[: arguments.watched_tables]
        per_player = arguments.streams_per_player
        players = -(-arguments.streams // per_player)
        progress(f"tables open; registering {players} players")
        tokens = asyncio.run(stream_players(server.target, players))
        assignments = [
            (watched[index % len(watched)][0], tokens[index // per_player])
            for index in range(arguments.streams)
        ]
        shares = [assignments[g :: arguments.generators] for g in range(arguments.generators)]
        progress(f"opening {arguments.streams} streams")
        holders = Holders(server.target, shares, arguments.streams_per_connection)
        try:
            server_before, holders_before = cpu_by_pid(server.pids()), cpu_by_pid(holders.pids())
            postgres_before = read_postgres(database)
            holders.open()
            opening = wait_until_open(holders, arguments.streams, arguments.open_timeout)
            open_by_table = opening.pop("by_table")
            spent = postgres_spent(postgres_before, read_postgres(database))
            opening["cpu_seconds_while_opening"] = {
                "server": round(cpu_delta(server_before, cpu_by_pid(server.pids())), 2),
                "postgres_backends": round(spent["backends_cpu_seconds"], 2),
                "holders": round(cpu_delta(holders_before, cpu_by_pid(holders.pids())), 2),
            }
            progress(f"{opening['opened']} streams open; probing")
            server_cpu = cpu_by_pid(server.pids())
            rss_streams = rss_mb(server.pids())
            probed = probe(
                server.target,
                watched[0][0],
                seat_tokens[0],
                arguments.probe_seconds,
                arguments.probe_rate,
            )
            idle_cpu = cpu_delta(server_cpu, cpu_by_pid(server.pids()))
            holders_cpu = cpu_by_pid(holders.pids())
            progress("fanning out")
            fan_outs = [
                fan_out(server.target, holders, watched, seat, seat_tokens[seat], open_by_table)
                for seat in range(arguments.fan_outs)
            ]
            fan_out_holder_cpu = cpu_delta(holders_cpu, cpu_by_pid(holders.pids()))
            rss_after = rss_mb(server.pids())
        finally:
            holders.stop()
        server_line = describe(server)
    slowest = [f["seconds_to_last_stream"] for f in fan_outs if f.get("seconds_to_last_stream")]
    reached_all = all(f.get("streams_reached", 0) >= f.get("streams_expected", 1) for f in fan_outs)
    health_p99 = probed["health"]["p99_ms"]
    result = {
        "benchmark": "streams",
        "server": server_line,
        "database": database.label,
        "cpus": os.cpu_count(),
        "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
        "server_rss_mb_idle": rss_idle,
        "open_tables": opened_tables,
        "streams": {
            "asked": arguments.streams,
            "watched_tables": len(watched),
            "players": players,
            "generators": arguments.generators,
            **opening,
            "server_rss_mb": rss_streams,
            "server_rss_mb_after_fan_outs": rss_after,
            "server_cpu_ms_per_second_during_probe": round(
                idle_cpu / arguments.probe_seconds * 1e3, 1
            ),
        },
        "while_open": probed,
        "fan_out": fan_outs,
        "fan_out_holders_cpu_seconds": round(fan_out_holder_cpu, 2),
        "targets": TARGETS,
        # The targets are for 10,000 streams and 1,000 open tables; a smaller run only tries.
        "at_target_size": arguments.streams >= 10_000 and count >= 1000,
        "meets_targets": {
            "health_p99": health_p99 is not None
            and health_p99 <= TARGETS["health_p99_ms_at_most"]
            and opening["opened"] >= arguments.streams,
            "fan_out": bool(slowest)
            and reached_all
            and max(slowest) <= TARGETS["fan_out_seconds_at_most"],
            "rss_with_streams": opening["opened"] >= arguments.streams
            and rss_streams <= TARGETS["rss_mb_with_streams_at_most"],
            "rss_with_open_tables": opened_tables["server_rss_mb"]
            < TARGETS["rss_mb_with_open_tables_below"],
        },
        "wall_seconds": round(time.monotonic() - began, 1),
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

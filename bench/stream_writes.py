"""What a server-stream message costs grpc.aio itself, on the server and on the client, one event
a message against several events in one (WatchTable's ``batch_events``).

Prints one JSON object. No sapsam server and no database: a bare ``grpc.aio`` server process
holds ``--streams`` server streams (``--group`` per "table", as a table's four seats each hold one)
opened by one client process, and publishes ``--rate`` times a second to one group: in mode
``one`` one WatchTableResponse of one event to each of its streams, in ``three`` three of them
one after the other (a write that records three events, sent one event a message), in
``batch3`` one WatchTableResponse carrying the three events (sent as ``batch_events`` sends
them). The modes alternate for ``--rounds`` rounds of ``--seconds`` each, so a burst of other
work on the machine lands on all of them. Per mode: server and client CPU per publish (per group
of streams) and per message, from /proc, the client's for the whole round (its streams open
before the round's clock starts).

Usage: ``python bench/stream_writes.py [--streams 1000] [--group 4] [--rate 100] [--seconds 10]
[--rounds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import statistics
import time
from typing import Any

import grpc
from _postgres import free_port
from _procs import cpu_by_pid

from sapsam_proto.v1 import table_service_pb2

MODES = ("one", "three", "batch3")
_METHOD = "/sapsam.bench.v1.StreamWrites/Watch"


def _event(version: int) -> Any:
    """A typical public event (an ArrangementCommitted), as WatchTable sends it."""
    response = table_service_pb2.WatchTableResponse()
    event = response.event
    event.table = "tables/6f1c5d2e-8a8b-4c55-9d0e-1234567890ab"
    event.version = version
    event.type = "ArrangementCommitted"
    event.record_time.seconds = 1_764_000_000
    event.arrangement_committed.deal = event.table + "/deals/3"
    event.arrangement_committed.seat = event.table + "/seats/2"
    event.arrangement_committed.commitment = b"x" * 32
    event.arrangement_committed.commitment_scheme = 2
    return response


async def _serve(arguments: argparse.Namespace, port: int, pipe: Any) -> None:
    queues: list[asyncio.Queue[list[Any] | None]] = []

    async def watch(request: bytes, context: Any) -> Any:
        queue: asyncio.Queue[list[Any] | None] = asyncio.Queue()
        queues.append(queue)
        while (item := await queue.get()) is not None:
            for message in item:
                yield message

    handler = grpc.unary_stream_rpc_method_handler(
        watch,
        request_deserializer=lambda raw: raw,
        response_serializer=lambda message: message.SerializeToString(),
    )
    server = grpc.aio.server()
    generic = grpc.method_handlers_generic_handler(
        "sapsam.bench.v1.StreamWrites", {"Watch": handler}
    )
    server.add_generic_rpc_handlers([generic])
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    pipe.send("serving")
    while len(queues) < arguments.streams:
        await asyncio.sleep(0.05)
    single = _event(1)
    three = [_event(1), _event(2), _event(3)]
    items = {
        "one": [single],
        "three": three,
        "batch3": [table_service_pb2.WatchTableResponse(events=[m.event for m in three])],
    }
    groups = arguments.streams // arguments.group
    loop = asyncio.get_running_loop()
    while (order := await loop.run_in_executor(None, pipe.recv)) != "stop":
        item = items[order]
        began, published = time.monotonic(), 0
        due = began
        while time.monotonic() - began < arguments.seconds:
            group = random.randrange(groups)
            for queue in queues[group * arguments.group : (group + 1) * arguments.group]:
                queue.put_nowait(item)
            published += 1
            due += 1.0 / arguments.rate
            await asyncio.sleep(max(0.0, due - time.monotonic()))
        await asyncio.sleep(0.5)  # the last writes done
        pipe.send(published)
    for queue in queues:
        queue.put_nowait(None)
    await server.stop(1)


def server_process(arguments: argparse.Namespace, port: int, pipe: Any) -> None:
    """The bare grpc.aio server."""
    asyncio.run(_serve(arguments, port, pipe))


async def _hold(arguments: argparse.Namespace, port: int, pipe: Any) -> None:
    received = [0]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_stream(
            _METHOD, request_serializer=lambda raw: raw, response_deserializer=lambda raw: raw
        )

        async def one() -> None:
            try:
                async for _ in call(b""):
                    received[0] += 1
            except grpc.aio.AioRpcError:
                pass

        tasks = [asyncio.create_task(one()) for _ in range(arguments.streams)]
        pipe.send("holding")
        await asyncio.gather(*tasks)
    pipe.send(received[0])


def client_process(arguments: argparse.Namespace, port: int, pipe: Any) -> None:
    """The client: every stream in one event loop, as a load generator holds them."""
    asyncio.run(_hold(arguments, port, pipe))


def main() -> int:
    """Alternate the modes and print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--group", type=int, default=4, help="streams sent each publish")
    parser.add_argument("--rate", type=float, default=100.0, help="publishes per second")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    load_before = os.getloadavg()[0]
    context = multiprocessing.get_context("spawn")
    port = free_port()
    server_pipe, theirs = context.Pipe()
    server = context.Process(target=server_process, args=(arguments, port, theirs))
    server.start()
    server_pipe.recv()
    client_pipe, theirs = context.Pipe()
    client = context.Process(target=client_process, args=(arguments, port, theirs))
    client.start()
    client_pipe.recv()
    time.sleep(2.0)  # every stream open
    pids = {"server": server.pid, "client": client.pid}
    rounds: list[dict[str, Any]] = []
    for _ in range(arguments.rounds):
        for mode in MODES:
            before = cpu_by_pid(pids.values())
            server_pipe.send(mode)
            published = server_pipe.recv()
            after = cpu_by_pid(pids.values())
            messages = published * arguments.group * (1 if mode != "three" else 3)
            spent = {name: after[pid] - before[pid] for name, pid in pids.items() if pid}
            rounds.append(
                {
                    "mode": mode,
                    "publishes": published,
                    "messages": messages,
                    **{
                        f"{name}_us_per_publish": round(seconds / published * 1e6, 1)
                        for name, seconds in spent.items()
                    },
                    **{
                        f"{name}_us_per_message": round(seconds / messages * 1e6, 1)
                        for name, seconds in spent.items()
                    },
                    "load_average_1m": round(os.getloadavg()[0], 2),
                }
            )
    server_pipe.send("stop")
    received = client_pipe.recv()
    server.join(10)
    client.join(10)
    medians = {
        mode: {
            key: statistics.median(entry[key] for entry in rounds if entry["mode"] == mode)
            for key in (
                "server_us_per_publish",
                "client_us_per_publish",
                "server_us_per_message",
                "client_us_per_message",
            )
        }
        for mode in MODES
    }
    print(
        json.dumps(
            {
                "benchmark": "stream_writes",
                "grpc": grpc.__version__,
                "cpus": os.cpu_count(),
                "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
                "streams": arguments.streams,
                "group": arguments.group,
                "rate": arguments.rate,
                "messages_received": received,
                "medians": medians,
                "rounds": rounds,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the cyclic collector finds in a serving process: objects per open stream, per call, per
message (load-independent counts, not timings).

Prints one JSON object. Serves the full service in this process (as ``sapsam serve`` does, on a
loop thread, start-up frozen out of collections as ``sapsam.api.collector`` does) on a private
PostgreSQL cluster; one client process (``grpc.aio``, scripted four-seat tables of
``bench/_seats.py``, streams with ``batch_events`` as ``bench/capacity.py`` opens them) then:

1. ``per_stream``: sets up ``--tables`` tables, then opens one WatchTable stream per seat; the
   objects the collector tracks in this process (``gc.get_objects()`` after a full collection)
   before and after the streams are open (each has delivered the table's history), per stream,
   and the types that grew most (``collections.Counter`` over type names; coroutines,
   generators, tasks and functions by their code's name);
2. ``per_call``: after ``--warm-deals`` deals on every table (the channels' recent events and
   the tables' memory filled), plays ``--deals`` more (14 unary calls a deal, every stream sent
   each write's events), the collector off: per call, the young generation's growth
   (``gc.get_count()[0]``, what triggers young collections: tracked objects made minus those
   freed) and the garbage only the collector frees (``gc.collect()``'s unreachable objects,
   by type);
   Then ``per_table_playing``: every object the collector tracks (beyond start-up's), per
   table, by type, its streams open and its deals under way;
3. ``collected``: ``--deals`` more deals, the collector on with the serving thresholds
   (``sapsam.api.collector``): its collections by generation and the objects they walked, per
   call, and with ``--census`` what the young ones found, by type. How many come depends on
   when the allocation bursts meet the threshold: 10 to 35 between runs of one tree on a busy
   machine, so this part tells trees apart only over many runs;
4. ``per_message``: after a full collection, one StartDeal per table (one message to each of
   its four streams), the collector off: the young objects then alive or left as garbage, per
   stream (what the next young collection walks), by type; the StartDeal's own (the table's
   new state) count a quarter each.

Usage: ``python bench/gc_objects.py [--tables 100] [--deals 2] [--warm-deals 2] [--census]``
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import json
import multiprocessing
import sys
import time
from typing import Any

from _game import SEATS, request_id, warm_up_rules
from _postgres import benchmark_database
from _seats import Connection, Table, Tally

from sapsam.api.collector import THRESHOLDS
from sapsam.api.limits import UNLIMITED
from sapsam.api.server import ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam.keys import ServerKeys
from sapsam.log.signed_note import NoteSigner
from sapsam_proto.v1 import table_service_pb2

TOP_TYPES = 40
CENSUS = "--census" in sys.argv


class ProbeTable(Table):
    """A scripted table that plays a given number of deals, then rests; counts its calls."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls = 0
        self.deals_left = 0
        self.resting = asyncio.Event()
        self.messages_seen = [0] * SEATS
        self.quiet = False  # only count messages, make no move

    async def call(self, method: str, request: Any, seat: int = 0) -> Any:
        self.calls += 1
        return await super().call(method, request, seat)

    def on_event(self, seat: int, event: Any) -> None:
        self.messages_seen[seat] += 1
        if seat == 0 and event.WhichOneof("payload") == "deal_scored":
            self.deals_left -= 1
        if not self.quiet:
            super().on_event(seat, event)

    def start_deal_later(self) -> None:
        if self.deals_left > 0:
            super().start_deal_later()
        else:
            self.resting.set()


async def _until(condition: Any, timeout: float = 600) -> None:
    ends = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > ends:
            raise TimeoutError("the client's tables did not get there")
        await asyncio.sleep(0.05)


async def _client(target: str, tables: int, deals: int, pipe: Any) -> None:
    warm_up_rules()
    loop = asyncio.get_running_loop()
    connections = [Connection(target) for _ in range(max(1, tables // 50))]
    gate = asyncio.Semaphore(8)
    tally = Tally()
    running = [
        ProbeTable(connections[index % len(connections)], tally, 0.01, gate, True)
        for index in range(tables)
    ]
    await asyncio.gather(*(table.set_up() for table in running))
    pipe.send("tables")
    await loop.run_in_executor(None, pipe.recv)
    watchers = [
        asyncio.create_task(table.watch(seat)) for table in running for seat in range(SEATS)
    ]
    await _until(lambda: all(min(table.messages_seen) > 0 for table in running))
    await asyncio.sleep(0.5)
    pipe.send("streams")
    first = True
    while (order := await loop.run_in_executor(None, pipe.recv))[0] == "play":
        for table in running:
            table.deals_left = order[1]
            table.calls = 0
            table.resting.clear()
            if first:
                table.later(0.0, "ChooseDealer", 0, table.choose_dealer_request())
            else:
                Table.start_deal_later(table)
        first = False
        tally.reset((0.0, float("inf")))  # every message counted
        await asyncio.gather(*(table.resting.wait() for table in running))
        await asyncio.sleep(0.5)
        pipe.send((sum(table.calls for table in running), tally.messages))
    seen = [sum(table.messages_seen) for table in running]
    for table in running:
        table.quiet = True
    await asyncio.gather(
        *(
            table.call(
                "StartDeal",
                table_service_pb2.StartDealRequest(request_id=request_id(), table=table.name),
            )
            for table in running
        )
    )
    await _until(
        lambda: all(
            sum(table.messages_seen) >= before + SEATS
            for table, before in zip(running, seen, strict=True)
        )
    )
    await asyncio.sleep(0.5)
    pipe.send("message")
    await loop.run_in_executor(None, pipe.recv)
    for table in running:
        table.stop()
    for task in watchers:
        task.cancel()
    await asyncio.gather(*watchers, return_exceptions=True)
    for connection in connections:
        await connection.channel.close()
    pipe.send("done")


def client_process(target: str, tables: int, deals: int, pipe: Any) -> None:
    """The client: one event loop playing the tables."""
    asyncio.run(_client(target, tables, deals, pipe))


def _kind(item: Any) -> str:
    """An object's type, and for code running or waiting (coroutines, generators, tasks, bound
    methods, functions, cells' holders) what code it is, so the counts say whose it is."""
    name = type(item).__qualname__
    code = (
        getattr(item, "cr_code", None)
        or getattr(item, "ag_code", None)
        or getattr(item, "gi_code", None)
    )
    if code is not None:
        return f"{name} {code.co_qualname}"
    if isinstance(item, asyncio.Task):
        coro = item.get_coro()
        return f"{name} {getattr(getattr(coro, 'cr_code', None), 'co_qualname', '?')}"
    if name == "method":
        return f"{name} {getattr(item.__func__, '__qualname__', '?')}"
    if name in ("function", "builtin_function_or_method", "cython_function_or_method"):
        return f"{name} {getattr(item, '__qualname__', '?')}"
    return name


def _types(objects: list[Any]) -> collections.Counter[str]:
    return collections.Counter(_kind(item) for item in objects)


def _tracked() -> collections.Counter[str]:
    gc.collect()
    return _types(gc.get_objects())


def _grown(before: collections.Counter[str], after: collections.Counter[str], per: int) -> Any:
    grown = after.copy()
    grown.subtract(before)
    return {name: round(count / per, 2) for name, count in grown.most_common(TOP_TYPES)}


class _Walks:
    """The collections the serving thresholds make while the tables play, and how many
    objects each walks (its generation and the younger ones)."""

    def __init__(self) -> None:
        self.collections = [0, 0, 0]
        self.walked = [0, 0, 0]
        self.census: collections.Counter[str] = collections.Counter()

    def collecting(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "start":
            return
        generation = info["generation"]
        self.collections[generation] += 1
        self.walked[generation] += sum(len(gc.get_objects(g)) for g in range(generation + 1))
        if CENSUS and generation == 0:
            self.census.update(_types(gc.get_objects(0)))

    def report(self, calls: int) -> dict[str, Any]:
        return {
            "calls": calls,
            "collections": self.collections,
            "objects_walked": self.walked,
            "objects_walked_per_call": round(sum(self.walked) / calls, 1),
            "young_census": {
                name: round(count / max(1, self.collections[0]))
                for name, count in self.census.most_common(TOP_TYPES)
            },
        }


def _answer(pipe: Any, client: Any) -> Any:
    while not pipe.poll(1.0):
        if not client.is_alive():
            raise RuntimeError("the client process ended")
    return pipe.recv()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument(
        "--warm-deals", type=int, default=2, help="deals played before the counted ones"
    )
    parser.add_argument("--database-url")
    parser.add_argument("--census", action="store_true", help="young objects by type")
    arguments = parser.parse_args()
    streams = arguments.tables * SEATS
    report: dict[str, Any] = {"tables": arguments.tables, "streams": streams}
    with benchmark_database(arguments.database_url, "gcobjects") as database:
        services = build_services(
            database.url,
            server_keys=ServerKeys(NoteSigner.from_seed("sapsam/bench", bytes(32)), (), "bench"),
        )
        running = start_server(ServerConfig(listen="127.0.0.1:0", limits=UNLIMITED), services)
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        client = context.Process(
            target=client_process,
            args=(f"127.0.0.1:{running.port}", arguments.tables, arguments.deals, theirs),
        )
        client.start()
        try:
            assert _answer(ours, client) == "tables"
            gc.freeze()  # as sapsam.api.collector does once serving: what exists so far stays
            gc.set_threshold(*THRESHOLDS)
            before = _tracked()
            ours.send("go")
            assert _answer(ours, client) == "streams"
            after = _tracked()
            report["per_stream"] = {
                "objects": round((after.total() - before.total()) / streams, 1),
                "by_type": _grown(before, after, streams),
            }
            if arguments.warm_deals:
                ours.send(("play", arguments.warm_deals))
                _answer(ours, client)
            gc.collect()
            gc.disable()
            count = gc.get_count()[0]
            ours.send(("play", arguments.deals))
            calls, messages = _answer(ours, client)
            grown = gc.get_count()[0] - count
            gc.set_debug(gc.DEBUG_SAVEALL)  # keep what it finds, to say what it was
            garbage = gc.collect()
            gc.set_debug(0)
            found = _types(gc.garbage)
            gc.garbage.clear()
            report["per_call"] = {
                "calls": calls,
                "messages": messages,
                "young_growth": round(grown / calls, 1),
                "cyclic_garbage": round(garbage / calls, 1),
                "cyclic_garbage_by_type": {
                    name: round(count / calls, 2) for name, count in found.most_common(TOP_TYPES)
                },
            }
            playing = _tracked()
            report["per_table_playing"] = {
                "objects": round(playing.total() / arguments.tables, 1),
                "by_type": {
                    name: round(count / arguments.tables, 2)
                    for name, count in playing.most_common(TOP_TYPES)
                },
            }
            gc.enable()
            walks = _Walks()
            gc.callbacks.append(walks.collecting)
            ours.send(("play", arguments.deals))
            calls, messages = _answer(ours, client)
            gc.callbacks.remove(walks.collecting)
            report["collected"] = walks.report(calls) | {"messages": messages}
            gc.collect()
            gc.disable()
            ours.send(("message",))
            assert _answer(ours, client) == "message"
            young = gc.get_objects(0)
            report["per_message"] = {
                "young_per_stream": round(len(young) / streams, 1),
                "by_type": {
                    name: round(count / streams, 2)
                    for name, count in _types(young).most_common(TOP_TYPES)
                },
            }
            del young
            gc.enable()
            ours.send("go")
            assert _answer(ours, client) == "done"
        finally:
            client.join(60)
            if client.is_alive():
                client.kill()
            running.stop()
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

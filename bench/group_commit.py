"""Group commit against one commit per append, at a server's concurrency: CPU per append.

Prints one JSON object. On a private cluster (fsync on, ``synchronous_commit`` on; or
``--database-url``), in a fresh migrated database dropped afterwards, ``--streams`` concurrent
writers each append one event at a time to a stream of their own through an ``EventStore`` with a
pool of ``--pool`` connections (the server's is 16 per worker), as the service's commands do: the
pooled connection is held through the append, so at most ``--pool`` appends are in flight and a
batch carries at most that many. Two stores on the same database take turns in ``--rounds``
alternating rounds of ``--seconds`` each:

- ``grouped``: ``group_commit=True`` (``sapsam.store.commit_group``: the appends in flight share
  one transaction and one WAL flush);
- ``grouped_statements``: the same, but the batch as one statement per append between ``BEGIN``
  and ``COMMIT`` (``batch_statement=False``: the group before ``sapsam.store.batch_statement``);
- ``individual``: ``group_commit=False`` (each append its own autocommit statement and commit).

Per side: appends/s, p50/p99 latency, the Python process's CPU per append (``time.process_time``),
the PostgreSQL backends' CPU per append (those serving the benchmark's database, from /proc), the
whole private cluster's (WAL writer and checkpointer included), commits per append and, for the
grouped side, statements per batch. The events are small (~100 bytes, like a game's) on streams
no projector follows: the statement is the append's own, without a game's read models.

Usage: ``python bench/group_commit.py [--streams 64] [--pool 16] [--seconds 3] [--rounds 3]
[--database-url URL]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from typing import Any

from _postgres import benchmark_database, postgres_spent, read_postgres
from _procs import stop_cleanly_on_sigterm

from sapsam.log.records import NewEvent
from sapsam.store.event_store import EventStore

SIDES = ("grouped", "grouped_statements", "individual")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


async def write(
    store: EventStore, stream: str, version: int, until: float, latencies: list[float]
) -> int:
    """Append to ``stream`` from ``version`` until ``until``; the version reached."""
    while time.monotonic() < until:
        data = {"deal": 1, "seat": version % 4, "commitment": f"{version:064x}"}
        began = time.monotonic()
        await store.append(
            stream, version, [NewEvent("ArrangementCommitted", data)], f"{stream}/{version}", "b"
        )
        latencies.append(time.monotonic() - began)
        version += 1
    return version


async def measure(
    database: Any, streams: int, pool: int, seconds: float, rounds: int
) -> dict[str, Any]:
    stores = {
        side: await EventStore.connect(
            database.url, max_size=pool, group_commit=side != "individual"
        )
        for side in SIDES
    }
    group = stores["grouped_statements"].commit_group
    assert group is not None
    group.batch_statement = False
    totals = {
        side: {
            "appends": 0,
            "python": 0.0,
            "backends": 0.0,
            "cluster": 0.0,
            "seconds": 0.0,
            "commits": 0,
            "latencies": [],
        }
        for side in SIDES
    }
    versions = {side: [0] * streams for side in SIDES}
    try:
        for round_number in range(rounds + 1):  # round 0 warms both sides up, not counted
            for side in SIDES:
                store = stores[side]
                group = store.commit_group
                batches_before = (group.batches, group.statements) if group else (0, 0)
                latencies: list[float] = []
                postgres_before = read_postgres(database)
                python_before, began = time.process_time(), time.monotonic()
                until = began + (0.5 if round_number == 0 else seconds)
                reached = await asyncio.gather(
                    *(
                        write(store, f"{side}-{index}", versions[side][index], until, latencies)
                        for index in range(streams)
                    )
                )
                elapsed = time.monotonic() - began
                python = time.process_time() - python_before
                spent = postgres_spent(postgres_before, read_postgres(database))
                appended = sum(reached) - sum(versions[side])
                versions[side] = list(reached)
                if round_number == 0:
                    continue
                total = totals[side]
                total["appends"] += appended
                total["python"] += python
                total["backends"] += spent["backends_cpu_seconds"]
                total["cluster"] += spent["cluster_cpu_seconds"] or 0.0
                total["seconds"] += elapsed
                total["commits"] += spent["commits"]
                total["latencies"].extend(latencies)
                if group is not None:
                    total.setdefault("batches", 0)
                    total.setdefault("batched", 0)
                    total["batches"] += group.batches - batches_before[0]
                    total["batched"] += group.statements - batches_before[1]
    finally:
        for store in stores.values():
            await store.close()
    result: dict[str, Any] = {}
    for side, total in totals.items():
        appends = total["appends"]
        latencies = total["latencies"]
        result[side] = {
            "appends": appends,
            "appends_per_second": round(appends / total["seconds"]),
            "latency_ms_p50": round(percentile(latencies, 0.5) * 1e3, 2),
            "latency_ms_p99": round(percentile(latencies, 0.99) * 1e3, 2),
            "python_cpu_us_per_append": round(total["python"] / appends * 1e6, 1),
            "postgres_backends_cpu_us_per_append": round(total["backends"] / appends * 1e6, 1),
            "postgres_cluster_cpu_us_per_append": (
                round(total["cluster"] / appends * 1e6, 1) if database.postmaster else None
            ),
            "commits_per_append": round(total["commits"] / appends, 3),
        }
        if "batches" in total:
            result[side]["statements_per_batch"] = round(total["batched"] / total["batches"], 2)
    compared = (
        "python_cpu_us_per_append",
        "postgres_backends_cpu_us_per_append",
        "postgres_cluster_cpu_us_per_append",
        "appends_per_second",
    )
    for name, (side, baseline) in {
        "grouped_over_individual": ("grouped", "individual"),
        "grouped_over_grouped_statements": ("grouped", "grouped_statements"),
    }.items():
        result[name] = {
            key: (
                round(result[side][key] / result[baseline][key], 3)
                if result[baseline][key]
                else None
            )
            for key in compared
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=64, help="concurrent writers")
    parser.add_argument("--pool", type=int, default=16, help="pooled connections per store")
    parser.add_argument("--seconds", type=float, default=3.0, help="per side per round")
    parser.add_argument("--rounds", type=int, default=3, help="alternations")
    parser.add_argument("--database-url", default=None)
    arguments = parser.parse_args()
    stop_cleanly_on_sigterm()
    load_before = os.getloadavg()[0]
    with benchmark_database(arguments.database_url, "group_commit") as database:
        results = asyncio.run(
            measure(
                database, arguments.streams, arguments.pool, arguments.seconds, arguments.rounds
            )
        )
        label = database.label
    report = {
        "benchmark": "group_commit",
        "database": label,
        "cpus": os.cpu_count(),
        "streams": arguments.streams,
        "pool": arguments.pool,
        "seconds_per_side_per_round": arguments.seconds,
        "rounds": arguments.rounds,
        "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
        "sides": results,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

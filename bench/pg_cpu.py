"""PostgreSQL's CPU per statement, by kind: what one write costs the backend before any read model.

Prints one JSON object. On a private cluster (fsync on; or ``--database-url``), in a fresh migrated
database dropped afterwards, ``--writers`` autocommit connections run each kind for ``--seconds``,
in ``--rounds`` alternating rounds; per kind: statements/s and the backends' user and system CPU
per statement (from ``/proc/<pid>/stat``, so other work on the machine does not count, though it
slows everything through shared caches); beside it, per statement, the whole cluster's CPU on a
private cluster (WAL writer included: with ``synchronous_commit = off`` it, not the backend, flushes
the commits) and this client process's (``time.process_time``: psycopg's side of each statement):

- ``select_1``: ``SELECT 1``, the floor of a round trip;
- ``insert_sync_off`` / ``insert_sync_on``: a one-row insert into a table with a primary key,
  without and with a synchronous commit (the difference is the commit's flush);
- ``append_sync_off`` / ``append_sync_on``: ``sapsam.store.appends.append`` of one event (the
  guard, the insert with its trigger and checks, the request-id row, the wake-up check), without
  and with a synchronous commit. A game's write adds its read models to that statement.

Usage: ``python bench/pg_cpu.py [--writers 1] [--seconds 3] [--rounds 2] [--database-url URL]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from _postgres import Database, benchmark_database, cluster_cpu
from _procs import cpu_delta

from sapsam.log.records import NewEvent
from sapsam.store.appends import append

TICKS = os.sysconf("SC_CLK_TCK")
Connection = psycopg.AsyncConnection[Any]


def backend_cpu(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of one backend so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS


def kinds() -> dict[str, tuple[str, Callable[[Connection, list[int]], Awaitable[None]]]]:
    """Each kind: its synchronous_commit and one statement of it on a connection."""

    async def select_1(connection: Connection, state: list[int]) -> None:
        await connection.execute("SELECT 1")

    async def insert(connection: Connection, state: list[int]) -> None:
        await connection.execute("INSERT INTO pg_cpu_rows (x) VALUES (%s)", [state[0]])
        state[0] += 1

    async def append_one(connection: Connection, state: list[int]) -> None:
        stream = f"pg-cpu-{id(state)}"
        data: dict[str, Any] = {"deal": 1, "seat": state[1] % 4, "commitment": f"{state[1]:064x}"}
        event = NewEvent("ArrangementCommitted", data)
        await append(connection, stream, state[1], [event], str(uuid.uuid4()), "bench")
        state[1] += 1

    return {
        "select_1": ("on", select_1),
        "insert_sync_off": ("off", insert),
        "insert_sync_on": ("on", insert),
        "append_sync_off": ("off", append_one),
        "append_sync_on": ("on", append_one),
    }


async def measure(database: Database, writers: int, seconds: float, rounds: int) -> dict[str, Any]:
    connections = [
        await psycopg.AsyncConnection.connect(database.url, autocommit=True) for _ in range(writers)
    ]
    await connections[0].execute(
        "CREATE TABLE pg_cpu_rows (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, x int)"
    )
    pids = []
    for connection in connections:
        row = await (await connection.execute("SELECT pg_backend_pid()")).fetchone()
        assert row is not None
        pids.append(int(row[0]))
    states = [[0, 0] for _ in connections]  # (rows inserted, stream version) per connection
    totals: dict[str, list[float]] = {}
    for _round in range(rounds):
        for name, (synchronous, statement) in kinds().items():
            for connection in connections:
                await connection.execute(f"SET synchronous_commit = {synchronous}")
            for connection, state in zip(connections, states, strict=True):
                for _ in range(20):  # warm: prepared statements, caches
                    await statement(connection, state)
            before = [backend_cpu(pid) for pid in pids]
            cluster_before, client_before = cluster_cpu(database), time.process_time()
            until = time.monotonic() + seconds
            count = [0]

            async def run(
                connection: Connection,
                state: list[int],
                statement: Callable[[Connection, list[int]], Awaitable[None]],
                until: float,
                count: list[int],
            ) -> None:
                while time.monotonic() < until:
                    await statement(connection, state)
                    count[0] += 1

            started = time.monotonic()
            await asyncio.gather(
                *(
                    run(c, s, statement, until, count)
                    for c, s in zip(connections, states, strict=True)
                )
            )
            elapsed = time.monotonic() - started
            after = [backend_cpu(pid) for pid in pids]
            client = time.process_time() - client_before
            cluster = cpu_delta(cluster_before, cluster_cpu(database))
            user = sum(a[0] - b[0] for a, b in zip(after, before, strict=True))
            system = sum(a[1] - b[1] for a, b in zip(after, before, strict=True))
            total = totals.setdefault(name, [0.0] * 6)
            for index, spent in enumerate((count[0], user, system, elapsed, cluster, client)):
                total[index] += spent
    for connection in connections:
        await connection.close()
    return {
        name: {
            "statements": int(count),
            "per_second": round(count / elapsed),
            "backend_user_us": round(1e6 * user / count, 1),
            "backend_system_us": round(1e6 * system / count, 1),
            "backend_cpu_us": round(1e6 * (user + system) / count, 1),
            "cluster_cpu_us": round(1e6 * cluster / count, 1) if database.postmaster else None,
            "client_cpu_us": round(1e6 * client / count, 1),
        }
        for name, (count, user, system, elapsed, cluster, client) in totals.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--database-url", default=None)
    arguments = parser.parse_args()
    load_before = os.getloadavg()[0]
    with benchmark_database(arguments.database_url, "pg_cpu") as database:
        results = asyncio.run(
            measure(database, arguments.writers, arguments.seconds, arguments.rounds)
        )
        label = database.label
    report = {
        "benchmark": "pg_cpu",
        "database": label,
        "writers": arguments.writers,
        "seconds_per_kind_per_round": arguments.seconds,
        "rounds": arguments.rounds,
        "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
        "kinds": results,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""What a NOTIFY inside the writing statement costs concurrent writers: commits per second.

PostgreSQL serialises the commits of transactions that NOTIFY (a global lock taken before the
commit and held through its disk flush), so writers that notify cannot share flushes. This runs
``--writers`` threads, each on its own autocommit connection, inserting one row per statement
into a scratch table, in alternating rounds: the plain insert (a CTE returning the row), then the
same statement with ``pg_notify`` in its SELECT (what sending the wake-up inside the append's own
statement would do). Prints one JSON object: per round and side, statements per second and CPU
per statement of the writers' backends and of this process (the load generator), measured from
when every writer is connected until the last one stops.

Usage: ``python bench/notify_lock.py [--writers 8] [--seconds 4] [--rounds 3]
[--database-url URL]``: in a fresh database dropped afterwards, on a private cluster (fsync on)
or on ``URL``'s server.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from typing import Any

import psycopg
from _postgres import benchmark_database
from _procs import cpu_by_pid, cpu_delta, per_unit, stop_cleanly_on_sigterm

PLAIN = (
    "WITH i AS (INSERT INTO notify_lock_bench (writer) VALUES (%s) RETURNING id) SELECT id FROM i"
)
NOTIFYING = (
    "WITH i AS (INSERT INTO notify_lock_bench (writer) VALUES (%s) RETURNING id)"
    " SELECT id, pg_notify('notify_lock_bench', id::text) FROM i"
)


def statements_per_second(url: str, statement: str, writers: int, seconds: float) -> dict[str, Any]:
    """``writers`` threads writing ``statement`` for ``seconds``: statements/s, and CPU µs per
    statement of this process (the load generator) and of the writers' backends.

    The connections are opened before the clock starts (their start-up is no statement's cost),
    and the rate divides by the time the writers actually wrote."""
    connections = [psycopg.connect(url, autocommit=True) for _ in range(writers)]
    backends = [pid for c in connections for (pid,) in c.execute("SELECT pg_backend_pid()")]
    counts = [0] * writers
    start = threading.Barrier(writers + 1)
    stop = 0.0

    def write(number: int) -> None:
        connection = connections[number]
        start.wait()
        while time.monotonic() < stop:
            connection.execute(statement, [number]).fetchall()
            counts[number] += 1

    threads = [threading.Thread(target=write, args=(number,)) for number in range(writers)]
    try:
        for thread in threads:
            thread.start()
        backends_before, client_before = cpu_by_pid(backends), time.process_time()
        began = time.monotonic()
        stop = began + seconds
        start.wait()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - began
        client = time.process_time() - client_before
        backends_cpu = cpu_delta(backends_before, cpu_by_pid(backends))
    finally:
        for connection in connections:
            connection.close()
    statements = sum(counts)
    return {
        "statements_per_second": round(statements / elapsed),
        "backend_cpu_us_per_statement": per_unit(backends_cpu, statements),
        "client_cpu_us_per_statement": per_unit(client, statements),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="PostgreSQL server (default: a private cluster)")
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    stop_cleanly_on_sigterm()
    with benchmark_database(arguments.database_url, "sapsam_bench_notify_lock") as database:
        url = database.url
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(
                "CREATE TABLE notify_lock_bench (id bigserial PRIMARY KEY, writer int NOT NULL)"
            )
            settings = {}
            for name in ("fsync", "synchronous_commit"):
                row = connection.execute(f"SHOW {name}").fetchone()
                settings[name] = None if row is None else str(row[0])
        rounds = [
            {
                side: statements_per_second(url, statement, arguments.writers, arguments.seconds)
                for side, statement in (("plain", PLAIN), ("notifying", NOTIFYING))
            }
            for _ in range(arguments.rounds)
        ]
    print(
        json.dumps(
            {
                "benchmark": "notify_lock",
                "database": database.label,
                "writers": arguments.writers,
                "settings": settings,
                "load_average_1m": os.getloadavg()[0],
                "rounds": rounds,
                "notifying_over_plain": [
                    round(
                        r["notifying"]["statements_per_second"]
                        / r["plain"]["statements_per_second"],
                        2,
                    )
                    for r in rounds
                    if r["plain"]["statements_per_second"]
                ],
            }
        )
    )


if __name__ == "__main__":
    main()

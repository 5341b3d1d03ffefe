"""What a NOTIFY inside the writing statement costs concurrent writers: commits per second.

PostgreSQL serialises the commits of transactions that NOTIFY (a global lock taken before the
commit and held through its disk flush), so writers that notify cannot share flushes. This runs
``--writers`` threads, each on its own autocommit connection, inserting one row per statement
into a scratch table, in alternating rounds: the plain insert (a CTE returning the row), then the
same statement with ``pg_notify`` in its SELECT (what sending the wake-up inside the append's own
statement would do). Prints one JSON object: statements per second per round and side.

Usage: ``python bench/notify_lock.py --database-url URL [--writers 8] [--seconds 4] [--rounds 3]``
(the table ``notify_lock_bench`` is created and dropped in that database).
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time

import psycopg

PLAIN = (
    "WITH i AS (INSERT INTO notify_lock_bench (writer) VALUES (%s) RETURNING id) SELECT id FROM i"
)
NOTIFYING = (
    "WITH i AS (INSERT INTO notify_lock_bench (writer) VALUES (%s) RETURNING id)"
    " SELECT id, pg_notify('notify_lock_bench', id::text) FROM i"
)


def statements_per_second(url: str, statement: str, writers: int, seconds: float) -> float:
    counts = [0] * writers
    stop = time.monotonic() + seconds

    def write(number: int) -> None:
        with psycopg.connect(url, autocommit=True) as connection:
            while time.monotonic() < stop:
                connection.execute(statement, [number]).fetchall()
                counts[number] += 1

    threads = [threading.Thread(target=write, args=(number,)) for number in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    url = arguments.database_url
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            "CREATE TABLE notify_lock_bench (id bigserial PRIMARY KEY, writer int NOT NULL)"
        )
        settings = {}
        for name in ("fsync", "synchronous_commit"):
            row = connection.execute(f"SHOW {name}").fetchone()
            settings[name] = None if row is None else str(row[0])
    rounds = []
    try:
        for _ in range(arguments.rounds):
            plain = statements_per_second(url, PLAIN, arguments.writers, arguments.seconds)
            notifying = statements_per_second(url, NOTIFYING, arguments.writers, arguments.seconds)
            rounds.append({"plain": round(plain), "notifying": round(notifying)})
    finally:
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute("DROP TABLE notify_lock_bench")
    print(
        json.dumps(
            {
                "benchmark": "notify_lock",
                "writers": arguments.writers,
                "settings": settings,
                "load_average_1m": os.getloadavg()[0],
                "rounds": rounds,
                "notifying_over_plain": [
                    round(r["notifying"] / r["plain"], 2) for r in rounds if r["plain"]
                ],
            }
        )
    )


if __name__ == "__main__":
    main()

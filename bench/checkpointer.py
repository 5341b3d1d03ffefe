"""The transparency log's checkpointer: its CPU per event, and the append path beside it.

Prints one JSON object. Runs on a private PostgreSQL cluster (fsync on; or ``--database-url``), in
a fresh migrated database dropped afterwards.

- ``turns``: ``sapsam.store.transparency.extend_log`` over events already in the log, in turns of
  ``--turn-sizes`` events (a turn every 2 s at 100, 1,000 and 5,000 events/s), alternating the
  sizes over ``--rounds``: CPU per event of the Python process (``time.process_time``) and of the
  PostgreSQL backends, and wall time per turn. The events are inserted by SQL (the tree reads only
  their positions and hashes).
- ``appends``: ``sapsam.store.appends.append``, one event per call on one connection, in
  alternating rounds with no checkpointer and with one running in a child process (a turn every
  0.2 s, ten times the server's rate): appends/s and the writer's Python CPU per append. The
  append path executes nothing of the tree; the figure shows what sharing the database costs it.

Usage: ``python bench/checkpointer.py [--rounds 3] [--turn-sizes 200,2000,10000]
[--append-seconds 2] [--database-url URL]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from typing import Any

import psycopg
from _postgres import benchmark_database, postgres_spent, read_postgres
from _procs import stop_cleanly_on_sigterm

from sapsam.app.transparency import checkpoint_signer
from sapsam.keys import ServerKeys
from sapsam.log.records import NewEvent
from sapsam.log.signed_note import NoteSigner
from sapsam.store.appends import append
from sapsam.store.transparency import TreeCache, extend_log

KEYS = ServerKeys(NoteSigner.from_seed("sapsam/bench", bytes(32)), (), "bench")
FILL = """
INSERT INTO events (stream_id, version, type, schema_version, data, metadata, hash)
SELECT 'fill-' || %(tag)s || '-' || (g / 14), g %% 14 + 1, 'Bench', 1, '{}', '{}',
       sha256(convert_to(%(tag)s || g::text, 'UTF8'))
FROM generate_series(0, %(count)s - 1) AS g
"""


def now() -> int:
    return int(time.time())


async def measure_turns(database: Any, sizes: list[int], rounds: int) -> dict[str, Any]:
    """Turns of each size, alternating; CPU and wall per event by size."""
    sign = checkpoint_signer(KEYS)
    totals = {size: {"events": 0, "python": 0.0, "backends": 0.0, "wall": 0.0} for size in sizes}
    cache = TreeCache()
    async with await psycopg.AsyncConnection.connect(database.url, autocommit=True) as connection:
        for round_number in range(rounds):
            for size in sizes:
                await connection.execute(FILL, {"tag": f"{round_number}-{size}", "count": size})
                pg_before, cpu_before, wall_before = (
                    read_postgres(database),
                    time.process_time(),
                    time.perf_counter(),
                )
                turn = await extend_log(connection, cache, sign, now, max_leaves=size)
                wall, cpu = time.perf_counter() - wall_before, time.process_time() - cpu_before
                spent = postgres_spent(pg_before, read_postgres(database))
                assert turn.added == size, (turn.added, size)
                entry = totals[size]
                entry["events"] += size
                entry["python"] += cpu
                entry["backends"] += spent["backends_cpu_seconds"]
                entry["wall"] += wall
    return {
        str(size): {
            "events": entry["events"],
            "python_cpu_us_per_event": round(entry["python"] / entry["events"] * 1e6, 2),
            "backend_cpu_us_per_event": round(entry["backends"] / entry["events"] * 1e6, 2),
            "wall_ms_per_turn": round(entry["wall"] / rounds * 1e3, 2),
        }
        for size, entry in totals.items()
    }


async def measure_appends(url: str, seconds: float, rounds: int) -> dict[str, Any]:
    """Appends alone, then with a checkpointer in a child process, alternating."""
    totals = {side: {"events": 0, "python": 0.0, "wall": 0.0} for side in ("alone", "beside")}
    stream, version = f"bench-{uuid.uuid4().hex[:8]}", 0
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        for _ in range(rounds):
            for side in ("alone", "beside"):
                child = (
                    subprocess.Popen([sys.executable, __file__, "--checkpointer-child", url])
                    if side == "beside"
                    else None
                )
                try:
                    cpu_before, wall_before, start = (
                        time.process_time(),
                        time.perf_counter(),
                        version,
                    )
                    until = time.monotonic() + seconds
                    while time.monotonic() < until:
                        event = NewEvent("Bench", {"n": version, "seat": version % 4})
                        await append(connection, stream, version, [event], f"{stream}-{version}")
                        version += 1
                    entry = totals[side]
                    entry["events"] += version - start
                    entry["python"] += time.process_time() - cpu_before
                    entry["wall"] += time.perf_counter() - wall_before
                finally:
                    if child is not None:
                        child.send_signal(signal.SIGTERM)
                        child.wait(10)
    result: dict[str, Any] = {
        side: {
            "appends": entry["events"],
            "appends_per_second": round(entry["events"] / entry["wall"], 1),
            "python_cpu_us_per_append": round(entry["python"] / entry["events"] * 1e6, 2),
        }
        for side, entry in totals.items()
    }
    result["ratio_cpu_beside_to_alone"] = round(
        result["beside"]["python_cpu_us_per_append"] / result["alone"]["python_cpu_us_per_append"],
        3,
    )
    return result


async def checkpointer_child(url: str) -> None:
    """A checkpointer turning every 0.2 s until SIGTERM."""
    sign, cache = checkpoint_signer(KEYS), TreeCache()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        while not stop.is_set():
            await extend_log(connection, cache, sign, now)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.2)


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternations")
    parser.add_argument("--turn-sizes", default="200,2000,10000", help="events per turn")
    parser.add_argument("--append-seconds", type=float, default=2.0, help="per side per round")
    parser.add_argument("--database-url", help="PostgreSQL server (default: a private cluster)")
    parser.add_argument("--checkpointer-child", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.checkpointer_child:
        asyncio.run(checkpointer_child(arguments.checkpointer_child))
        return
    stop_cleanly_on_sigterm()
    sizes = [int(size) for size in arguments.turn_sizes.split(",")]
    load_before = os.getloadavg()[0]
    with benchmark_database(arguments.database_url, "sapsam_bench_checkpointer") as database:
        turns = asyncio.run(measure_turns(database, sizes, arguments.rounds))
        appends = asyncio.run(
            measure_appends(database.url, arguments.append_seconds, arguments.rounds)
        )
    print(
        json.dumps(
            {
                "benchmark": "checkpointer",
                "database": database.label,
                "cpus": os.cpu_count(),
                "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
                "rounds": arguments.rounds,
                "turns": turns,
                "appends": appends,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

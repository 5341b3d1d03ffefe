"""The event store's append beside a like-for-like baseline: CPU per event on both sides.

Prints one JSON object. Runs on a private PostgreSQL cluster (fsync on; or ``--database-url``), in a
fresh migrated database dropped afterwards. One writer on one autocommit connection appends one
event per call, in alternating rounds (``--rounds``, ``--seconds`` per side per round; every
other round takes the sides in reverse order):

- ``append``: ``sapsam.store.appends.append`` (canonical bytes, hash chain, fingerprint, the
  request-id row, optimistic concurrency, the wake-up for watchers);
- ``baseline``: the least that does the same writes: one statement that inserts the event with
  its chained hash and the request-id row (a CTE) into look-alike tables (``LIKE events`` and
  ``LIKE processed_requests``, so same columns, keys and indexes, no triggers), with the hash and a
  fingerprint computed in Python from ``json.dumps`` bytes (the issue's baseline; its hash covers
  the data alone, and it reads nothing back);
- ``answering_baseline``: the same statement, but like for like with what an append must do and
  answer: the hash chained over the whole event (stream, version, type, schema version, data and
  metadata, as ``json.dumps`` with sorted keys), and the event's position and version returned
  and fetched (the append's caller is answered with them);
- ``libpq_baseline``: the baseline's statement and values, sent as the append sends its own
  statement since 2026-12-03 (prepared once, then libpq's prepared-statement calls:
  ``sapsam.store.prepared_statements``) instead of psycopg's ``execute``: the baseline on the
  append's driver path, so that what the driver saves both sides is not counted as the
  append's own.

For each side: events/s, and CPU per event of the Python process (``time.process_time``: the writer
and any helper thread, such as the store's notifier) and of PostgreSQL (the backends serving the
benchmark's database, from pg_stat_activity and /proc; on the private cluster also every cluster
process, WAL writer included). Target (issue #14): append CPU per event (Python + PostgreSQL
backends) at most 1.3 times the baseline's; the ratios to the answering baseline and to the
baseline on the append's driver path (``libpq_baseline``) are reported too.

``replay``: events read from the log in global order and folded into table state per second, with
``replay_evolve`` as the fold (``--replay-events``, 0 to skip); and ``follower_read``, the results
process's read of that log in its pages of 500, every event decoded (``read_all``) against only
the ``DealScored`` ones (``read_all_of_types``), alternating: this process's CPU per event in the
log.

Usage: ``python bench/store.py [--seconds 2] [--rounds 5] [--synchronous-commit on|off]
[--replay-events 20000] [--database-url URL]``
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import psycopg
from _postgres import benchmark_database, postgres_spent, read_postgres
from _procs import stop_cleanly_on_sigterm

from sapsam.audit.sample_series import series_events
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import Event
from sapsam.domain.table import INITIAL_STATE, TableState, evolve
from sapsam.log.records import NewEvent, RecordedEvent
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.appends import append
from sapsam.store.offline_reads import iterate_all
from sapsam.store.prepared_statements import statement_rows
from sapsam.store.reads import read_all, read_all_of_types

DEAL_BATCH = 14
TARGET_RATIO = 1.3

LOOK_ALIKE_TABLES = """
CREATE TABLE baseline_events (LIKE events INCLUDING ALL);
CREATE TABLE baseline_requests (LIKE processed_requests INCLUDING ALL);
"""
BASELINE_STATEMENT = """
WITH inserted AS (
    INSERT INTO baseline_events (stream_id, version, type, schema_version, data, metadata, hash)
    VALUES (%(stream)s, %(version)s, %(type)s, 1, %(data)s::jsonb, %(metadata)s::jsonb, %(hash)s)
    RETURNING position, version
)
INSERT INTO baseline_requests (request_id, stream_id, fingerprint, first_version, last_version,
                               first_position, last_position)
SELECT %(request)s, %(stream)s, %(fingerprint)s, version, version, position, position
FROM inserted
"""
ANSWERING_STATEMENT = BASELINE_STATEMENT.rstrip() + "\nRETURNING last_position, last_version\n"
SIDES = ("baseline", "libpq_baseline", "answering_baseline", "append")


def sample_data(sequence: int) -> dict[str, Any]:
    """An event about the size of the game's: a seat, a hash, a few fields."""
    return {"deal": 1, "seat": sequence % 4, "commitment": f"{sequence:064x}", "round": sequence}


# --- the fold used by the replay figure --------------------------------------------------------


def replay_initial_state() -> dict[str, TableState]:
    """The state the replay starts from: no tables yet."""
    return {}


def replay_evolve(state: dict[str, TableState], event: RecordedEvent) -> dict[str, TableState]:
    """Fold one recorded event into its table's state: decode, then the domain's ``evolve``."""
    decoded = DEFAULT_CODEC.decode(event.type, event.schema_version, event.data)
    state[event.stream_id] = evolve(state.get(event.stream_id, INITIAL_STATE), decoded)
    return state


# --- measuring ---------------------------------------------------------------------------------


async def run_append(
    connection: psycopg.AsyncConnection[Any], stream: str, start: int, seconds: float
) -> int:
    """``append`` one event at a time to ``stream`` from version ``start`` for ``seconds``."""
    version, until = start, time.monotonic() + seconds
    while time.monotonic() < until:
        event = NewEvent("ArrangementCommitted", sample_data(version))
        await append(connection, stream, version, [event], f"{stream}-{version}", actor="seat-0")
        version += 1
    return version - start


async def run_baseline(
    connection: psycopg.AsyncConnection[Any],
    stream: str,
    start: int,
    seconds: float,
    head: bytes,
    libpq: bool = False,
) -> tuple[int, bytes]:
    """The baseline statement one event at a time (``libpq``: through libpq's prepared calls, as
    the append sends its own); events written and the chain's head."""
    version, until = start, time.monotonic() + seconds
    while time.monotonic() < until:
        data = json.dumps(sample_data(version), sort_keys=True, separators=(",", ":")).encode()
        request = f"{stream}-{version}"
        recorded_at = datetime.now(UTC).isoformat(timespec="microseconds")
        metadata = json.dumps(
            {"actor": "seat-0", "recorded_at": recorded_at, "request_id": request}
        )
        head = hashlib.sha256(head + data).digest()
        parameters = {
            "stream": stream,
            "version": version + 1,
            "type": "ArrangementCommitted",
            "data": data.decode(),
            "metadata": metadata,
            "hash": head,
            "request": request,
            "fingerprint": hashlib.sha256(data).digest(),
        }
        if libpq:
            await statement_rows(connection, BASELINE_STATEMENT, parameters)
        else:
            await connection.execute(BASELINE_STATEMENT, parameters)
        version += 1
    return version - start, head


async def run_answering_baseline(
    connection: psycopg.AsyncConnection[Any], stream: str, start: int, seconds: float, head: bytes
) -> tuple[int, bytes]:
    """``ANSWERING_STATEMENT`` one event at a time, the hash over the whole event; events
    written and the chain's head."""
    version, until = start, time.monotonic() + seconds
    while time.monotonic() < until:
        data = sample_data(version)
        request = f"{stream}-{version}"
        recorded_at = datetime.now(UTC).isoformat(timespec="microseconds")
        metadata = {"actor": "seat-0", "recorded_at": recorded_at, "request_id": request}
        record = {
            "data": data,
            "metadata": metadata,
            "schema_version": 1,
            "stream": stream,
            "type": "ArrangementCommitted",
            "version": version + 1,
        }
        head = hashlib.sha256(
            head + json.dumps(record, sort_keys=True, separators=(",", ":")).encode()
        ).digest()
        data_json = json.dumps(data, sort_keys=True, separators=(",", ":"))
        cursor = await connection.execute(
            ANSWERING_STATEMENT,
            {
                "stream": stream,
                "version": version + 1,
                "type": "ArrangementCommitted",
                "data": data_json,
                "metadata": json.dumps(metadata),
                "hash": head,
                "request": request,
                "fingerprint": hashlib.sha256(data_json.encode()).digest(),
            },
        )
        answered = await cursor.fetchall()
        assert answered[0][1] == version + 1
        version += 1
    return version - start, head


def measure_appends(database: Any, url: str, seconds: float, rounds: int) -> dict[str, Any]:
    """Alternate the sides; CPU per event and events/s of each over all rounds (both on
    psycopg's asynchronous connection, as the server appends)."""
    return asyncio.run(_measure_appends(database, url, seconds, rounds))


async def _measure_appends(database: Any, url: str, seconds: float, rounds: int) -> dict[str, Any]:
    totals = {
        side: {"events": 0, "python": 0.0, "backends": 0.0, "cluster": 0.0, "seconds": 0.0}
        for side in SIDES
    }
    stream = f"bench-{uuid.uuid4().hex[:8]}"
    answering_stream = f"{stream}-answering"
    libpq_stream = f"{stream}-libpq"
    versions = dict.fromkeys(SIDES, 0)
    head = answering_head = libpq_head = bytes(32)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        # Warm-up, not counted: caches, prepared statements, the store's notifier task.
        versions["append"] = await run_append(connection, stream, 0, 0.3)
        versions["baseline"], head = await run_baseline(connection, stream, 0, 0.3, head)
        versions["answering_baseline"], answering_head = await run_answering_baseline(
            connection, answering_stream, 0, 0.3, answering_head
        )
        versions["libpq_baseline"], libpq_head = await run_baseline(
            connection, libpq_stream, 0, 0.3, libpq_head, libpq=True
        )
        for round_number in range(rounds):
            # Every other round in reverse, so no side always follows the same one (or goes last).
            for side in SIDES if round_number % 2 == 0 else SIDES[::-1]:
                postgres_before = read_postgres(database)
                python_before, began = time.process_time(), time.monotonic()
                if side == "append":
                    written = await run_append(connection, stream, versions[side], seconds)
                elif side == "answering_baseline":
                    written, answering_head = await run_answering_baseline(
                        connection, answering_stream, versions[side], seconds, answering_head
                    )
                elif side == "libpq_baseline":
                    written, libpq_head = await run_baseline(
                        connection, libpq_stream, versions[side], seconds, libpq_head, libpq=True
                    )
                else:
                    written, head = await run_baseline(
                        connection, stream, versions[side], seconds, head
                    )
                elapsed = time.monotonic() - began
                python = time.process_time() - python_before
                await asyncio.sleep(0.05)  # the notifier's last wake-up belongs to this round
                spent = postgres_spent(postgres_before, read_postgres(database))
                versions[side] += written
                total = totals[side]
                total["events"] += written
                total["python"] += python
                total["backends"] += spent["backends_cpu_seconds"]
                total["cluster"] += spent["cluster_cpu_seconds"] or 0.0
                total["seconds"] += elapsed
    result: dict[str, Any] = {}
    for side, total in totals.items():
        events = int(total["events"])
        result[side] = {
            "events": events,
            "events_per_second": round(events / total["seconds"]),
            "python_cpu_us_per_event": round(total["python"] / events * 1e6, 1),
            "postgres_cpu_us_per_event": round(total["backends"] / events * 1e6, 1),
            "postgres_cluster_cpu_us_per_event": (
                round(total["cluster"] / events * 1e6, 1) if database.postmaster else None
            ),
        }
        result[side]["cpu_us_per_event"] = round(
            result[side]["python_cpu_us_per_event"] + result[side]["postgres_cpu_us_per_event"], 1
        )
    real = result["append"]
    keys = ("cpu_us_per_event", "python_cpu_us_per_event", "postgres_cpu_us_per_event")
    for name, base in (
        ("ratios", result["baseline"]),
        ("ratios_to_answering_baseline", result["answering_baseline"]),
        ("ratios_to_libpq_baseline", result["libpq_baseline"]),
    ):
        result[name] = {key: round(real[key] / base[key], 3) if base[key] else None for key in keys}
    return result


def _encoded(event: Event) -> tuple[str, dict[str, Any], int]:
    type_name, schema_version, data = DEFAULT_CODEC.encode(event)
    return type_name, data, schema_version


def measure_replay(url: str, events: int) -> dict[str, Any]:
    """Real game streams appended, then read in global order and folded: events per second."""
    # Real game streams: 4-seat tables playing whole series, decided by the pure domain.
    tables = max(1, events // 180)

    async def fill() -> None:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
            for number in range(tables):
                table_id = uuid.UUID(int=number + 1)
                decided = series_events(table_id, 4, DEFAULT_RULE_SET.series_length)
                for offset in range(0, len(decided), DEAL_BATCH):
                    batch = decided[offset : offset + DEAL_BATCH]
                    await append(
                        connection,
                        f"table-{table_id}",
                        offset,
                        [NewEvent(*_encoded(event)) for event in batch],
                        f"replay-{table_id}-{offset}",
                    )

    asyncio.run(fill())
    follower = asyncio.run(measure_follower_read(url))
    # A replay reads offline, on a synchronous connection.
    with psycopg.connect(url, autocommit=True) as connection:
        # One untimed pass first, so the timed pass reads from a warm cache.
        events_in_log = sum(1 for _ in iterate_all(connection))
        began = time.perf_counter()
        recorded = list(iterate_all(connection))
        read_seconds = time.perf_counter() - began
    # The game's events only: the append figures' sample events share the log.
    game = [event for event in recorded if event.stream_id.startswith("table-")]
    began = time.perf_counter()
    state = replay_initial_state()
    for event in game:
        state = replay_evolve(state, event)
    fold_seconds = time.perf_counter() - began
    assert len(recorded) == events_in_log and len(state) == tables
    read_rate = len(recorded) / read_seconds
    fold_rate = len(game) / fold_seconds
    return {
        "events_read": len(recorded),
        "game_events_folded": len(game),
        "read_events_per_s": round(read_rate),
        "fold_events_per_s": round(fold_rate),
        # Reading and folding one event after the other, from the two measured rates.
        "read_and_fold_events_per_s": round(1 / (1 / read_rate + 1 / fold_rate)),
        "fold": "decode + sapsam.domain.table.evolve per table stream",
        "follower_read": follower,
    }


async def measure_follower_read(url: str, rounds: int = 3) -> dict[str, Any]:
    """The results process's read of the log, in its pages of 500: every event read and decoded
    (``read_all``) against only the ``DealScored`` ones (``read_all_of_types``), alternating;
    this process's CPU per event in the log."""
    spent = {"all_events": 0.0, "deal_scored_only": 0.0}
    events = 0
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        for round_number in range(rounds + 1):  # round 0 warms the cache, not counted
            for side in spent:
                position, read = 0, 0
                began = time.process_time()
                while True:
                    if side == "all_events":
                        page = await read_all(connection, position, 500)
                        read += len(page)
                        position = page[-1].position if page else position
                        if len(page) < 500:
                            break
                    else:
                        typed = await read_all_of_types(connection, position, 500, ["DealScored"])
                        read, position = read + len(typed.events), typed.last_position
                        if typed.caught_up:
                            break
                if round_number:
                    spent[side] += time.process_time() - began
                if side == "all_events":
                    events = read
    return {
        "events_in_log": events,
        **{
            f"{side}_cpu_us_per_event_in_log": round(seconds / rounds / events * 1e6, 2)
            for side, seconds in spent.items()
        },
    }


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per side per round")
    parser.add_argument("--rounds", type=int, default=5, help="alternations")
    parser.add_argument(
        "--synchronous-commit",
        choices=("on", "off"),
        default="on",
        help="off: commits do not wait for the disk (both sides), to see the software's own cost",
    )
    parser.add_argument("--replay-events", type=int, default=20_000, help="events to replay")
    parser.add_argument("--database-url", help="PostgreSQL server (default: a private cluster)")
    arguments = parser.parse_args()
    stop_cleanly_on_sigterm()
    load_before = os.getloadavg()[0]
    with benchmark_database(arguments.database_url, "sapsam_bench_store") as database:
        with psycopg.connect(database.url, autocommit=True) as connection:
            connection.execute(LOOK_ALIKE_TABLES)
        writer_url = psycopg.conninfo.make_conninfo(
            database.url, options=f"-c synchronous_commit={arguments.synchronous_commit}"
        )
        appends = measure_appends(database, writer_url, arguments.seconds, arguments.rounds)
        replay = (
            measure_replay(database.url, arguments.replay_events)
            if arguments.replay_events
            else None
        )
    ratio = appends["ratios"]["cpu_us_per_event"]
    answering_ratio = appends["ratios_to_answering_baseline"]["cpu_us_per_event"]
    libpq_ratio = appends["ratios_to_libpq_baseline"]["cpu_us_per_event"]
    print(
        json.dumps(
            {
                "benchmark": "store",
                "database": database.label,
                "cpus": os.cpu_count(),
                "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
                "seconds_per_side_per_round": arguments.seconds,
                "rounds": arguments.rounds,
                "synchronous_commit": arguments.synchronous_commit,
                "appends": appends,
                "replay": replay,
                "target": {
                    "append_cpu_per_event_over_baseline_at_most": TARGET_RATIO,
                    "ratio": ratio,
                    "met": ratio is not None and ratio <= TARGET_RATIO,
                    "ratio_to_answering_baseline": answering_ratio,
                    # The baseline on the append's own driver path: the like-for-like figure.
                    "ratio_to_libpq_baseline": libpq_ratio,
                    "met_against_libpq_baseline": (
                        libpq_ratio is not None and libpq_ratio <= TARGET_RATIO
                    ),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

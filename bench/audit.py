"""Audit throughput: deals verified per second offline and online, and ``verify --all`` wall time.

Prints one JSON object. Runs against ``DATABASE_URL`` (in a scratch database it creates and drops)
or, without it, a private embedded PostgreSQL in a temporary folder.

- ``generated``: the stored deals. Each table's whole series is decided by the pure domain
  (``decide``/``evolve``: fresh seeds, the cut, the deal record, solver arrangements committed,
  confirmed and revealed, the seed revealed, scoring) and appended in one ``EventStore.append``
  with the game's read models, so the log is exactly what the service writes, only faster to make
  than playing through ``TableService`` one request at a time.
- ``offline``: ``verify_export`` on export files held in memory as JSON lines (parse, hash chain,
  decode, every deal check), one process, one core. ``deal_exports``: one deal per file (the
  table's opening plus the deal); ``table_exports``: whole series, eight deals per file. The files
  come from the stored deals (``from_database``, ``--seats`` seats) and, for 2, 3 and 4 seats,
  from series made in memory with the chain computed by ``sapsam.log.chain`` (``by_seats``: no
  database involved at all). Each rate is the best of three passes over its files, per second of
  wall time (``*_per_s``, what the target is read on) and of the process's CPU time
  (``*_per_cpu_s``: one core's cost, free of time other processes took).
- ``online``: ``verify_deal_online`` (reads the table's stream, runs the same checks, checks the
  stored chain from the genesis) per second, one connection.
- ``verify_all``: wall time of ``audit_database`` (what ``sapsam audit verify --all`` runs) over
  every stored deal, split into the streams-and-deals pass and the projection rebuild/comparison.

Usage: ``python bench/audit.py [--deals 10000] [--seats 4] [--offline 800] [--online 200]``.
Targets: offline >= 2,000 deals/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from typing import Any

import psycopg
from _scratch import scratch_database

from sapsam.audit import Requester, select_deal, select_table, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.audit.sample_series import recorded_stream, series_events
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.log.records import NewEvent
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors

TARGET_OFFLINE_PER_S = 2_000


def generate(url: str, deals: int, seat_count: int, series_length: int = 8) -> dict[str, Any]:
    """Store ``deals`` finished deals in tables of ``series_length`` deals."""
    store = EventStore.unopened(url, projectors=projectors())
    store.prepare()
    loop = asyncio.new_event_loop()  # the store's pool lives on it
    loop.run_until_complete(store.open())
    started = time.perf_counter()
    tables: list[uuid.UUID] = []
    events = 0
    try:
        remaining = deals
        while remaining > 0:
            count = min(series_length, remaining)
            table_id = uuid.uuid4()
            recorded = series_events(table_id, seat_count, count)
            new = [
                NewEvent(type_name, data, schema_version)
                for type_name, schema_version, data in map(DEFAULT_CODEC.encode, recorded)
            ]
            loop.run_until_complete(
                store.append(f"table-{table_id}", 0, new, f"bench/{table_id}", "bench")
            )
            tables.append(table_id)
            events += len(new)
            remaining -= count
    finally:
        loop.run_until_complete(store.close())
        loop.close()
    seconds = time.perf_counter() - started
    return {
        "deals": deals,
        "tables": len(tables),
        "seat_count": seat_count,
        "events": events,
        "seconds": round(seconds, 1),
        "table_ids": tables,
    }


def measure_offline(url: str, tables: list[uuid.UUID], count: int) -> dict[str, Any]:
    """Deals verified per second from in-memory export files."""
    deal_files: list[list[str]] = []
    table_files: list[list[str]] = []
    with psycopg.connect(url, autocommit=True) as connection:
        for table_id in tables:
            if len(deal_files) >= count:
                break
            events = audit_database.export_table(connection, table_id, Requester.operator())
            table_files.append(list(write_lines(events)))
            for number in events.header.finished_deals:
                export = audit_database.export_deal(
                    connection, table_id, number, Requester.operator()
                )
                deal_files.append(list(write_lines(export)))
    results: dict[str, Any] = {}
    for label, files in (("deal_exports", deal_files[:count]), ("table_exports", table_files)):
        deals = 0
        for lines in files:
            report = verify_export(lines)
            assert report.ok, report.failed_names()
            deals += report.deals_verified
        # Every file verified once above (each must pass); the rate is the best of three more
        # passes, as for ``by_seats``.
        results[label] = {
            "files": len(files),
            "deals": deals,
            "events_per_file": round(sum(len(f) - 1 for f in files) / max(len(files), 1), 1),
        }
        results[label]["deals_per_s"], results[label]["deals_per_cpu_s"] = _rates(files, deals)
    return results


def _rates(files: list[list[str]], deals: int, repeats: int = 3) -> tuple[int, int]:
    """Deals verified per second over ``files`` (holding ``deals`` deals), best of ``repeats``:
    per second of wall time (the figure the target is read on), and per second of this process's
    CPU time (what one core spends, without the time other processes took from it)."""
    best_wall = best_cpu = 0.0
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        for lines in files:
            assert verify_export(lines).ok
        best_wall = max(best_wall, deals / (time.perf_counter() - started))
        best_cpu = max(best_cpu, deals / (time.process_time() - started_cpu))
    return round(best_wall), round(best_cpu)


def measure_offline_by_seats(tables: int = 25) -> dict[str, Any]:
    """Offline rates for 2, 3 and 4 seats on exports made in memory."""
    results: dict[str, Any] = {}
    for seat_count in (2, 3, 4):
        streams = [recorded_stream(seat_count) for _ in range(tables)]
        operator = Requester.operator()
        deal_files = [
            list(write_lines(select_deal(stream, number, operator)))
            for stream in streams
            for number in range(1, 9)
        ]
        table_files = [list(write_lines(select_table(stream, operator))) for stream in streams]
        deal_wall, deal_cpu = _rates(deal_files, len(deal_files))
        table_wall, table_cpu = _rates(table_files, 8 * len(table_files))
        results[f"{seat_count}_seats"] = {
            "deal_exports_per_s": deal_wall,
            "table_exports_per_s": table_wall,
            "deal_exports_per_cpu_s": deal_cpu,
            "table_exports_per_cpu_s": table_cpu,
            "deals": len(deal_files),
        }
    return results


def measure_online(url: str, tables: list[uuid.UUID], count: int) -> dict[str, Any]:
    """Deals verified per second against the database."""
    deals = 0
    with psycopg.connect(url, autocommit=True) as connection:
        started = time.perf_counter()
        for table_id in tables:
            if deals >= count:
                break
            for number in range(1, 9):
                report = audit_database.verify_deal_online(connection, table_id, number)
                assert report.ok, report.failed_names()
                deals += 1
        seconds = time.perf_counter() - started
    return {"deals": deals, "deals_per_s": round(deals / seconds)}


def measure_verify_all(url: str) -> dict[str, Any]:
    """Wall time of the whole-database audit, split at the end of the deals pass."""
    marks: list[float] = []
    with psycopg.connect(url, autocommit=True) as connection:
        started = time.perf_counter()
        report = audit_database.audit_database(
            connection, progress=lambda done, total: marks.append(time.perf_counter())
        )
        finished = time.perf_counter()
    assert report.ok, report.failed_names()
    deals_done = marks[-1] if marks else started
    return {
        "deals": report.deals_verified,
        "events": report.events_checked,
        "wall_s": round(finished - started, 1),
        "streams_and_deals_s": round(deals_done - started, 1),
        "projection_rebuild_and_compare_s": round(finished - deals_done, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=10_000, help="finished deals to store")
    parser.add_argument("--seats", type=int, default=4, help="seats per table (2-4)")
    parser.add_argument("--offline", type=int, default=800, help="deal exports to verify")
    parser.add_argument("--online", type=int, default=200, help="deals to verify online")
    arguments = parser.parse_args()
    with scratch_database("sapsam-bench-audit") as (url, server):
        generated = generate(url, arguments.deals, arguments.seats)
        tables = generated.pop("table_ids")
        offline = {
            "from_database": measure_offline(url, tables, arguments.offline),
            "by_seats": measure_offline_by_seats(),
        }
        online = measure_online(url, tables, arguments.online)
        verify_all = measure_verify_all(url)
    from_database = offline["from_database"]
    by_seats = offline["by_seats"]
    # The target is read on wall time; the CPU-time rates are printed beside it.
    wall_rates = {
        f"{seats} {kind}": value
        for seats, entry in by_seats.items()
        for kind, value in entry.items()
        if kind.endswith("_per_s")
    }
    print(
        json.dumps(
            {
                "benchmark": "audit",
                "server": server,
                "generated": generated,
                "offline": offline,
                "online": online,
                "verify_all": verify_all,
                "target": {
                    "offline_deals_per_s_min": TARGET_OFFLINE_PER_S,
                    "met_by_stored_deal_exports": from_database["deal_exports"]["deals_per_s"]
                    >= TARGET_OFFLINE_PER_S,
                    "met_by": sorted(
                        name for name, value in wall_rates.items() if value >= TARGET_OFFLINE_PER_S
                    ),
                    "not_met_by": sorted(
                        name for name, value in wall_rates.items() if value < TARGET_OFFLINE_PER_S
                    ),
                    "best_offline_per_s": max(wall_rates.values()),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

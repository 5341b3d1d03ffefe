"""Whole-database audit throughput: ``sapsam audit verify --all`` over a log with long-lived tables.

Prints one JSON object. Runs against ``DATABASE_URL`` (in a scratch database it creates and drops)
or, without it, a private embedded PostgreSQL in a temporary folder. Never part of ``make test``.

- ``generated``: ``--long-tables`` tables of ``--long-deals`` deals each (one series as long as
  that: the shape that made ``--all`` run for more than 600 s) and ``--short-tables`` tables of 8
  deals, 4 seats. Every deal is decided by the pure domain (``decide``/``evolve``: fresh seeds,
  the cut, the deal record, arrangements committed, confirmed and revealed, the seed revealed,
  scoring) and appended as one request through ``EventStore.append`` with every read model, so the
  log, ``processed_requests`` and the read models are what the service writes. The seats set
  their cards lowest three in front, highest five behind instead of asking the solver (which
  costs about 20 ms a deal); the domain still checks and scores every arrangement, fouls included.
- ``verify_all``: ``audit_database`` (what ``sapsam audit verify --all`` runs), whole: every
  chain and deal, the acknowledged requests, the deals in play and the comparison of every read
  model; ``deals_per_s`` is finished deals verified per second of wall time, ``cpu_s`` this
  process's CPU time (the database's and the workers' are not in it), ``load_average`` the
  machine's 1-minute load before and after (other processes share the cores). Measured as the
  command runs by default (``workers``: one process per CPU, at most 4), then in one process
  (``verify_all_one_process``).
- ``one_long_table``: ``verify_table_online`` (``--table``) of one long table, for comparison.

Usage: ``python bench/audit_all.py [--long-tables 6] [--long-deals 2000] [--short-tables 250]``.
Generating takes minutes: ``--keep NAME`` generates into database NAME on ``DATABASE_URL``'s
server and keeps it (then ``--generate-only`` stops there); ``--reuse NAME`` measures that
database again without generating (its figures are read back from the log); ``--measure``
chooses which measurements run. Target: >= 2,000 deals/s for ``verify_all`` on >= 250,000 events.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from _scratch import scratch_database
from psycopg import sql

from sapsam import fairness
from sapsam.audit import database as audit_database
from sapsam.domain.commands import (
    ChooseDealer,
    CommitArrangement,
    ConfirmArrangement,
    CreateTable,
    CutDeck,
    DealCards,
    RevealArrangement,
    RevealSeed,
    SeatPlayer,
    StartDeal,
)
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import Event
from sapsam.domain.table import INITIAL_STATE, TableState, decide, evolve
from sapsam.log.records import NewEvent
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.ruleset import RuleSet
from sapsam.store import schema
from sapsam.store.embedded import database_in
from sapsam.store.event_store import EventStore
from sapsam.store.projections import all_projectors

TARGET_DEALS_PER_S = 2_000
PLAYERS = ("ann", "bob", "cid", "dee")
NOW_MS = 1_800_000_000_000


def _rows_by_rank(hand: tuple[int, ...]) -> Arrangement:
    ordered = sorted(hand)  # card index order is rank order
    return Arrangement.of(ordered[:3], ordered[3:8], ordered[8:])


def table_batches(table_id: uuid.UUID, deals: int, seats: int = 4) -> Iterator[list[Event]]:
    """The table's opening, then one batch of events per deal, as the domain decides them."""
    rule_set = RuleSet(series_length=deals)
    state: TableState = INITIAL_STATE
    batch: list[Event] = []

    def run(command: object) -> None:
        nonlocal state
        for event in decide(state, command):
            state = evolve(state, event)
            batch.append(event)

    lot_seed = fairness.new_seed()
    lot = fairness.lot_commitment(table_id, lot_seed)
    run(CreateTable(table_id, rule_set, seats, lot, "operator"))
    for seat in range(seats):
        run(SeatPlayer(player_id=PLAYERS[seat], seat=seat))
    run(ChooseDealer(lot_seed=lot_seed))
    yield batch
    for number in range(1, deals + 1):
        batch = []
        seed = fairness.new_seed()
        run(StartDeal(seed_commitment=fairness.seed_commitment(table_id, number, seed)))
        deal = state.deal
        assert deal is not None
        position = 1 + (7 * number) % 51
        run(CutDeck(player_id=PLAYERS[fairness.cutter_for(deal.dealer, seats)], position=position))
        arguments = (seed, deal.contributions, table_id, number, position, deal.dealer, seats)
        run(DealCards(deal_record=fairness.deal_record(*arguments), now_ms=NOW_MS))
        hands = fairness.hands_for_deal(*arguments)
        chosen = []
        for seat, hand in enumerate(hands):
            arrangement, nonce = _rows_by_rank(hand), fairness.new_seed()[:16]
            chosen.append((arrangement, nonce))
            commitment = fairness.arrangement_commitment(table_id, number, seat, arrangement, nonce)
            run(CommitArrangement(player_id=PLAYERS[seat], commitment=commitment))
            run(ConfirmArrangement(player_id=PLAYERS[seat], now_ms=NOW_MS))
        for seat, (arrangement, nonce) in enumerate(chosen):
            run(RevealArrangement(PLAYERS[seat], arrangement, nonce, dealt=hands[seat]))
        run(RevealSeed(seed=seed))
        yield batch


def generate(url: str, long_tables: int, long_deals: int, short_tables: int) -> dict[str, Any]:
    """Store the tables, one append (one acknowledged request) per deal."""
    store = EventStore.unopened(url, projectors=all_projectors())
    store.prepare()
    loop = asyncio.new_event_loop()  # the store's pool lives on it
    loop.run_until_complete(store.open())
    started = time.perf_counter()
    events = deals = appends = 0
    long_ids: list[str] = []
    try:
        shapes = [long_deals] * long_tables + [8] * short_tables
        for index, table_deals in enumerate(shapes):
            table_id = uuid.uuid4()
            if table_deals == long_deals:
                long_ids.append(str(table_id))
            version = 0
            for batch in table_batches(table_id, table_deals):
                new = [NewEvent(*_encoded(event)) for event in batch]
                loop.run_until_complete(
                    store.append(
                        f"table-{table_id}", version, new, f"bench/{uuid.uuid4()}", "bench"
                    )
                )
                version += len(new)
                appends += 1
            events += version
            deals += table_deals
            if sys.stderr.isatty():
                print(f"\rgenerated {index + 1}/{len(shapes)} tables", end="", file=sys.stderr)
    finally:
        loop.run_until_complete(store.close())
        loop.close()
    if sys.stderr.isatty():
        print(file=sys.stderr)
    return {
        "tables": long_tables + short_tables,
        "long_tables": long_tables,
        "deals_per_long_table": long_deals,
        "short_tables": short_tables,
        "deals": deals,
        "events": events,
        "acknowledged_requests": appends,
        "seconds": round(time.perf_counter() - started, 1),
        "long_table_ids": long_ids,
    }


def generated_figures(url: str) -> dict[str, Any]:
    """What ``generate`` reported, read back from a kept database (``--reuse``)."""
    with psycopg.connect(url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT stream_id, count(*), count(*) FILTER (WHERE type = 'DealScored')"
            " FROM events GROUP BY stream_id"
        ).fetchall()
        requests = connection.execute("SELECT count(*) FROM processed_requests").fetchone()
    deals_by_table = {stream.removeprefix("table-"): deals for stream, _, deals in rows}
    longest = max(deals_by_table.values(), default=0)
    long_ids = [table for table, deals in deals_by_table.items() if deals == longest > 8]
    return {
        "tables": len(rows),
        "long_tables": len(long_ids),
        "deals_per_long_table": longest,
        "short_tables": len(rows) - len(long_ids),
        "deals": sum(deals_by_table.values()),
        "events": sum(count for _, count, _ in rows),
        "acknowledged_requests": requests[0] if requests else 0,
        "seconds": None,
        "long_table_ids": long_ids,
    }


@contextmanager
def kept_database(name: str, create: bool) -> Iterator[tuple[str, str]]:
    """Database ``name`` on ``DATABASE_URL``'s server, made and migrated when ``create``; kept."""
    server_url = os.environ.get("DATABASE_URL")
    if not server_url:
        raise SystemExit("--keep and --reuse need DATABASE_URL (a server that keeps the database)")
    if create:
        with psycopg.connect(server_url, autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        schema.upgrade(database_in(server_url, name))
    url = database_in(server_url, name)
    with psycopg.connect(url, autocommit=True) as connection:
        version = connection.execute("SHOW server_version").fetchone()
    yield url, f"DATABASE_URL (kept database {name}), PostgreSQL {version[0] if version else '?'}"


def _encoded(event: Event) -> tuple[str, dict[str, Any], int]:
    type_name, schema_version, data = DEFAULT_CODEC.encode(event)
    return type_name, dict(data), schema_version


def measure_verify_all(url: str, workers: int) -> dict[str, Any]:
    """``audit_database`` over everything in ``workers`` processes, with the CLI's progress bar
    on a terminal."""
    from sapsam.cli.progress_bar import ProgressBar

    load_before = os.getloadavg()[0]
    bar = ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    marks: list[float] = []

    def progress(done: int, total: int) -> None:
        marks.append(time.perf_counter())
        if bar is not None:
            bar.update(done, total)

    with psycopg.connect(url, autocommit=True) as connection:
        started, started_cpu = time.perf_counter(), time.process_time()
        report = audit_database.audit_database(connection, progress=progress, workers=workers)
        seconds, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    if bar is not None:
        bar.finish()
    assert report.holds, [check.label for check in report.checks if check.status != "passed"]
    deals_done = (marks[-1] if marks else started) - started
    return {
        "workers": workers,
        "deals": report.deals_verified,
        "events": report.events_checked,
        "wall_s": round(seconds, 1),
        "cpu_s": round(cpu, 1),
        "streams_and_deals_s": round(deals_done, 1),
        "requests_in_play_and_projections_s": round(seconds - deals_done, 1),
        "deals_per_s": round(report.deals_verified / seconds),
        "events_per_s": round(report.events_checked / seconds),
        "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "checks": {check.name: check.detail for check in report.checks if ":" not in check.name},
    }


def measure_one_table(url: str, table_id: str) -> dict[str, Any]:
    """``verify_table_online`` (``--table``) of one long table."""
    with psycopg.connect(url, autocommit=True) as connection:
        started = time.perf_counter()
        report = audit_database.verify_table_online(connection, uuid.UUID(table_id))
        seconds = time.perf_counter() - started
    assert report.ok
    return {"deals": report.deals_verified, "wall_s": round(seconds, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long-tables", type=int, default=6, help="tables of --long-deals deals")
    parser.add_argument("--long-deals", type=int, default=2000, help="deals per long table")
    parser.add_argument("--short-tables", type=int, default=250, help="tables of 8 deals")
    parser.add_argument("--keep", metavar="NAME", help="generate into database NAME, keep it")
    parser.add_argument("--reuse", metavar="NAME", help="measure kept database NAME again")
    parser.add_argument("--generate-only", action="store_true", help="with --keep: no measuring")
    parser.add_argument(
        "--measure",
        default="workers,one-process,one-table",
        help="comma-separated: workers, one-process, one-table (default: all three)",
    )
    arguments = parser.parse_args()
    measures = set(arguments.measure.split(","))
    if arguments.reuse:
        database = kept_database(arguments.reuse, create=False)
    elif arguments.keep:
        database = kept_database(arguments.keep, create=True)
    else:
        database = scratch_database("sapsam-bench-audit-all")
    verify_all = one_process = one_table = None
    with database as (url, server):
        if arguments.reuse:
            generated = generated_figures(url)
        else:
            generated = generate(
                url, arguments.long_tables, arguments.long_deals, arguments.short_tables
            )
        long_ids = generated.pop("long_table_ids")
        if arguments.generate_only:
            print(json.dumps({"benchmark": "audit_all", "generated": generated}, indent=2))
            return
        # What the command does by default (one process per CPU, at most 4), then one process.
        if "workers" in measures:
            verify_all = measure_verify_all(url, min(os.cpu_count() or 1, 4))
        if "one-process" in measures:
            one_process = measure_verify_all(url, 1)
        if "one-table" in measures and long_ids:
            one_table = measure_one_table(url, long_ids[0])
    headline = verify_all or one_process
    print(
        json.dumps(
            {
                "benchmark": "audit_all",
                "server": server,
                "cpu_count": os.cpu_count(),
                "generated": generated,
                "verify_all": verify_all,
                "verify_all_one_process": one_process,
                "one_long_table": one_table,
                "target": {
                    "deals_per_s_min": TARGET_DEALS_PER_S,
                    "events_min": 250_000,
                    "met": headline is not None
                    and headline["deals_per_s"] >= TARGET_DEALS_PER_S
                    and generated["events"] >= 250_000,
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

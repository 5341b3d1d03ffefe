"""Tournament results process: finished deals credited per second, and the tournament audit.

Prints one JSON object. Runs on a private embedded PostgreSQL in a temporary folder (or on
``DATABASE_URL``, in a scratch database it creates and drops).

A tournament of ``--players`` players at 4 per table plays one round of ``--deals`` deals through
the real ``TableService`` while the results process is stopped; then one ``ResultsProcess``
catches up (each credit: read, decide, append + checkpoint in one transaction), and
``verify_tournament`` checks the seating, every credited deal and the standings.

Usage: ``python bench/tournament.py [--players 16] [--deals 4]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

import psycopg
from _scratch import scratch_database

from sapsam.app.tables import TableService
from sapsam.app.tournament_results import ResultsProcess
from sapsam.app.tournaments import TournamentService, TournamentSettings
from sapsam.audit.sample_play import play_deal
from sapsam.audit.tournament_audit import verify_tournament
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.store.event_store import EventStore
from sapsam.store.projections import registered_projectors
from sapsam.store.table_projections import projectors as table_projectors


async def _run(url: str, players: int, deals: int) -> tuple[Any, Any, float, float, int, float]:
    """Create, fill, start and play the tournament, then credit it: the timed steps."""
    store = await EventStore.connect(
        url, projectors=[*table_projectors(), *registered_projectors()]
    )
    store.prepare()
    try:
        tables = TableService(store)
        tournaments = TournamentService(store, tables)
        settings = TournamentSettings(
            name="Bench cup",
            rule_set=DEFAULT_RULE_SET,
            seats_per_table=4,
            rounds=1,
            deals_per_round=deals,
            registration_opens_ms=0,
            registration_closes_ms=4_102_444_800_000,
            max_entrants=players,
        )
        tournament_id = (await tournaments.create(settings, "operator", "bench")).tournament_id
        for index in range(players):
            await tournaments.register(tournament_id, f"player-{index:04}", "register")
        started = time.perf_counter()
        await tournaments.start(tournament_id, "operator", "start")
        setup_seconds = time.perf_counter() - started
        state = await tournaments.load(tournament_id)
        started = time.perf_counter()
        for table in state.round_tables(1):
            for number in range(1, deals + 1):
                await play_deal(tables, table.table_id, number)
        play_seconds = time.perf_counter() - started
        process = ResultsProcess(tournaments)
        started = time.perf_counter()
        credited = await process.process_available()
        credit_seconds = time.perf_counter() - started
    finally:
        await store.close()
    return tournament_id, state, setup_seconds, play_seconds, credited, credit_seconds


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=16)
    parser.add_argument("--deals", type=int, default=4)
    arguments = parser.parse_args()
    with scratch_database("sapsam-bench-tournament") as (url, server):
        figures = asyncio.run(_run(url, arguments.players, arguments.deals))
        tournament_id, state, setup_seconds, play_seconds, credited, credit_seconds = figures
        with psycopg.connect(url) as connection:  # the audit reads offline
            started = time.perf_counter()
            report = verify_tournament(connection, tournament_id)
            audit_seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "server": server,
                "players": arguments.players,
                "tables": len(state.round_tables(1)),
                "deals": credited,
                "start_and_seat_seconds": round(setup_seconds, 3),
                "play_seconds_via_table_service": round(play_seconds, 2),
                "credit_seconds": round(credit_seconds, 3),
                "credits_per_second": round(credited / credit_seconds, 1),
                "audit_seconds": round(audit_seconds, 3),
                "audit_holds": report.holds,
                "audit_deals_per_second": round(report.deals_verified / audit_seconds, 1),
            }
        )
    )


if __name__ == "__main__":
    main()

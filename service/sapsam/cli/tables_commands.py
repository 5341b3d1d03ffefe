"""``sapsam tables stuck``: the tables the server's background work cannot move on.

Four kinds, each line naming the table and saying which kind it is:

- **failing**: the deadline sweeper or the tournament results process failed on the table, and
  keeps trying it with a back-off (``background_failures``): how often, since when, the error's
  type and the next try. The other tables are not held up by it.
- **overdue**: a table in play whose deadline passed more than ``--overdue-seconds`` ago (default
  60) and whose seats nobody timed out: no server is sweeping, or the sweeper fails on it.
- **waiting** (with ``--waiting-longer-than SECONDS``): a table not complete whose last event is
  older than that, whatever it waits for (a table without deadlines waiting for an absent
  player, a table nobody starts the next deal of), among the 1,000 longest waiting.
- **held**: an overdue or waiting table of a paused tournament. It is not stuck: no deal starts
  and no deadline runs out there until the operator resumes the tournament (``sapsam tournament
  resume``), so it is listed apart ("held: tournament paused") and never counted as stuck.

The server reports the overdue tables (not the held ones) as the health detail
``sapsam.tables.stuck`` and a logged count, and the waiting ones too when it was started with
``sapsam serve --waiting-longer-than SECONDS`` (docs/api.md, "Operator commands"). ``sapsam tables
time-out`` moves a table on.

Reads only (it never migrates). ``--json`` prints one JSON object instead of lines.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
from datetime import UTC, datetime
from typing import Any

import psycopg

from sapsam.cli.store_commands import add_database_options
from sapsam.cli.table_operator_commands import add_actions, awaited_names, describe
from sapsam.cli.wording import plural
from sapsam.log.records import DatabaseOpenError
from sapsam.store.embedded import async_database_connection
from sapsam.store.table_failures import (
    OverdueTable,
    TableFailure,
    failing_tables,
    overdue_tables,
)
from sapsam.store.table_queries import waiting_tables
from sapsam.store.tournament_queries import tables_of_paused_tournaments

FAILED = 1
DEFAULT_OVERDUE_SECONDS = 60


def register(subparsers: Any) -> None:
    """Add the ``tables`` subcommand."""
    tables = subparsers.add_parser(
        "tables", help="inspect the tables in play", description="Inspect the tables in play."
    )
    actions = tables.add_subparsers(dest="tables_action", metavar="ACTION", required=True)
    stuck = actions.add_parser(
        "stuck",
        help="tables the background work keeps failing on, or left past their deadline",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_database_options(stuck)
    stuck.add_argument(
        "--overdue-seconds",
        type=int,
        default=DEFAULT_OVERDUE_SECONDS,
        help=f"how long past its deadline a table counts as overdue (default "
        f"{DEFAULT_OVERDUE_SECONDS})",
    )
    stuck.add_argument(
        "--waiting-longer-than",
        type=int,
        metavar="SECONDS",
        help="also list the tables (not complete) whose last event is older than this, waiting"
        " for anything at all (default: not asked)",
    )
    stuck.add_argument("--json", action="store_true", help="print one JSON object")
    stuck.set_defaults(handler=_stuck)
    add_actions(actions)


def _time(milliseconds: int) -> str:
    return datetime.fromtimestamp(milliseconds / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _stuck(arguments: argparse.Namespace) -> int:
    """List the failing and the overdue tables."""
    if not 0 <= arguments.overdue_seconds <= 10**7:
        print("sapsam tables stuck: --overdue-seconds must be 0 to 10000000", file=sys.stderr)
        return 2
    now_ms = time.time_ns() // 1_000_000

    threshold = arguments.waiting_longer_than
    if threshold is not None and not 1 <= threshold <= 10**7:
        print("sapsam tables stuck: --waiting-longer-than must be 1 to 10000000", file=sys.stderr)
        return 2

    from sapsam.app.operator_queries import HELD_PAUSED, awaited_table, waiting_longer

    async def read() -> tuple[
        list[TableFailure], list[OverdueTable], list[Any], set[str], dict[str, str]
    ]:
        async with async_database_connection(
            arguments.database_url, arguments.data_dir, migrate=False
        ) as connection:
            failing = await failing_tables(connection)
            overdue = await overdue_tables(connection, now_ms - arguments.overdue_seconds * 1000)
            waiting: list[Any] = []
            if threshold is not None:
                rows = await waiting_tables(connection, None, 1000)
                tables = [awaited_table(row) for row in rows]
                waiting = waiting_longer(tables, now_ms, threshold * 1000)
            ids = {table.table_id for table in overdue} | {str(t.table_id) for t in waiting}
            try:
                paused = await tables_of_paused_tournaments(connection, sorted(ids))
            except psycopg.errors.UndefinedTable:
                paused = set()  # no server has kept tournaments here: nothing is held
            return failing, overdue, waiting, paused, await awaited_names(connection, waiting)

    try:
        failing, overdue, waiting, paused, names = asyncio.run(read())
    except DatabaseOpenError as error:
        print(error, file=sys.stderr)
        return FAILED
    except psycopg.errors.UndefinedTable:
        print(
            # background_failures comes with the migrations; table_state is a read model that a
            # server builds when it first starts (or `sapsam projections rebuild` builds).
            "sapsam tables stuck: this database has no table read model yet (start"
            " `sapsam serve` on it once, or run `sapsam projections rebuild`)",
            file=sys.stderr,
        )
        return FAILED
    # A paused tournament's tables wait on purpose: held, listed apart, never stuck.
    held_overdue = [table for table in overdue if table.table_id in paused]
    held_waiting = [table for table in waiting if str(table.table_id) in paused]
    overdue = [table for table in overdue if table.table_id not in paused]
    waiting = [table for table in waiting if str(table.table_id) not in paused]
    if arguments.json:
        print(
            json.dumps(
                {
                    "failing": [dataclasses.asdict(failure) for failure in failing],
                    "overdue": [dataclasses.asdict(table) for table in overdue],
                    "waiting": [
                        {**dataclasses.asdict(table), "table_id": str(table.table_id)}
                        for table in waiting
                    ],
                    "held": [
                        {**dataclasses.asdict(table), "kind": "overdue", "held": HELD_PAUSED}
                        for table in held_overdue
                    ]
                    + [
                        {
                            **dataclasses.asdict(table),
                            "table_id": str(table.table_id),
                            "kind": "waiting",
                            "held": HELD_PAUSED,
                        }
                        for table in held_waiting
                    ],
                },
                sort_keys=True,
            )
        )
        return 0
    if not failing and not overdue and not waiting:
        print("no stuck tables")
    for failure in failing:
        pending = (
            f", {plural(len(failure.pending_positions), 'event')} waiting"
            if failure.pending_positions
            else ""
        )
        print(
            f"failing  tables/{failure.table_id}  {failure.process}:"
            f" {plural(failure.failures, 'failure')}"
            f" since {_time(failure.first_failed_ms)} ({failure.last_error}{pending}),"
            f" next try {_time(failure.retry_at_ms)}"
        )
    for table in overdue:
        late = (now_ms - table.deadline_ms) // 1000
        print(
            f"overdue  tables/{table.table_id}  {table.phase}: deadline {_time(table.deadline_ms)}"
            f" passed {late} s ago"
        )
    for line in waiting:
        print(f"waiting  {describe(line, now_ms, names)}")
    for table in held_overdue:
        late = (now_ms - table.deadline_ms) // 1000
        print(
            f"held     tables/{table.table_id}  {table.phase}: deadline {_time(table.deadline_ms)}"
            f" passed {late} s ago (held: {HELD_PAUSED})"
        )
    for line in held_waiting:
        print(f"held     {describe(line, now_ms, names)} (held: {HELD_PAUSED})")
    return 0

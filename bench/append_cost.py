"""Where a game append's PostgreSQL CPU goes: the append's one statement with parts removed.

Prints one JSON object. On a private cluster (fsync on; or ``--database-url``), in a fresh migrated
database with the game's read models, ``--tables`` tables play whole deals (the domain's own
events, ``sapsam.audit.sample_series``) through ``sapsam.store.appends.append`` with the game's
projectors and the deal secrets' companions, as the service appends them: one append per command
(a command's follow-up events, such as ``RevealsOpened`` or ``DealScored``, join its batch), the
tables playing at once. Each append goes to the store's commit group
(``sapsam.store.commit_group``: the appends arriving together are sent as one statement,
``sapsam.store.batch_statement``), or, for the variants that rewrite it, as its own single
statement, the batch then being ``BEGIN; s1; ...; sN; COMMIT`` in one pipeline. With
``--tables 4`` the group carries ~3 appends per commit (``bench/service.py``: ~2.6). Each
variant's group keeps its connection for the whole run, as a busy server's does, so what psycopg
prepared stays prepared.

Variants alternate within each of ``--rounds`` rounds, each on fresh tables (set up outside the
measured window). Per variant: the backends' CPU per append (``/proc/<pid>/stat``, user + system,
so other work on the machine does not count, though it slows everything through shared caches)
and, on a private cluster, every cluster process's (WAL writer included: ``sync_off``'s flushes
are its, not the backend's),
and from ``pg_stat_statements`` (``track_planning`` on) planning and execution time per append;
and this process's CPU per append (``time.process_time``: the appends' own Python and the commit
group's, the same for every variant but the commit group's part).

- ``full``: the batch as the store sends it, one statement (psycopg prepares it after 5 uses,
  ``plan_cache_mode = auto``);
- ``statements``: each append's own statement, unchanged, one per append in the batch's pipeline
  (the commit group before ``sapsam.store.batch_statement``; what the rewriting variants below
  rewrite);
- ``unprepared``: never prepared (``prepare_threshold = None``): parsed and planned every time;
- ``generic_plan`` / ``custom_plan``: prepared, ``plan_cache_mode`` forced either way;
- ``auto_plans``: ``plan_cache_mode = auto``, PostgreSQL's default, which the commit group's
  connection had before it forced generic plans (``full`` has them forced, as the group does now);
- ``sync_off``: ``full`` with ``synchronous_commit = off`` (the difference: the commits' flushes);
- ``no_companions``: without the read models' and secrets' CTEs;
- ``no_table_state``: without the ``table_state`` update only;
- ``no_state_indexes``: ``full`` with ``table_state``'s two secondary indexes dropped for the
  window (so its updates can be HOT);
- ``no_phase_index``: the same with only ``table_state_phase`` dropped;
- ``no_processed``: without the ``processed_requests`` row;
- ``no_wanted``: without the wake-up listeners' ``EXISTS`` (``false`` instead);
- ``values_batch``: the events as a ``VALUES`` list of parameters, not ``jsonb_array_elements``;
- ``events_only``: the guard and the events insert, nothing else;
- ``no_insert_trigger``: ``full`` with the events' statement trigger (the shared advisory lock
  that readers' safe position relies on) disabled for the window;
- ``plpgsql_mark``: ``full`` with the events' insert mark taken as before migration 0013, by
  the trigger's PL/pgSQL function (``PERFORM pg_advisory_xact_lock_shared``), not its WHEN;
- ``all_parts``: ``full`` with the batch statement as before 8c6e5f0: every part the group's
  batches have carried so far, needed or not (one text per process);
- ``full_again``: ``full`` once more, last in each round: how far two identical variants differ
  (the noise, and what going first in a round costs).

Usage: ``python bench/append_cost.py [--rounds 6] [--tables 4] [--deals 2]
[--variants full,...] [--database-url URL]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
from _postgres import benchmark_database, cluster_cpu
from _procs import cpu_by_pid, cpu_delta

from sapsam.audit.sample_series import series_events
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.log.records import NewEvent
from sapsam.migrations.versions import v0013_insert_mark_in_when as mark_in_when
from sapsam.store import batch_statement, commit_group
from sapsam.store.append_statement import secret_companions
from sapsam.store.appends import append
from sapsam.store.batch_statement import BatchMember
from sapsam.store.commit_group import CommitGroup
from sapsam.store.table_projections import projectors

Connection = psycopg.AsyncConnection[Any]
# Events that follow the command that caused them in the same append.
FOLLOW_UPS = {"RevealsOpened", "DealScored", "SeriesCompleted"}
SETUP_TYPES = {"TableCreated", "PlayerSeated", "DealerChosen"}
# Done for a variant's window only (before, after), by the set-up connection. ``plpgsql_mark``
# is migration 0013's own downgrade (the mark taken by the PL/pgSQL function, as 0001 had it),
# then its upgrade again.
WINDOW_CHANGES = {
    "no_insert_trigger": (
        "ALTER TABLE events DISABLE TRIGGER events_mark_inserts",
        "ALTER TABLE events ENABLE TRIGGER events_mark_inserts",
    ),
    "plpgsql_mark": (
        ";".join(mark_in_when.DOWNGRADE_STATEMENTS),
        ";".join(mark_in_when.UPGRADE_STATEMENTS),
    ),
}
STATE_INDEXES = {
    "table_state_phase": "CREATE INDEX table_state_phase ON table_state (phase, table_id)",
    "table_state_deadline": (
        "CREATE INDEX table_state_deadline ON table_state (deadline_ms)"
        " WHERE deadline_ms IS NOT NULL"
    ),
}


def command_batches(deals: int) -> tuple[list[list[NewEvent]], list[list[NewEvent]]]:
    """(setup batches, deal batches) of one table's series, one batch per command."""
    batches: list[list[NewEvent]] = []
    for event in series_events(uuid.uuid4(), 4, deals):
        type_name, schema_version, data = DEFAULT_CODEC.encode(event)
        new = NewEvent(type_name, data, schema_version)
        if type_name in FOLLOW_UPS and batches:
            batches[-1].append(new)
        else:
            batches.append([new])
    setup = [batch for batch in batches if batch[0].type in SETUP_TYPES]
    return setup, batches[len(setup) :]


def _cte_span(statement: str, name: str) -> tuple[int, int] | None:
    """Where ``, <name> AS (...)`` is in ``statement`` (quotes respected), or None."""
    start = statement.find(f", {name} AS (")
    if start < 0:
        return None
    depth, index, quoted = 0, statement.index("(", start), False
    while True:
        char = statement[index]
        if char == "'":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
            if depth == 0:
                return start, index + 1
        index += 1


def _without(statement: str, test: Callable[[str], bool]) -> str:
    for name in re.findall(r", (\w+) AS \(", statement):
        span = _cte_span(statement, name)
        if span is not None and test(statement[span[0] : span[1]]):
            statement = statement[: span[0]] + statement[span[1] :]
    return statement


def no_companions(statement: str, parameters: dict[str, Any]) -> str:
    return _without(statement, lambda cte: cte.startswith(", companion_"))


def no_table_state(statement: str, parameters: dict[str, Any]) -> str:
    return _without(statement, lambda cte: "UPDATE table_state" in cte)


def no_processed(statement: str, parameters: dict[str, Any]) -> str:
    return _without(statement, lambda cte: cte.startswith(", processed AS"))


WANTED = re.compile(r"\(EXISTS \(\s*SELECT 1 FROM wakeup_listeners.*? AS wanted", re.S)


def no_wanted(statement: str, parameters: dict[str, Any]) -> str:
    replaced = WANTED.sub("false AS wanted", statement)
    assert replaced != statement
    return replaced


def events_only(statement: str, parameters: dict[str, Any]) -> str:
    return no_wanted(no_processed(no_companions(statement, parameters), parameters), parameters)


BATCH_SOURCE = "jsonb_array_elements(%(batch)s::jsonb) WITH ORDINALITY AS batch(e, n)"
BATCH_COLUMNS = "(e->>'v')::int, e->>'t', (e->>'s')::int, e->'d',"
BATCH_HASH = "decode(e->>'h', 'hex')"


def values_batch(statement: str, parameters: dict[str, Any]) -> str:
    events = json.loads(parameters["batch"])
    rows = []
    for index, event in enumerate(events):
        prefix = f"values{index}_"
        parameters.update(
            {
                prefix + "v": event["v"],
                prefix + "t": event["t"],
                prefix + "s": event["s"],
                prefix + "d": json.dumps(event["d"]),
                prefix + "h": bytes.fromhex(event["h"]),
            }
        )
        rows.append(
            f"(%({prefix}v)s::int, %({prefix}t)s::text, %({prefix}s)s::int, %({prefix}d)s::jsonb,"
            f" %({prefix}h)s::bytea, {index + 1})"
        )
    assert BATCH_SOURCE in statement
    return (
        statement.replace(BATCH_SOURCE, f"(VALUES {', '.join(rows)}) AS batch(v, t, s, d, h, n)")
        .replace(BATCH_COLUMNS, "v, t, s, d,")
        .replace(BATCH_HASH, "h")
    )


def unchanged(statement: str, parameters: dict[str, Any]) -> str:
    return statement


def one_each(statement: str, parameters: dict[str, Any]) -> str:
    """The statement unchanged, but sent on its own (not as a member of the batch statement)."""
    return statement


class AllParts:
    """``batch_statement`` as before 8c6e5f0, for ``all_parts``: the text has every part the
    batches have carried so far, needed or not."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, members: list[BatchMember]) -> tuple[str, dict[str, str]]:
        for member in members:
            self.seen.update(member.parts)
        _, values = batch_statement.batch_statement(members)
        return batch_statement._statement(tuple(sorted(self.seen.items()))), values


Rewrite = Callable[[str, dict[str, Any]], str]
# name: (rewrite, the group connection's settings, prepare_threshold, table_state's indexes dropped)
VARIANTS: dict[str, tuple[Rewrite, str, int | None, tuple[str, ...]]] = {
    "full": (unchanged, "", 5, ()),
    "statements": (one_each, "", 5, ()),
    "unprepared": (unchanged, "", None, ()),
    "generic_plan": (unchanged, "-c plan_cache_mode=force_generic_plan", 5, ()),
    "auto_plans": (unchanged, "-c plan_cache_mode=auto", 5, ()),
    "custom_plan": (unchanged, "-c plan_cache_mode=force_custom_plan", 5, ()),
    "sync_off": (unchanged, "-c synchronous_commit=off", 5, ()),
    "no_companions": (no_companions, "", 5, ()),
    "no_table_state": (no_table_state, "", 5, ()),
    "no_state_indexes": (unchanged, "", 5, ("table_state_phase", "table_state_deadline")),
    "no_phase_index": (unchanged, "", 5, ("table_state_phase",)),
    "no_processed": (no_processed, "", 5, ()),
    "no_wanted": (no_wanted, "", 5, ()),
    "values_batch": (values_batch, "", 5, ()),
    "events_only": (events_only, "", 5, ()),
    "no_insert_trigger": (unchanged, "", 5, ()),
    "plpgsql_mark": (unchanged, "", 5, ()),
    "all_parts": (unchanged, "", 5, ()),
    "full_again": (unchanged, "", 5, ()),
}


class RewritingGroup:
    """The store's own commit group, given each append's statement rewritten for the variant
    (a rewritten statement is sent as one statement per append, never in the batch statement)."""

    def __init__(self, group: CommitGroup) -> None:
        self.group = group
        self.rewrite: Rewrite = unchanged

    async def execute(
        self,
        statement: str,
        parameters: dict[str, Any],
        stream_id: str,
        batched: BatchMember | None = None,
    ) -> list[tuple[Any, ...]]:
        if self.rewrite is unchanged:
            return await self.group.execute(statement, parameters, stream_id, batched)
        parameters = dict(parameters)
        statement = self.rewrite(statement, parameters)
        return await self.group.execute(statement, parameters, stream_id)


class Tables:
    """Fresh tables for each window, set up before it starts."""

    def __init__(self, caller: Connection, deals: int) -> None:
        self.caller = caller
        self.setup, self.deal_batches = command_batches(deals)
        self.count = 0

    async def new(self, group: RewritingGroup) -> tuple[str, int]:
        self.count += 1
        stream = f"table-{uuid.uuid4()}"
        version = 0
        for batch in self.setup:
            await self._append(stream, version, batch, group)
            version += len(batch)
        return stream, version

    async def _append(
        self, stream: str, version: int, batch: list[NewEvent], group: RewritingGroup
    ) -> None:
        companions = []
        if batch[0].type == "DealStarted":
            companions = secret_companions(stream, [(1000 + version, os.urandom(32))], [])
        elif batch[0].type == "SeedRevealed":
            companions = secret_companions(stream, [], [1000 + version - 16])
        result = await append(
            self.caller,
            stream,
            version,
            batch,
            str(uuid.uuid4()),
            "bench",
            projectors=projectors(),
            companions=companions,
            commit_group=group,  # type: ignore[arg-type]
        )
        assert not result.replayed

    async def play(self, streams: list[tuple[str, int]], group: RewritingGroup) -> int:
        """Every deal of every table, the tables playing at once (the group batches the appends
        that arrive together); the appends made."""

        async def play_one(stream: str, version: int) -> int:
            for batch in self.deal_batches:
                await self._append(stream, version, batch, group)
                version += len(batch)
            return len(self.deal_batches)

        return sum(await asyncio.gather(*(play_one(*table) for table in streams)))


COUNTED = (
    *("appends", "cpu", "cluster", "python", "plan_ms", "exec_ms", "plans", "calls", "texts"),
    *("batches", "grouped", "failed"),
)
STATEMENT_TIMES = """
SELECT coalesce(sum(calls), 0), coalesce(sum(total_plan_time), 0),
    coalesce(sum(total_exec_time), 0), coalesce(sum(plans), 0), count(DISTINCT query)
FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
WHERE d.datname = %s AND s.query LIKE '%%INSERT INTO events%%'
"""


async def measure(database: Any, arguments: argparse.Namespace) -> dict[str, Any]:
    url = database.url
    names = arguments.variants.split(",")
    caller = await psycopg.AsyncConnection.connect(url, autocommit=True)
    admin = await psycopg.AsyncConnection.connect(database.server_url, autocommit=True)
    timed = database.statements_counted
    if timed:
        await admin.execute("ALTER SYSTEM SET pg_stat_statements.track_planning = on")
        await admin.execute("SELECT pg_reload_conf()")
    for projector in projectors():
        for statement in projector.create_statements:
            await caller.execute(statement)
    tables = Tables(caller, arguments.deals)
    totals: dict[str, dict[str, float]] = {name: dict.fromkeys(COUNTED, 0.0) for name in names}
    hot = {name: [0, 0] for name in names}
    # Each variant's appends go to a commit group of its own for the whole run, its connection
    # kept open between rounds (as a busy server's is), so what psycopg prepared stays prepared.
    commit_group.IDLE_SECONDS = 3600.0
    groups: dict[str, RewritingGroup] = {}
    all_parts, own_parts = AllParts(), commit_group.batch_statement_for
    for name in names:
        _, setting, threshold, _ = VARIANTS[name]
        options: dict[str, Any] = {"prepare_threshold": threshold}
        if setting:
            options["options"] = setting
        groups[name] = RewritingGroup(CommitGroup(url, options))
    for round_number in range(arguments.rounds + 1):  # round 0 warms up, not counted
        for name in names:
            rewrite, _, _, drop_indexes = VARIANTS[name]
            group = groups[name]
            group.rewrite = unchanged
            streams = [await tables.new(group) for _ in range(arguments.tables)]
            if drop_indexes:
                await caller.execute(f"DROP INDEX {', '.join(drop_indexes)}")
            if name in WINDOW_CHANGES:
                await caller.execute(WINDOW_CHANGES[name][0])
            commit_group.batch_statement_for = all_parts if name == "all_parts" else own_parts
            group.rewrite = rewrite
            pids = database.backend_pids()
            counted = (group.group.batches, group.group.statements, group.group.failed_batches)
            updates_before = await table_state_updates(caller)
            if timed:
                await admin.execute("SELECT pg_stat_statements_reset()")
            before, cluster_before = cpu_by_pid(pids), cluster_cpu(database)
            python_before = time.process_time()
            appends = await tables.play(streams, group)
            python_spent = time.process_time() - python_before
            after, cluster_after = cpu_by_pid(pids), cluster_cpu(database)
            times = None
            if timed:
                times = await (await admin.execute(STATEMENT_TIMES, [database.name])).fetchone()
            batches = group.group.batches - counted[0]
            grouped = group.group.statements - counted[1]
            failed = group.group.failed_batches - counted[2]
            # A backend flushes its table counts when idle, at most once a second unless told:
            # tell the group's, so this window's updates are counted in this window.
            running = group.group._running  # the group's own connection, looked at from outside
            if running is not None and running.connection is not None:
                await running.connection.execute("SELECT pg_stat_force_next_flush()")
                await running.connection.execute("SELECT 1")
            await asyncio.sleep(0.05)
            updates_after = await table_state_updates(caller)
            for index in drop_indexes:
                await caller.execute(STATE_INDEXES[index])
            if name in WINDOW_CHANGES:
                await caller.execute(WINDOW_CHANGES[name][1])
            if round_number == 0:
                continue
            total = totals[name]
            total["appends"] += appends
            total["cpu"] += sum(after[pid] - before[pid] for pid in after if pid in before)
            total["cluster"] += cpu_delta(cluster_before, cluster_after)
            total["python"] += python_spent
            total["batches"] += batches
            total["grouped"] += grouped
            total["failed"] += failed
            if times is not None:
                total["calls"] += float(times[0])
                total["plan_ms"] += float(times[1])
                total["exec_ms"] += float(times[2])
                total["plans"] += float(times[3])
                total["texts"] = max(total["texts"], float(times[4]))
            hot[name][0] += updates_after[0] - updates_before[0]
            hot[name][1] += updates_after[1] - updates_before[1]
    for group in groups.values():
        await group.group.close()
    await caller.close()
    await admin.close()
    full = totals["full"]["cpu"] / totals["full"]["appends"] if "full" in totals else None
    report: dict[str, Any] = {}
    for name, total in totals.items():
        per_append = 1e6 * total["cpu"] / total["appends"]
        updates, hot_updates = hot[name]
        report[name] = {
            "appends": int(total["appends"]),
            "backend_cpu_us": round(per_append, 1),
            "cluster_cpu_us": (
                round(1e6 * total["cluster"] / total["appends"], 1) if database.postmaster else None
            ),
            "less_than_full_us": None if full is None else round(1e6 * full - per_append, 1),
            "python_cpu_us": round(1e6 * total["python"] / total["appends"], 1),
            "plan_us": round(1e3 * total["plan_ms"] / total["appends"], 1),
            "exec_us": round(1e3 * total["exec_ms"] / total["appends"], 1),
            "statement_texts": int(total["texts"]),
            "appends_per_commit": round(total["grouped"] / max(total["batches"], 1), 2),
            "failed_batches": int(total["failed"]),
            "planned_share": round(total["plans"] / total["calls"], 2) if total["calls"] else None,
            "table_state_hot_share": round(hot_updates / updates, 2) if updates else None,
        }
    return report


async def table_state_updates(connection: Connection) -> tuple[int, int]:
    """(updates, HOT updates) of table_state so far."""
    await connection.execute("SELECT pg_stat_force_next_flush()")
    row = await (
        await connection.execute(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'table_state'"
        )
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--database-url", default=None)
    arguments = parser.parse_args()
    load_before = os.getloadavg()[0]
    started = time.strftime("%H:%M UTC", time.gmtime())
    with benchmark_database(arguments.database_url, "append_cost") as database:
        results = asyncio.run(measure(database, arguments))
        label = database.label
    print(
        json.dumps(
            {
                "benchmark": "append_cost",
                "database": label,
                "started": started,
                "arguments": vars(arguments),
                "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
                "variants": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

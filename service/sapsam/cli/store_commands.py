"""``sapsam migrate``, ``sapsam projections rebuild`` and ``sapsam requests prune``: the event
store's maintenance commands.

All use ``--database-url`` (else ``DATABASE_URL``) or, with neither, the embedded PostgreSQL in
``--data-dir`` (else ``SAPSAM_DATA_DIR``, else the user's data directory), which they start and
stop around their work. Each prints one JSON object describing what it did.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
from datetime import timedelta
from typing import Any

from sapsam.log.records import DatabaseOpenError
from sapsam.store.embedded import async_database_connection, database_connection, open_database
from sapsam.store.processed_requests import prune_processed_requests
from sapsam.store.projections import all_projectors, event_count, rebuild_projections

FAILED = 1
LATEST = "head"
"""alembic's name for the latest revision (``schema.HEAD``), spelled here so that parsing does not
import alembic: ``sapsam tables`` and ``sapsam players`` share this module's database options."""


def add_database_options(parser: argparse.ArgumentParser) -> None:
    """``--database-url`` and ``--data-dir``, as ``database_connection`` takes them: every
    command that opens the database offers the same two."""
    parser.add_argument(
        "--database-url", help="PostgreSQL to use (default: DATABASE_URL, else embedded)"
    )
    parser.add_argument(
        "--data-dir", help="embedded server's data folder (default: SAPSAM_DATA_DIR or user data)"
    )


def register(subparsers: Any) -> None:
    """Add the ``migrate``, ``projections`` and ``requests`` subcommands."""
    migrate = subparsers.add_parser(
        "migrate", help="apply the database migrations", description=_migrate.__doc__
    )
    add_database_options(migrate)
    migrate.add_argument("--revision", default=LATEST, help="target revision (default head)")
    migrate.add_argument(
        "--downgrade",
        metavar="REVISION",
        help="undo migrations down to REVISION instead ('base' empties the schema: tests only)",
    )
    migrate.add_argument(
        "--sql",
        action="store_true",
        help="print the SQL that migrates instead of running it (no database is contacted):"
        " from an empty database, or from --from-revision, to --revision",
    )
    migrate.add_argument(
        "--from-revision",
        metavar="REVISION",
        help="with --sql: the revision the database is at (default: none, an empty database)",
    )
    migrate.set_defaults(handler=_migrate)

    projections = subparsers.add_parser(
        "projections", help="maintain the read models", description="Maintain the read models."
    )
    actions = projections.add_subparsers(dest="projections_action", metavar="ACTION", required=True)
    rebuild = actions.add_parser(
        "rebuild", help="drop the read models and replay the log", description=_rebuild.__doc__
    )
    add_database_options(rebuild)
    rebuild.add_argument(
        "--module",
        action="append",
        default=[],
        help="also rebuild the projectors of this module (one exposing projectors()); repeatable"
        " (every read model of the service is rebuilt without it)",
    )
    rebuild.set_defaults(handler=_rebuild)

    requests = subparsers.add_parser(
        "requests",
        help="maintain the processed request ids",
        description="Maintain the processed request ids (idempotency records).",
    )
    request_actions = requests.add_subparsers(
        dest="requests_action", metavar="ACTION", required=True
    )
    prune = request_actions.add_parser(
        "prune", help="forget request ids older than a retry window", description=_prune.__doc__
    )
    add_database_options(prune)
    prune.add_argument(
        "--older-than-days",
        type=int,
        required=True,
        metavar="DAYS",
        help="forget the request ids processed more than DAYS days ago (at least 1)",
    )
    prune.set_defaults(handler=_prune)


def _migrate(arguments: argparse.Namespace) -> int:
    """Bring the database's schema up to date (the alembic migrations), or to --revision; with
    --downgrade, undo migrations down to that revision. Prints what it did as JSON, and each
    step as it starts on stderr.

    Several runs at once are safe: each holds an advisory lock while it migrates, so they take
    turns, and one that waited finds the schema current. With --sql, prints the migration's SQL
    (one transaction, the lock included) and contacts no database."""
    from sapsam.store import schema  # alembic: only the command that migrates loads it

    if arguments.from_revision and not arguments.sql:
        print("sapsam migrate: --from-revision goes with --sql", file=sys.stderr)
        return 2
    if arguments.sql:
        if arguments.downgrade:
            print("sapsam migrate: --sql prints upgrades only", file=sys.stderr)
            return 2
        schema.upgrade_sql(sys.stdout, arguments.revision, arguments.from_revision)
        return 0

    steps = logging.getLogger("alembic.runtime.migration")
    handler, level = _MigrationSteps(), steps.level
    steps.addHandler(handler)
    steps.setLevel(logging.INFO)
    try:
        with open_database(arguments.database_url, arguments.data_dir, migrate=False) as handle:
            before = schema.current_revision(handle.url)
            if arguments.downgrade:
                schema.downgrade(handle.url, arguments.downgrade)
            else:
                schema.upgrade(handle.url, arguments.revision)
            after = schema.current_revision(handle.url)
            backend = handle.backend
    except DatabaseOpenError as error:
        print(error, file=sys.stderr)
        return FAILED
    finally:
        steps.removeHandler(handler)
        steps.setLevel(level)
    print(json.dumps({"database": backend, "from": before, "to": after}))
    return 0


class _MigrationSteps(logging.Handler):
    """Says each migration step on stderr as it starts (a long migration's progress), from
    alembic's "Running upgrade 0001 -> 0002, <what it does>" records; the others not."""

    STEP = re.compile(r"Running (upgrade|downgrade) (\S*) -> (\S+), (.*)", re.DOTALL)

    def emit(self, record: logging.LogRecord) -> None:
        found = self.STEP.match(record.getMessage())
        if found is None:
            return
        direction, before, after, what = found.groups()
        what = " ".join(what.split()).rstrip(".")
        if direction == "upgrade":
            print(f"migrating to revision {after}: {what}", file=sys.stderr, flush=True)
        else:
            print(f"undoing revision {before}: {what}", file=sys.stderr, flush=True)


def _rebuild(arguments: argparse.Namespace) -> int:
    """Drop every read model (table_state, seat_scores, the tournaments' and any registered
    or --module one) and rebuild it by replaying the whole log.

    Each table keeps its owner and grants, whichever role runs it; a role that could not give a
    table back to its owner is refused with one line naming that owner, and nothing changes.
    Progress goes to stderr: a bar on a terminal, else a line every 10 seconds.
    """
    from sapsam.cli.progress import Progress

    try:
        with database_connection(arguments.database_url, arguments.data_dir) as connection:
            progress = Progress("rebuilding the read models", event_count(connection), "event")
            projectors = all_projectors(tuple(arguments.module))
            reports = rebuild_projections(connection, projectors, progress.update)
            progress.finish()
    except DatabaseOpenError as error:
        print(error, file=sys.stderr)
        return FAILED
    print(
        json.dumps(
            {
                "projections": [
                    {"name": r.name, "events": r.events_applied, "position": r.position}
                    for r in reports
                ]
            }
        )
    )
    return 0


def _prune(arguments: argparse.Namespace) -> int:
    """Forget the request ids processed more than --older-than-days days ago.

    A retry older than that window is then decided anew instead of answered from its record
    (and refused if its table has moved on). Run it as the schema owner.
    """
    if arguments.older_than_days < 1:
        print("sapsam requests prune: --older-than-days must be at least 1", file=sys.stderr)
        return 2

    async def prune() -> int:
        async with async_database_connection(
            arguments.database_url, arguments.data_dir
        ) as connection:
            return await prune_processed_requests(
                connection, timedelta(days=arguments.older_than_days)
            )

    try:
        deleted = asyncio.run(prune())
    except DatabaseOpenError as error:
        print(error, file=sys.stderr)
        return FAILED
    print(json.dumps({"deleted": deleted, "older_than_days": arguments.older_than_days}))
    return 0

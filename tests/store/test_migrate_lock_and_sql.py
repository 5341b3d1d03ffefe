"""`sapsam migrate` from several processes at once (they take turns on an advisory lock), and
`sapsam migrate --sql` (alembic's offline mode: the SQL that gives the schema the code expects)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import psycopg

from sapsam.store import schema
from sapsam.store.expected_schema import EXPECTED_SCHEMA, inspect_schema

MIGRATION_LOCK = 7526466447829417340  # migrations/env.py
MIGRATE = [sys.executable, "-m", "sapsam.cli", "migrate"]


def _waiting_for_the_lock(url: str) -> int:
    """Sessions waiting (not granted) for the migration lock."""
    high, low = divmod(MIGRATION_LOCK, 1 << 32)
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND classid = %s AND objid = %s AND objsubid = 1",
            [high, low],
        ).fetchone()
    return int(row[0]) if row else 0


def test_two_migrations_at_once_take_turns_on_a_fresh_database(empty_database_url: str) -> None:
    """Both runs wait while the lock is held elsewhere, then, released together, both succeed
    and the schema is what the code expects (without the lock they would migrate at once:
    both CREATE TABLE alembic_version, and one fails)."""
    with psycopg.connect(empty_database_url) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
        runs = [
            subprocess.Popen(
                [*MIGRATE, "--database-url", empty_database_url],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            deadline = time.monotonic() + 60
            while _waiting_for_the_lock(empty_database_url) < 2:
                assert all(run.poll() is None for run in runs), "a migration did not wait"
                assert time.monotonic() < deadline, "the migrations never asked for the lock"
                time.sleep(0.05)
            assert schema.current_revision(empty_database_url) is None
        except BaseException:
            for run in runs:
                run.kill()
            raise
        holder.rollback()  # releases the lock: both runs go, one after the other
    outcomes = [run.communicate(timeout=120) for run in runs]
    for run, (stdout, stderr) in zip(runs, outcomes, strict=True):
        assert run.returncode == 0, stderr
        assert json.loads(stdout)["to"] == schema.head_revision()
    # The first to get the lock ran every step; the other found the schema current.
    steps = sorted(stderr.count("migrating to revision") for _, stderr in outcomes)
    assert steps == [0, len(list((schema.MIGRATIONS_FOLDER / "versions").glob("v*.py")))]
    with psycopg.connect(empty_database_url) as connection:
        assert EXPECTED_SCHEMA.difference(inspect_schema(connection)) == []


def _migrate_sql(*options: str) -> str:
    # A database that does not exist: --sql must not contact any.
    done = subprocess.run(
        [*MIGRATE, "--sql", "--database-url", "postgresql://nobody@127.0.0.1:1/none", *options],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_migrate_sql_prints_the_schema_the_code_expects(empty_database_url: str) -> None:
    script = _migrate_sql()
    assert script.lstrip().startswith("BEGIN;")
    assert f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK});" in script
    assert "CREATE TABLE events (" in script
    assert "%%" not in script  # no driver escaping leaks into the text
    with psycopg.connect(empty_database_url, autocommit=True) as connection:
        connection.execute(script.encode())  # psql would run the same text
        assert EXPECTED_SCHEMA.difference(inspect_schema(connection)) == []
    assert schema.current_revision(empty_database_url) == schema.head_revision()


def test_migrate_sql_from_a_revision_prints_only_the_later_steps(
    empty_database_url: str,
) -> None:
    head = schema.head_revision()
    before = f"{int(head) - 1:04d}"
    schema.upgrade(empty_database_url, before)
    script = _migrate_sql("--from-revision", before)
    assert "CREATE TABLE events (" not in script
    assert f"-- Running upgrade {before} -> {head}" in script
    with psycopg.connect(empty_database_url, autocommit=True) as connection:
        connection.execute(script.encode())
        assert EXPECTED_SCHEMA.difference(inspect_schema(connection)) == []
    assert schema.current_revision(empty_database_url) == head


def test_migrate_sql_refuses_what_it_cannot_print() -> None:
    for options in (["--downgrade", "base"],):
        done = subprocess.run(
            [*MIGRATE, "--sql", *options], capture_output=True, text=True, check=False
        )
        assert done.returncode == 2
        assert "--sql prints upgrades only" in done.stderr
    done = subprocess.run(
        [*MIGRATE, "--from-revision", "0001", "--database-url", "postgresql://x@127.0.0.1:1/x"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "--from-revision goes with --sql" in done.stderr

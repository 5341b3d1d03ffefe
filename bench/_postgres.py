"""The benchmark's PostgreSQL: a private cluster with pg_stat_statements, or ``--database-url``'s
server, one fresh migrated database on it, and what PostgreSQL spent serving that database.

The private cluster (the default) is started here with the machine's ``initdb``/``pg_ctl``, fsync
on as always, ``pg_stat_statements`` preloaded, in a temporary folder deleted afterwards. On it
the benchmark can count the statements the server sends and add up every PostgreSQL process's CPU
(WAL writer and checkpointer included). On another server (``--database-url``) only the backends
serving the benchmark's database are counted, and statements only if that server preloads
``pg_stat_statements``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from _procs import cpu_by_pid, cpu_delta, process_tree
from psycopg import sql

from sapsam.store import schema
from sapsam.store.embedded import database_in, find_server_binaries

TRANSACTION_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")


def free_port() -> int:
    """A TCP port free on the loopback interface right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_postgres(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


@contextmanager
def private_cluster() -> Iterator[tuple[str, int]]:
    """A fresh PostgreSQL cluster on a free loopback port: (maintenance URL, postmaster pid)."""
    binaries = find_server_binaries()
    if binaries is None:
        raise SystemExit("no initdb/pg_ctl on this machine: pass --database-url")
    folder = Path(tempfile.mkdtemp(prefix="sapsam-bench-pg-"))
    folder.chmod(0o755)
    pgdata = folder / "data"
    pgdata.mkdir(mode=0o700)
    if os.geteuid() == 0:
        account = pwd.getpwnam("postgres")
        os.chown(pgdata, account.pw_uid, account.pw_gid)
    port = free_port()
    initdb = [str(binaries / "initdb"), "-D", str(pgdata), "-U", "postgres", "--auth=trust"]
    subprocess.run(_as_postgres([*initdb, "-E", "UTF8"]), check=True, capture_output=True)
    with (pgdata / "postgresql.conf").open("a") as conf:
        conf.write(
            f"port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n"
            "max_connections = 300\nshared_preload_libraries = 'pg_stat_statements'\n"
            "pg_stat_statements.max = 5000\n"
        )
    pg_ctl = [str(binaries / "pg_ctl"), "-D", str(pgdata), "-w"]
    log = str(pgdata / "server.log")
    subprocess.run(_as_postgres([*pg_ctl, "-l", log, "start"]), check=True, capture_output=True)
    try:
        postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres", postmaster
    finally:
        stop = _as_postgres([*pg_ctl, "-m", "fast", "stop"])
        subprocess.run(stop, check=False, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Database:
    """The benchmark's database and how to watch what PostgreSQL does for it."""

    url: str
    name: str
    server_url: str
    label: str
    postmaster: int | None  # set on a private cluster: all its processes are the benchmark's
    statements_counted: bool

    def admin(self) -> psycopg.Connection[Any]:
        """A connection to the maintenance database (not counted as serving the benchmark's)."""
        return psycopg.connect(self.server_url, autocommit=True)

    def backend_pids(self) -> list[int]:
        """The backends connected to the benchmark's database now."""
        with self.admin() as connection:
            rows = connection.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s", [self.name]
            ).fetchall()
        return [int(row[0]) for row in rows]


@contextmanager
def benchmark_database(
    database_url: str | None, prefix: str, *, synchronous_commit: str = "on"
) -> Iterator[Database]:
    """A fresh migrated database on a private cluster (or on ``database_url``'s server);
    ``synchronous_commit`` is set for it (every connection made to it afterwards)."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with _server(database_url) as (server_url, postmaster):
        with psycopg.connect(server_url, autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            version = connection.execute("SHOW server_version").fetchone()
            fsync = connection.execute("SHOW fsync").fetchone()
            preload = connection.execute("SHOW shared_preload_libraries").fetchone()
        url = database_in(server_url, name)
        try:
            schema.upgrade(url)
            with psycopg.connect(server_url, autocommit=True) as connection:
                connection.execute(
                    sql.SQL("ALTER DATABASE {} SET synchronous_commit = {}").format(
                        sql.Identifier(name), sql.Literal(synchronous_commit)
                    )
                )
            counted = preload is not None and "pg_stat_statements" in str(preload[0])
            if counted:
                with psycopg.connect(server_url, autocommit=True) as connection:
                    connection.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            where = "private cluster" if postmaster else "--database-url"
            label = f"{where}, PostgreSQL {version[0] if version else '?'}, "
            label += f"fsync {fsync[0] if fsync else '?'}"
            yield Database(url, name, server_url, label, postmaster, counted)
        finally:
            with psycopg.connect(server_url, autocommit=True) as connection:
                connection.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


@contextmanager
def _server(database_url: str | None) -> Iterator[tuple[str, int | None]]:
    if database_url:
        yield database_url, None
        return
    with private_cluster() as (url, postmaster):
        yield url, postmaster


@dataclass
class PostgresReading:
    """CPU of the database's backends (and of the whole private cluster), statement and
    transaction counters, at one moment."""

    backends: dict[int, float]
    cluster: dict[int, float]
    statements: dict[str, int]
    statement_ms: dict[str, float]
    commits: int


def cluster_cpu(database: Database) -> dict[int, float]:
    """CPU seconds of every process of a private cluster (WAL writer and checkpointer included;
    finished backends' time shows in the postmaster's reaped-children counters); nothing on
    ``--database-url``."""
    if database.postmaster is None:
        return {}
    return cpu_by_pid(process_tree(database.postmaster), reaped_children=True)


def read_postgres(database: Database) -> PostgresReading:
    """What PostgreSQL has spent and done for the benchmark's database so far."""
    backends, cluster = cpu_by_pid(database.backend_pids()), cluster_cpu(database)
    statements: dict[str, int] = {}
    statement_ms: dict[str, float] = {}
    with database.admin() as connection:
        if database.statements_counted:
            rows = connection.execute(
                "SELECT s.query, sum(s.calls), sum(s.total_exec_time + s.total_plan_time)"
                " FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid"
                " WHERE d.datname = %s GROUP BY s.query",
                [database.name],
            ).fetchall()
            statements = {str(query): int(calls) for query, calls, _ in rows}
            statement_ms = {str(query): float(ms) for query, _, ms in rows}
        row = connection.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", [database.name]
        ).fetchone()
    return PostgresReading(backends, cluster, statements, statement_ms, int(row[0]) if row else 0)


def postgres_spent(before: PostgresReading, after: PostgresReading) -> dict[str, Any]:
    """CPU seconds, statements (by text, and in total) and commits between two readings."""
    by_text = {
        query: calls - before.statements.get(query, 0)
        for query, calls in after.statements.items()
        if calls > before.statements.get(query, 0)
    }
    control = sum(
        calls
        for text, calls in by_text.items()
        if text.lstrip().upper().startswith(TRANSACTION_CONTROL)
    )
    return {
        "backends_cpu_seconds": cpu_delta(before.backends, after.backends),
        "backends_vanished": len(before.backends.keys() - after.backends.keys()),
        "cluster_cpu_seconds": cpu_delta(before.cluster, after.cluster) if after.cluster else None,
        "statements": sum(by_text.values()) if after.statements else None,
        "transaction_control_statements": control if after.statements else None,
        "statements_by_text": by_text,
        # Time inside PostgreSQL (planning + execution, not waits for the client) by statement.
        "statement_ms_by_text": {
            query: ms - before.statement_ms.get(query, 0.0)
            for query, ms in after.statement_ms.items()
            if query in by_text
        },
        "commits": after.commits - before.commits,
    }

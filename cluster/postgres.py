"""A PostgreSQL primary and a streaming standby, made with PostgreSQL's own tools.

``initdb`` makes the primary (trust authentication on 127.0.0.1, which initdb's default
``pg_hba.conf`` also grants to replication connections; ``wal_level=replica`` and WAL senders
are PostgreSQL 15's defaults); ``pg_basebackup -R -X stream`` copies it into the standby's data
folder with ``standby.signal`` and ``primary_conninfo`` written, so the standby streams from the
primary as soon as it starts (``hot_standby``, on by default, lets it answer reads).
``pg_ctl promote`` makes the standby a primary (docs/operations.md, "Promoting the standby").

The binaries are the machine's (Debian's ``postgresql-15``, as ``sapsam.store.embedded`` finds
them), else those of the ``pgserver`` wheel. As root the servers run as the ``postgres`` user (or
``SAPSAM_POSTGRES_OS_USER``): PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import psycopg

from sapsam.store.embedded import find_server_binaries

DATABASE = "sapsam"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def binaries() -> Path:
    """The folder of initdb, pg_ctl and pg_basebackup."""
    found = find_server_binaries()
    if found is not None and (found / "pg_basebackup").exists():
        return found
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs' runtime folder warning at import
            import pgserver

        shipped = Path(pgserver.__file__).parent / "pginstall" / "bin"
        if (shipped / "pg_basebackup").exists():
            return shipped
    except ImportError:
        pass
    raise RuntimeError("no PostgreSQL binaries: install postgresql-15 (or the pgserver wheel)")


def os_user() -> str | None:
    """Who the servers run as (None: as we are)."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("SAPSAM_POSTGRES_OS_USER", "postgres")
    pwd.getpwnam(name)  # KeyError: no such user, said by the traceback
    return name


@dataclass
class PostgresServer:
    """One PostgreSQL server: its data folder, port and log, in ``folder``."""

    folder: Path
    name: str
    port: int

    @property
    def pgdata(self) -> Path:
        """Its data folder."""
        return self.folder / self.name

    @property
    def log(self) -> Path:
        """Its log file."""
        return self.folder / f"{self.name}.log"

    @property
    def address(self) -> str:
        """host:port."""
        return f"127.0.0.1:{self.port}"

    def url(self, database: str = DATABASE) -> str:
        """A URL of one of its databases."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def run(self, tool: str, *arguments: str, check: bool = True) -> str:
        """Run one of PostgreSQL's tools as the servers' user; its output."""
        command = [str(binaries() / tool), *arguments]
        user = os_user()
        if user is not None:
            command = ["runuser", "-u", user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if check and done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stdout}{done.stderr}")
        return done.stdout

    def start(self) -> None:
        """``pg_ctl start``, waiting until it accepts connections."""
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder}"
            " -c max_connections=200 -c shared_buffers=32MB"
        )
        self.run(
            "pg_ctl", "-D", str(self.pgdata), "-w", "-t", "120", "-l", str(self.log),
            "-o", options, "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m MODE`` (``immediate``: as if the machine died)."""
        self.run("pg_ctl", "-D", str(self.pgdata), "-w", "-t", "120", "-m", mode, "stop")

    def running(self) -> bool:
        """Whether its postmaster is up."""
        if not self.pgdata.exists():
            return False
        status = self.run("pg_ctl", "-D", str(self.pgdata), "status", check=False)
        return "server is running" in status

    def in_recovery(self) -> bool:
        """True on a standby."""
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            row = connection.execute("SELECT pg_is_in_recovery()").fetchone()
        return bool(row and row[0])

    def promote(self) -> None:
        """``pg_ctl promote``, waiting until it accepts writes."""
        self.run("pg_ctl", "-D", str(self.pgdata), "-w", "-t", "120", "promote")


def _own_folder(folder: Path) -> None:
    """The servers' user must own (and alone may read) a data folder's parent."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    user = os_user()
    if user is not None:
        account = pwd.getpwnam(user)
        os.chown(folder, account.pw_uid, account.pw_gid)


@dataclass
class ReplicatedPostgres:
    """A primary and its streaming standby under ``folder``."""

    folder: Path
    primary: PostgresServer
    standby: PostgresServer

    @classmethod
    def planned(cls, folder: Path) -> ReplicatedPostgres:
        """Ports chosen, nothing made yet."""
        return cls(
            folder,
            PostgresServer(folder, "primary", free_port()),
            PostgresServer(folder, "standby", free_port()),
        )

    def create(self) -> float:
        """initdb and start the primary, create the database, pg_basebackup the standby and
        start it; the seconds it took."""
        began = time.monotonic()
        _own_folder(self.folder)
        primary, standby = self.primary, self.standby
        primary.run(
            "initdb", "-D", str(primary.pgdata), "-U", "postgres", "--auth=trust",
            "--encoding=UTF8", "--no-sync",
        )  # fmt: skip
        primary.start()
        with psycopg.connect(primary.url("postgres"), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {DATABASE}")
        # -R: standby.signal and primary_conninfo; -X stream: the WAL made meanwhile too;
        # -c fast: checkpoint now rather than wait for the next one.
        primary.run(
            "pg_basebackup", "-D", str(standby.pgdata), "-h", "127.0.0.1",
            "-p", str(primary.port), "-U", "postgres", "-R", "-X", "stream", "-c", "fast",
            "--no-sync",
        )  # fmt: skip
        standby.start()
        return time.monotonic() - began

    def destroy(self) -> None:
        """Stop both (immediately) and delete the folder."""
        for server in (self.standby, self.primary):
            if server.running():
                server.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

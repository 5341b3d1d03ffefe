"""A private PostgreSQL cluster the torture run can stop, crash and restart at will.

The embedded database of ``sapsam serve`` is started and stopped by the server itself; the torture
run needs the opposite: a cluster it owns, so it can restart it (``pg_ctl -m fast``), crash it
(``-m immediate``: crash recovery on the next start) or keep it down while the server runs. The
binaries are those of the ``pgserver`` wheel the project ships, else the machine's own (found as
``sapsam.store.embedded`` finds them). As root the cluster runs as the ``postgres`` user (or
``SAPSAM_POSTGRES_OS_USER``), since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
import warnings
from pathlib import Path

from sapsam.store.embedded import find_server_binaries

DATABASE = "torture"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _binaries() -> Path:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs' runtime folder warning at import
            import pgserver

        shipped = Path(pgserver.__file__).parent / "pginstall" / "bin"
        if (shipped / "pg_ctl").exists():
            return shipped
    except ImportError:
        pass
    found = find_server_binaries()
    if found is None:
        raise RuntimeError("no PostgreSQL binaries: install pgserver or the postgresql server")
    return found


def _os_user() -> str | None:
    if os.geteuid() != 0:
        return None
    name = os.environ.get("SAPSAM_POSTGRES_OS_USER", "postgres")
    pwd.getpwnam(name)  # KeyError: no such user, said by the traceback
    return name


class PostgresCluster:
    """One cluster in ``folder``, listening on 127.0.0.1 at a free port."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.pgdata = folder / "pgdata"
        self.binaries = _binaries()
        self.os_user = _os_user()
        self.port = free_port()
        self.log = folder / "postgres.log"

    @property
    def server_url(self) -> str:
        """The maintenance database's URL."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def url(self) -> str:
        """The torture database's URL."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{DATABASE}"

    def _run(self, *arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.binaries / arguments[0]), *arguments[1:]]
        if self.os_user is not None:
            command = ["runuser", "-u", self.os_user, "--", *command]
        completed = subprocess.run(command, capture_output=True, text=True, check=False)
        if check and completed.returncode != 0:
            raise RuntimeError(
                f"{arguments[0]} failed ({completed.returncode}): {completed.stdout}"
                f"{completed.stderr}"
            )
        return completed

    def create(self) -> None:
        """initdb, start, and create the torture database."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.folder.chmod(0o755)
        self.pgdata.mkdir(mode=0o700)
        if self.os_user is not None:
            account = pwd.getpwnam(self.os_user)
            for path in (self.pgdata, self.folder):
                os.chown(path, account.pw_uid, account.pw_gid)
        self._run(
            "initdb", "-D", str(self.pgdata), "-U", "postgres", "--auth=trust", "--encoding=UTF8"
        )
        self.start()
        import psycopg

        with psycopg.connect(self.server_url, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {DATABASE}")

    def start(self) -> float:
        """Start and wait until it accepts connections; returns the seconds it took."""
        began = time.monotonic()
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} "
            "-c max_connections=300 -c shared_buffers=64MB"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.pgdata),
            "-w",
            "-t",
            "120",
            "-l",
            str(self.log),
            "-o",
            options,
            "start",
        )
        return time.monotonic() - began

    def stop(self, mode: str = "fast") -> float:
        """``pg_ctl stop -m MODE`` (fast: sessions ended, a checkpoint; immediate: a crash)."""
        began = time.monotonic()
        self._run("pg_ctl", "-D", str(self.pgdata), "-w", "-t", "120", "-m", mode, "stop")
        return time.monotonic() - began

    def running(self) -> bool:
        """Whether the postmaster is up."""
        return self._run("pg_ctl", "-D", str(self.pgdata), "status", check=False).returncode == 0

    def destroy(self) -> None:
        """Stop (if running) and delete the folder."""
        if self.pgdata.exists() and self.running():
            self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

"""Which PostgreSQL sapsam uses: ``DATABASE_URL`` if given, else a private embedded server.

The embedded server runs in a data folder: ``--data-dir`` if given, else ``SAPSAM_DATA_DIR``, else
the user's data directory (``platformdirs``), with PostgreSQL's files under ``<data dir>/postgres``.
It listens on a Unix socket only (no TCP port to collide with), trusts local connections (the
socket sits in the owner-only data folder), and is stopped on exit if this process started it.

Two ways to get the server binaries, tried in order (or forced with
``SAPSAM_EMBEDDED_BACKEND=pgserver|system``):

1. the ``pgserver`` package: PostgreSQL shipped in a wheel (Python <= 3.12). As root it runs the
   cluster as the OS user ``pgserver``, made here (``useradd``) when missing, one process at a
   time (:func:`ensure_os_user`);
2. the machine's own ``initdb``/``pg_ctl`` (on PATH or in the usual distribution folders).
   PostgreSQL refuses to run as root, so as root the cluster is run as an unprivileged user:
   ``SAPSAM_POSTGRES_OS_USER`` if set, else ``postgres``; that user must be able to reach the data
   folder.

With neither, ``EmbeddedDatabaseUnavailableError`` says exactly what to install.
"""

from __future__ import annotations

import fcntl
import os
import pwd
import shlex
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from sapsam.log.records import DatabaseOpenError

EMBEDDED_DATABASE = "sapsam"
SUPERUSER = "postgres"
INSTALL_HINT = (
    "sapsam found no PostgreSQL to run its embedded database. Either\n"
    "  - set DATABASE_URL to a PostgreSQL server you run (e.g. postgresql://user@host/db), or\n"
    "  - install the embedded server wheel: pip install pgserver  (Python 3.9-3.12 only), or\n"
    "  - install the PostgreSQL server binaries (initdb, pg_ctl), e.g.\n"
    "      Debian/Ubuntu: apt-get install postgresql\n"
    "      Fedora/RHEL:   dnf install postgresql-server\n"
    "      macOS:         brew install postgresql@16\n"
    "    they are found on PATH or under /usr/lib/postgresql/*/bin."
)
SEARCH_FOLDERS = (
    "/usr/lib/postgresql/*/bin",
    "/usr/pgsql-*/bin",
    "/usr/local/pgsql/bin",
    "/opt/homebrew/opt/postgresql*/bin",
    "/usr/local/opt/postgresql*/bin",
)


class DatabaseUnreachableError(DatabaseOpenError):
    """The server at ``DATABASE_URL`` (or ``--database-url``) does not accept a connection."""


class EmbeddedDatabaseError(DatabaseOpenError):
    """The embedded PostgreSQL could not be started or stopped."""


class EmbeddedDatabaseUnavailableError(EmbeddedDatabaseError):
    """No way to run an embedded PostgreSQL here; the message says what to install."""


@dataclass(frozen=True)
class DatabaseHandle:
    """The database sapsam talks to: a libpq URL, and where it came from."""

    url: str
    backend: str  # "external", "pgserver" or "system"
    data_dir: Path | None = None

    @property
    def embedded(self) -> bool:
        """True when sapsam runs this server itself."""
        return self.backend != "external"


def database_url(explicit: str | None = None) -> str | None:
    """The external database to use: ``explicit`` if given, else ``DATABASE_URL``, else None."""
    return explicit or os.environ.get("DATABASE_URL") or None


def resolve_data_dir(explicit: str | Path | None = None) -> Path:
    """The data folder: the flag, else ``SAPSAM_DATA_DIR``, else the user's data directory."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    from_environment = os.environ.get("SAPSAM_DATA_DIR")
    if from_environment:
        return Path(from_environment).expanduser().resolve()
    import platformdirs

    return platformdirs.user_data_path("sapsam").resolve()


def database_in(server_url: str, database: str) -> str:
    """The same server's URL (or conninfo) pointing at another database."""
    return make_conninfo(server_url, dbname=database)


def ensure_database(server_url: str, database: str) -> None:
    """Create ``database`` on the server unless it exists."""
    with psycopg.connect(server_url, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [database]
        ).fetchone()
        if not exists:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))


@dataclass
class EmbeddedServer:
    """A running embedded server and how to stop it."""

    server_url: str  # the maintenance database ("postgres") of the private cluster
    backend: str
    data_dir: Path
    _stop: Any = None

    def stop(self) -> None:
        """Stop the server if this process started it (idempotent)."""
        stop, self._stop = self._stop, None
        if stop is not None:
            stop()


PGSERVER_OS_USER = "pgserver"
"""As root, pgserver runs PostgreSQL as this OS user, and makes it (``useradd``) when missing."""
OS_USER_LOCK = Path("/tmp/sapsam-os-user.lock")
"""A fixed path (not ``TMPDIR``, which differs between callers): every process of the machine
that may make the user takes the same lock."""


def ensure_os_user(name: str, lock_path: Path = OS_USER_LOCK) -> None:
    """As root, make the OS user ``name`` if it is missing, one process at a time (pgserver's
    ``ensure_user_exists`` under a lock; pgserver must be installed).

    pgserver makes its user itself, unlocked: on a fresh machine make test's workers each start a
    server at once, two ran ``useradd``, and one chowned its data folder to a uid the other's entry
    then replaced, so initdb, run as the user, could not chmod the folder ("Operation not
    permitted"; every test of that worker failed). Made here under an exclusive lock, the user
    exists before pgserver looks, and it finds it. Not root: nothing to do (PostgreSQL runs as
    the caller)."""
    if os.geteuid() != 0:
        return
    from pgserver.utils import ensure_user_exists  # pgserver's own way to make it, now locked

    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        ensure_user_exists(name)


def start_embedded(
    data_dir: str | Path | None = None, *, backend: str | None = None, delete_on_stop: bool = False
) -> EmbeddedServer:
    """Start (or join) the private PostgreSQL in ``data_dir``; see the module docstring."""
    folder = resolve_data_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    choice = backend or os.environ.get("SAPSAM_EMBEDDED_BACKEND", "auto")
    if choice not in ("auto", "pgserver", "system"):
        raise EmbeddedDatabaseError(f"unknown embedded backend {choice!r}: auto, pgserver, system")
    if choice in ("auto", "pgserver"):
        try:
            with warnings.catch_warnings():
                # pgserver asks platformdirs for a runtime folder at import; the fallback it warns
                # about (no XDG_RUNTIME_DIR) is fine for its lock file.
                warnings.simplefilter("ignore")
                from pgserver.postgres_server import get_server
        except ImportError as error:
            if choice == "pgserver":
                raise EmbeddedDatabaseUnavailableError(INSTALL_HINT) from error
        else:
            ensure_os_user(PGSERVER_OS_USER)
            server = get_server(
                folder / "postgres", cleanup_mode="delete" if delete_on_stop else "stop"
            )
            return EmbeddedServer(str(server.get_uri()), "pgserver", folder, server.cleanup)
    return _start_system_cluster(folder, delete_on_stop)


@contextmanager
def open_database(
    url: str | None = None,
    data_dir: str | Path | None = None,
    *,
    migrate: bool = True,
    backend: str | None = None,
) -> Iterator[DatabaseHandle]:
    """The database for this process: external if a URL is given or set, else embedded.

    ``url`` falls back to ``DATABASE_URL``. The embedded server is started in
    ``data_dir`` (see ``resolve_data_dir``), gets a ``sapsam`` database, and is stopped when the
    context exits. With ``migrate`` the alembic migrations are applied first, unless the database
    is already at the latest revision (``schema.upgrade_unless_current``).
    """
    external = database_url(url)
    if external:
        _check_reachable(external)
        if migrate:
            _upgrade(external)
        yield DatabaseHandle(external, "external")
        return
    server = start_embedded(data_dir, backend=backend)
    try:
        ensure_database(server.server_url, EMBEDDED_DATABASE)
        embedded_url = database_in(server.server_url, EMBEDDED_DATABASE)
        if migrate:
            _upgrade(embedded_url)
        yield DatabaseHandle(embedded_url, server.backend, server.data_dir)
    finally:
        server.stop()


def _upgrade(url: str) -> None:
    """``schema.upgrade_unless_current``, imported only here: alembic and SQLAlchemy would cost
    every command that does not migrate (``sapsam tables stuck``) a good part of its start-up."""
    from sapsam.store import schema

    schema.upgrade_unless_current(url)


def _check_reachable(url: str) -> None:
    """Connect once, so an unreachable server is one clear error rather than a traceback."""
    try:
        parameters = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        # Its message quotes the URL, password included: say only what is wrong.
        raise DatabaseUnreachableError(
            "the database URL is not a valid PostgreSQL connection string"
        ) from None
    try:
        # The URL's own connect_timeout wins; without one, do not wait for ever.
        target = url if "connect_timeout" in parameters else make_conninfo(url, connect_timeout=10)
        psycopg.connect(target).close()
    except psycopg.OperationalError as error:
        raise DatabaseUnreachableError(_unreachable(error)) from None


def _unreachable(error: psycopg.OperationalError) -> str:
    # libpq's reason names the host, port and user, never the password. (A password with a stray
    # "@" splits a URL elsewhere, so libpq's host then holds a piece of it, as the URL itself
    # does: percent-encode such passwords.)
    return f"cannot reach the database: {str(error).strip()}"


class DatabasePrivilegeError(DatabaseOpenError):
    """The connecting role lacks a privilege the command's work needs."""


@contextmanager
def database_connection(
    url: str | None = None, data_dir: str | Path | None = None, *, migrate: bool = True
) -> Iterator[psycopg.Connection[Any]]:
    """``open_database`` and one autocommit connection to it: what the commands work through.

    A connection lost during the work, or a privilege the role lacks (PostgreSQL's message names
    the object), becomes a ``DatabaseOpenError`` with one line for a person, as the failures of
    ``open_database`` itself are.
    """
    with (
        open_database(url, data_dir, migrate=migrate) as handle,
        _for_a_person(),
        psycopg.connect(handle.url, autocommit=True) as connection,
    ):
        yield connection


@asynccontextmanager
async def async_database_connection(
    url: str | None = None, data_dir: str | Path | None = None, *, migrate: bool = True
) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """``database_connection`` for a command that works through the asynchronous store."""
    with open_database(url, data_dir, migrate=migrate) as handle, _for_a_person():
        async with await psycopg.AsyncConnection.connect(handle.url, autocommit=True) as connection:
            yield connection


@contextmanager
def _for_a_person() -> Iterator[None]:
    """A privilege the role lacks, or a lost connection, as a ``DatabaseOpenError``."""
    try:
        yield
    except psycopg.errors.InsufficientPrivilege as error:
        raise DatabasePrivilegeError(
            f"this database role may not do that: {str(error).strip()}"
        ) from None
    except psycopg.OperationalError as error:
        raise DatabaseUnreachableError(_unreachable(error)) from None


# --- the machine's own PostgreSQL binaries ---------------------------------------------------


def find_server_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or None."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).resolve().parent
    candidates: list[Path] = []
    for pattern in SEARCH_FOLDERS:
        candidates += sorted(Path("/").glob(pattern.lstrip("/")), reverse=True)
    for folder in candidates:
        if (folder / "pg_ctl").exists() and (folder / "initdb").exists():
            return folder
    return None


def _run_as(os_user: str | None, command: list[str]) -> list[str]:
    if os_user is None:
        return command
    if shutil.which("runuser"):
        return ["runuser", "-u", os_user, "--", *command]
    return ["su", os_user, "-s", "/bin/sh", "-c", shlex.join(command)]


def _os_user_for_root() -> str | None:
    """The unprivileged user to run PostgreSQL as, when we are root; None otherwise."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("SAPSAM_POSTGRES_OS_USER", "postgres")
    try:
        pwd.getpwnam(name)
    except KeyError as error:
        raise EmbeddedDatabaseError(
            "PostgreSQL refuses to run as root, and there is no user "
            f"{name!r} to run it as. Create one (useradd --system {name}), name another with "
            "SAPSAM_POSTGRES_OS_USER, run sapsam as a normal user, or set DATABASE_URL."
        ) from error
    return name


def _check(command: list[str], what: str) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise EmbeddedDatabaseError(
            f"{what} failed ({shlex.join(command)}):\n{completed.stdout}{completed.stderr}"
        )
    return completed


def _running_socket(pgdata: Path) -> tuple[str, int] | None:
    """Socket folder and port of a live server on ``pgdata``, read from postmaster.pid."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
        pid, port, socket_dir = int(lines[0]), int(lines[3]), lines[4]
    except (OSError, IndexError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, owned by another user
    return socket_dir, port


def _start_system_cluster(folder: Path, delete_on_stop: bool) -> EmbeddedServer:
    binaries = find_server_binaries()
    if binaries is None:
        raise EmbeddedDatabaseUnavailableError(INSTALL_HINT)
    os_user = _os_user_for_root()
    pgdata = folder / "postgres"
    pgdata.mkdir(mode=0o700, exist_ok=True)
    if os_user is not None:
        account = pwd.getpwnam(os_user)
        os.chown(pgdata, account.pw_uid, account.pw_gid)
        reachable = subprocess.run(_run_as(os_user, ["test", "-w", str(pgdata)]), check=False)
        if reachable.returncode != 0:
            raise EmbeddedDatabaseError(
                f"running as root, sapsam runs PostgreSQL as {os_user!r}, who cannot reach "
                f"{pgdata}. Choose a data folder that user can enter (--data-dir or "
                "SAPSAM_DATA_DIR, e.g. under /var/lib/sapsam or /tmp), or set DATABASE_URL."
            )
    if not (pgdata / "PG_VERSION").exists():
        _check(
            _run_as(
                os_user,
                [
                    str(binaries / "initdb"),
                    "-D",
                    str(pgdata),
                    "-U",
                    SUPERUSER,
                    "--auth=trust",
                    "--encoding=UTF8",
                ],
            ),
            "initdb",
        )
    started_here = False
    running = _running_socket(pgdata)
    if running is None:
        # Unix socket paths are limited to ~107 bytes; use a short private folder if needed.
        socket_dir = pgdata
        if len(str(pgdata)) > 80:
            socket_dir = Path(tempfile.mkdtemp(prefix="sapsam-pg-"))
            if os_user is not None:
                account = pwd.getpwnam(os_user)
                os.chown(socket_dir, account.pw_uid, account.pw_gid)
        options = f"-k {shlex.quote(str(socket_dir))} -c listen_addresses=''"
        _check(
            _run_as(
                os_user,
                [
                    str(binaries / "pg_ctl"),
                    "-D",
                    str(pgdata),
                    "-w",
                    "-l",
                    str(pgdata / "server.log"),
                    "-o",
                    options,
                    "start",
                ],
            ),
            "pg_ctl start",
        )
        started_here = True
        running = _running_socket(pgdata)
        if running is None:
            raise EmbeddedDatabaseError(
                f"PostgreSQL started but left no postmaster.pid in {pgdata}"
            )
    socket_dir_text, port = running
    url = f"postgresql://{SUPERUSER}@/postgres?host={quote(socket_dir_text)}&port={port}"

    def stop() -> None:
        if started_here:
            _check(
                _run_as(
                    os_user,
                    [str(binaries / "pg_ctl"), "-D", str(pgdata), "-w", "-m", "fast", "stop"],
                ),
                "pg_ctl stop",
            )
        if delete_on_stop:
            shutil.rmtree(pgdata, ignore_errors=True)

    return EmbeddedServer(url, "system", folder, stop)

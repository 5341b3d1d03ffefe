"""Shared fixtures: a real PostgreSQL, and a fresh database per test.

The server is ``DATABASE_URL`` when set (its user must be allowed to create databases), else an
embedded one started once per session in a temporary folder and deleted afterwards. It starts only
when a test asks for one of these fixtures, so pure tests never pay for it.

- ``database_url``: a fresh database with the migrations applied (copied from a migrated template
  while the test before ran), dropped after the test (while the next one runs);
- ``empty_database_url``: a fresh database with nothing in it (for migration tests);
- ``database_factory``: the factory behind both, for tests that need more databases.

Every test gets its own database, so concurrent or dirty state never leaks between tests.

Temporary files (that embedded server's data folder, the servers tests start of their own, pytest's
``tmp_path``) go to memory (``/dev/shm``) where the machine has one with room and ``TMPDIR`` is not
set: see :func:`pytest_configure`.
"""

from __future__ import annotations

import collections
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from hypothesis import settings as hypothesis_settings
from psycopg import sql
from server_folders import (
    TEST_SERVER_PREFIX,
    claim_test_server_folder,
    remove_abandoned_test_servers,
)

from sapsam.store import schema
from sapsam.store.embedded import database_in, start_embedded

# No property test has a deadline (Hypothesis's default is 200 ms an example, 250 ms while it
# generates): on a loaded machine one example held up that long (the scheduler, a collection of
# a big heap) would fail its test as "Unreliable test timings". Speed is measured in benchmarks.
hypothesis_settings.register_profile("sapsam", deadline=None)
hypothesis_settings.load_profile("sapsam")


class DatabaseFactory:
    """Creates (and later drops) uniquely named databases on one server.

    Copying the template and dropping a database (a checkpoint) take 0.1-0.5 s each on this
    machine, and a test would wait for both. So one helper thread keeps the next
    ``SPARE_DATABASES`` migrated databases ready and drops finished ones while tests run: a test
    waits only when tests ask for databases faster than the thread makes them (a run of short
    tests draws on what long ones left time to make). A drop that failed in the thread is raised
    by ``drop_all``, at the end of the session.
    """

    SPARE_DATABASES = 2

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.tag = uuid.uuid4().hex[:8]
        self.template: str | None = None
        self.count = 0
        self.live: list[str] = []
        self._lock = threading.Lock()
        self._helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="test-databases")
        self._spares: collections.deque[Future[tuple[str, str]]] = collections.deque()
        self._pending_drops: list[Future[None]] = []

    def _execute(self, statement: sql.Composable) -> None:
        with psycopg.connect(self.server_url, autocommit=True) as connection:
            connection.execute(statement)

    def _migrated_template(self) -> str:
        with self._lock:
            if self.template is None:
                name = f"sapsam_test_{self.tag}_template"
                self._execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                self.template = name
                schema.upgrade(database_in(self.server_url, name))
            return self.template

    def _new_name(self) -> str:
        with self._lock:
            self.count += 1
            name = f"sapsam_test_{self.tag}_{self.count}"
            self.live.append(name)
            return name

    def _create_now(self, migrated: bool) -> tuple[str, str]:
        name = self._new_name()
        if migrated:
            statement = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(self._migrated_template())
            )
        else:
            statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        self._execute(statement)
        return name, database_in(self.server_url, name)

    def create(self, migrated: bool = True) -> tuple[str, str]:
        """A new database: (name, URL); migrated ones are copies of a migrated template."""
        if not migrated:
            return self._create_now(migrated=False)
        created = (
            self._spares.popleft().result() if self._spares else self._create_now(migrated=True)
        )
        while len(self._spares) < self.SPARE_DATABASES:
            self._spares.append(self._helper.submit(self._create_now, True))
        return created

    def _drop_now(self, name: str) -> None:
        self._execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        with self._lock:
            if name in self.live:
                self.live.remove(name)

    def drop(self, name: str) -> None:
        """Drop a database soon, closing any connection a test left open (in the helper thread:
        the caller does not wait for it)."""
        self._pending_drops.append(self._helper.submit(self._drop_now, name))

    def drop_all(self) -> None:
        """Drop every database this factory made, the template too; raise a drop that failed."""
        self._helper.shutdown(wait=True)
        failed = [drop.exception() for drop in self._pending_drops if drop.exception()]
        for name in list(self.live):
            self._drop_now(name)
        if self.template is not None:
            self._drop_now(self.template)
            self.template = None
        if failed:
            raise failed[0]  # type: ignore[misc]


# A copy of the migrated template is some 480 files; on the development machine's disk (ext4 on
# a virtual disk) CREATE DATABASE took 0.2-0.4 s even with fsync off, in memory 0.015 s, and most
# tests ask for one (set-up was 303 of 1,681 worker-seconds of a loaded make test, 82 in memory).
# A whole make test peaked at ~330 MB there; the room asked for leaves a wide margin.
MEMORY_TMPDIR = Path("/dev/shm")
MEMORY_TMPDIR_ROOM_BYTES = 2 * 1024**3


def pytest_configure(config: pytest.Config) -> None:
    """Point TMPDIR (this process, its xdist workers and every subprocess a test starts) at
    MEMORY_TMPDIR when it is a writable folder with MEMORY_TMPDIR_ROOM_BYTES free and TMPDIR is
    not set already (a developer's own choice, or the controller's for its workers)."""
    if "TMPDIR" in os.environ or not os.access(MEMORY_TMPDIR, os.W_OK | os.X_OK):
        return
    room = os.statvfs(MEMORY_TMPDIR)
    if room.f_bavail * room.f_frsize < MEMORY_TMPDIR_ROOM_BYTES:
        return
    os.environ["TMPDIR"] = str(MEMORY_TMPDIR)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


# The files whose tests took longest in make test (--durations, at a load of ~9 on two cores),
# longest first. make test's workers (pytest-xdist, --dist loadfile --no-loadscope-reorder) take
# whole files in collection order; xdist's own order, most tests first, left these few-test files
# for last, so one worker still ran one of them while the other had nothing left. A stale entry
# or a missing file costs time only, never a test.
LONGEST_FILES = (
    "tournament/test_tournament_console.py",
    "tournament/test_tournament_results_kill.py",
    "clients/test_demo.py",
    "api/test_fuzz_rpcs.py",
    "api/test_standby_reads.py",
    "api/test_graceful_stop.py",
    "api/test_metrics_endpoint.py",
    "clients/test_play_survives_restart.py",
    "packaging/test_cli_imports.py",
    "unit/test_solver.py",
    "api/test_deadline_fairness.py",
    "audit/test_audit_replay_totals.py",
    "api/test_open_face_deadline_fairness.py",
    "clients/test_pineapple_demo.py",
    "api/test_database_recovery.py",
    "unit/test_fairness_uniformity.py",
    "audit/test_export_running_deal.py",
    "packaging/test_wheel.py",
    "api/test_read_your_writes.py",
    "clients/test_bots_survive_restart.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the files of LONGEST_FILES first, then the others with the most tests first (what
    xdist's loadfile does by itself), each file's tests in their own order."""
    tests = Path(__file__).parent
    by_file: dict[Path, list[pytest.Item]] = {}
    for item in items:
        by_file.setdefault(item.path, []).append(item)
    rank = {tests / name: place for place, name in enumerate(LONGEST_FILES)}
    files = sorted(by_file, key=lambda path: (rank.get(path, len(rank)), -len(by_file[path])))
    items[:] = [item for path in files for item in by_file[path]]


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A URL of a PostgreSQL server the tests may create databases on."""
    external = os.environ.get("DATABASE_URL")
    if external:
        yield external
        return
    # Not under pytest's tmp_path: a concurrent pytest run prunes old basetemp folders, which
    # would pull the data folder from under a running server.
    remove_abandoned_test_servers()
    folder = Path(tempfile.mkdtemp(prefix=TEST_SERVER_PREFIX))
    claim_test_server_folder(folder)
    server = start_embedded(folder, delete_on_stop=True)
    try:
        with psycopg.connect(server.server_url, autocommit=True) as connection:
            # A throwaway cluster, deleted after the session: nothing in it must survive an
            # operating-system crash, so it need not wait for the disk (no test relies on it;
            # a process or server crash loses nothing either way). Commits, checkpoints and the
            # drop of every test's database then cost no fsync.
            for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                connection.execute(sql.SQL("ALTER SYSTEM SET {} = off").format(sql.SQL(setting)))
            connection.execute("SELECT pg_reload_conf()")
        yield server.server_url
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def database_factory(postgres_server_url: str) -> Iterator[DatabaseFactory]:
    """The session's database factory; drops whatever is left at the end."""
    factory = DatabaseFactory(postgres_server_url)
    yield factory
    factory.drop_all()


@pytest.fixture
def database_url(database_factory: DatabaseFactory) -> Iterator[str]:
    """A fresh, migrated database for this test alone."""
    name, url = database_factory.create(migrated=True)
    yield url
    database_factory.drop(name)


@pytest.fixture
def empty_database_url(database_factory: DatabaseFactory) -> Iterator[str]:
    """A fresh database with no schema at all."""
    name, url = database_factory.create(migrated=False)
    yield url
    database_factory.drop(name)


@pytest.fixture(scope="session", autouse=True)
def player_keys_in_a_temporary_file() -> Iterator[None]:
    """The SDK's player keys (sapsam_client.player_key) go to a file of the session's own, for
    the test process and every subprocess it starts, never to the user's config folder."""
    folder = tempfile.mkdtemp(prefix="sapsam-player-keys-")
    os.environ.setdefault("SAPSAM_PLAYER_KEY_FILE", str(Path(folder) / "player-keys.json"))
    yield
    shutil.rmtree(folder, ignore_errors=True)

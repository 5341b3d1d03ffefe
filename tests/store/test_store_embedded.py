"""Choosing the database: DATABASE_URL, the pgserver wheel, or the machine's own binaries."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from sapsam.store import embedded, schema
from sapsam.store.embedded import (
    DatabaseUnreachableError,
    EmbeddedDatabaseError,
    EmbeddedDatabaseUnavailableError,
    open_database,
    resolve_data_dir,
    start_embedded,
)


@pytest.fixture
def data_folder() -> Iterator[Path]:
    # Under /tmp and world-traversable: as root the system-binaries backend runs PostgreSQL as an
    # unprivileged user, who must be able to reach the folder.
    folder = Path(tempfile.mkdtemp(prefix="sapsam-embedded-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def server_answers(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=5) as connection:
            return connection.execute("SELECT 1").fetchone() == (1,)
    except psycopg.OperationalError:
        return False


def test_the_data_folder_comes_from_the_flag_then_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SAPSAM_DATA_DIR", str(tmp_path / "from-env"))
    assert resolve_data_dir(tmp_path / "from-flag") == tmp_path / "from-flag"
    assert resolve_data_dir() == tmp_path / "from-env"
    monkeypatch.delenv("SAPSAM_DATA_DIR")
    assert resolve_data_dir().name == "sapsam"


def test_a_given_url_is_used_and_migrated(empty_database_url: str) -> None:
    with open_database(empty_database_url) as handle:
        assert handle.url == empty_database_url
        assert not handle.embedded
        assert schema.current_revision(handle.url) == schema.head_revision()


def test_the_pgserver_backend_starts_migrates_and_stops(
    data_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    with open_database(data_dir=data_folder, backend="pgserver") as handle:
        assert handle.backend == "pgserver" and handle.embedded
        assert handle.data_dir == data_folder
        assert schema.current_revision(handle.url) == schema.head_revision()
        url = handle.url
    assert (data_folder / "postgres" / "PG_VERSION").exists()
    assert not server_answers(url)


def system_backend_or_skip() -> None:
    if embedded.find_server_binaries() is None:
        pytest.skip("no initdb/pg_ctl on this machine")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(os.environ.get("SAPSAM_POSTGRES_OS_USER", "postgres"))
        except KeyError:
            pytest.skip("root, and no unprivileged user to run PostgreSQL as")


def test_the_system_binaries_backend_starts_migrates_and_stops(
    data_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system_backend_or_skip()
    monkeypatch.delenv("DATABASE_URL", raising=False)
    with open_database(data_dir=data_folder, backend="system") as handle:
        assert handle.backend == "system"
        assert schema.current_revision(handle.url) == schema.head_revision()
        with psycopg.connect(handle.url) as connection:
            # A private cluster: no TCP listener, only the socket in the data folder.
            assert connection.execute("SHOW listen_addresses").fetchone() == ("",)
        url = handle.url
    assert not server_answers(url)
    # The folder survives a stop, and the next start finds the data again.
    with open_database(data_dir=data_folder, backend="system", migrate=False) as handle:
        assert schema.current_revision(handle.url) == schema.head_revision()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root must hand PostgreSQL to another user")
def test_as_root_an_unreachable_data_folder_is_a_clear_error() -> None:
    system_backend_or_skip()
    folder = Path(tempfile.mkdtemp(prefix="sapsam-private-"))  # mode 0700, root's alone
    try:
        with pytest.raises(EmbeddedDatabaseError, match="cannot reach"):
            start_embedded(folder, backend="system")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_with_no_postgresql_at_all_the_error_says_what_to_install(
    data_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(data_folder))
    monkeypatch.setattr(embedded, "SEARCH_FOLDERS", ())
    with pytest.raises(EmbeddedDatabaseUnavailableError) as raised:
        start_embedded(data_folder, backend="system")
    message = str(raised.value)
    assert "DATABASE_URL" in message
    assert "pip install pgserver" in message
    assert "apt-get install postgresql" in message


def _refused_url() -> str:
    """A URL on a local port where nothing listens (port 1: no port-0 bind of another test, in
    this process or another, can be given it meanwhile)."""
    return "postgresql://sapsam@127.0.0.1:1/sapsam"


def test_an_unreachable_database_url_is_one_clear_error() -> None:
    with (
        pytest.raises(DatabaseUnreachableError, match="cannot reach the database"),
        open_database(_refused_url()),
    ):
        pass


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://sapsam:s3cr%zzet@127.0.0.1/sapsam",  # bad percent-encoding
        "host=127.0.0.1 password='s3cret",  # an unclosed quote
    ],
)
def test_a_malformed_database_url_is_refused_without_quoting_it(url: str) -> None:
    with pytest.raises(DatabaseUnreachableError) as raised, open_database(url):
        pass
    assert "not a valid PostgreSQL connection string" in str(raised.value)
    assert "s3cr" not in str(raised.value)


def test_the_unreachable_error_never_shows_the_password() -> None:
    url = _refused_url().replace("sapsam@", "sapsam:hunter2-secret@")
    with pytest.raises(DatabaseUnreachableError) as raised, open_database(url):
        pass
    assert "hunter2" not in str(raised.value)
    assert "127.0.0.1" in str(raised.value)  # where it tried, so the operator can act


@pytest.mark.parametrize(
    "command",
    [
        ["serve", "--listen", "127.0.0.1:0"],
        ["migrate"],
        ["projections", "rebuild"],
        ["audit", "verify", "--all"],
    ],
)
def test_the_commands_say_the_database_is_unreachable_without_a_traceback(
    command: list[str],
) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "sapsam.cli", *command, "--database-url", _refused_url()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode != 0
    assert "cannot reach the database" in completed.stderr
    assert "Traceback" not in completed.stderr


_MAKE_USER = """
import os, pwd, sys, time
from pathlib import Path
from sapsam.store.embedded import ensure_os_user
name, go, lock = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
while not go.exists():
    time.sleep(0.001)
ensure_os_user(name, lock)
print(pwd.getpwnam(name).pw_uid)
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("useradd") is None, reason="makes an OS user: root only"
)
def test_processes_starting_together_agree_on_the_os_user(tmp_path: Path) -> None:
    """pgserver's user made by several processes at once (make test's workers on a fresh
    machine): each must see the one entry that stays, or initdb, run as the user, cannot chmod
    a folder chowned to another uid. A throwaway user stands in for ``pgserver``."""
    pytest.importorskip("pgserver")  # whose ensure_user_exists makes the user
    name = f"sapsam-t{os.getpid() % 100000}"
    go = tmp_path / "go"
    lock = tmp_path / "user.lock"  # this test's own lock: pgserver's stays untouched
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _MAKE_USER, name, str(go), str(lock)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    try:
        go.touch()
        seen = {int(child.communicate(timeout=60)[0]) for child in children}
        assert all(child.returncode == 0 for child in children)
        assert seen == {pwd.getpwnam(name).pw_uid}
    finally:
        subprocess.run(["userdel", "--remove", name], capture_output=True)

"""The wheel ships the migrations: built from the source, installed into a fresh virtual
environment (no source checkout on its path), ``sapsam migrate`` migrates an empty database."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from sapsam.store import schema

ROOT = Path(__file__).resolve().parents[2]
# What the sapsam build reads. Builds run on copies, so that their folders (build/, *.egg-info)
# never land in the working tree.
SERVER_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "service", "migrations")
IGNORED = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")


def _build_wheel(source: Path, wheels: Path) -> Path:
    """``pip wheel --no-deps`` of ``source`` into the empty folder ``wheels``; the wheel."""
    completed = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"),
            *("--no-index", "--quiet", "--wheel-dir", str(wheels), str(source)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    (wheel,) = wheels.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sapsam and sapsam-proto wheels, built from copies of the source."""
    work = tmp_path_factory.mktemp("wheels")
    server = work / "sapsam"
    server.mkdir()
    for name in SERVER_SOURCES:
        if (ROOT / name).is_dir():
            # symlinks=True: the copy keeps service/sapsam/migrations a link, as in the checkout.
            shutil.copytree(ROOT / name, server / name, symlinks=True, ignore=IGNORED)
        else:
            shutil.copy2(ROOT / name, server / name)
    proto = work / "sapsam_proto"
    shutil.copytree(ROOT / "clients" / "sapsam_proto", proto, ignore=IGNORED)
    return {
        "sapsam": _build_wheel(server, work / "sapsam-dist"),
        "sapsam-proto": _build_wheel(proto, work / "proto-dist"),
    }


def test_the_wheel_ships_the_migrations(wheels: dict[str, Path]) -> None:
    with zipfile.ZipFile(wheels["sapsam"]) as wheel:
        names = set(wheel.namelist())
    revisions = sorted(path.name for path in (ROOT / "migrations" / "versions").glob("v*.py"))
    assert revisions, "no revisions in migrations/versions"
    for revision in revisions:
        assert f"sapsam/migrations/versions/{revision}" in names
    for name in ("env.py", "script.py.mako", "__init__.py"):
        assert f"sapsam/migrations/{name}" in names
    # Under the package, never as a top-level `migrations` that could clash with another's.
    assert not [name for name in names if name.startswith("migrations/")]
    # Every module and data file of the package, namespace folders' data included.
    package = ROOT / "service" / "sapsam"
    shipped = {
        "sapsam/" + path.relative_to(package).as_posix()
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert shipped - names == set()
    assert not [name for name in names if "sapsam_proto" in name]


def test_an_installed_wheel_migrates_a_database(
    wheels: dict[str, Path], tmp_path: Path, empty_database_url: str
) -> None:
    environment = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(environment)], check=True, timeout=120
    )
    python = environment / "bin" / "python"
    # The third-party dependencies come from this environment's site-packages, added as a plain
    # path: its .pth files (the editable sapsam of the checkout) are not processed there.
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    shared = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    Path(purelib, "shared_dependencies.pth").write_text("\n".join(shared) + "\n", encoding="utf-8")
    # Without PYTHONPATH, for pip too: a checkout on it makes pip take the checkout's sapsam for
    # the installed one and skip the wheel.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"),
            *("--no-deps", "--no-index", str(wheels["sapsam-proto"]), str(wheels["sapsam"])),
        ],
        env=env,
        check=True,
        timeout=300,
    )
    where = subprocess.run(
        [python, "-c", "from sapsam.store import schema; print(schema.MIGRATIONS_FOLDER)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    assert Path(where) == Path(purelib) / "sapsam" / "migrations"
    migrated = subprocess.run(
        [environment / "bin" / "sapsam", "migrate", "--database-url", empty_database_url],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert migrated.returncode == 0, migrated.stderr
    report = json.loads(migrated.stdout)
    assert report["from"] is None
    assert report["to"] == schema.head_revision()
    assert schema.current_revision(empty_database_url) == schema.head_revision()

"""The distributions' metadata: one version per distribution, kept in its package's
``__version__``; an SPDX licence with its file; a changelog entry for the version; the demo's
extra; and ``sapsam demo`` saying what to install when the SDK is missing."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import sapsam
import sapsam_client
import sapsam_proto

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTIONS = {
    ROOT: sapsam,
    ROOT / "clients" / "sapsam_client": sapsam_client,
    ROOT / "clients" / "sapsam_proto": sapsam_proto,
}


def _pyproject(folder: Path) -> dict[str, object]:
    return tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("folder", list(DISTRIBUTIONS), ids=lambda folder: folder.name)
def test_the_version_lives_in_the_package(folder: Path) -> None:
    config = _pyproject(folder)
    project = config["project"]
    assert isinstance(project, dict)
    assert "version" not in project
    assert project["dynamic"] == ["version"]
    package = DISTRIBUTIONS[folder]
    dynamic = config["tool"]["setuptools"]["dynamic"]  # type: ignore[index]
    assert dynamic["version"] == {"attr": f"{package.__name__}.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", package.__version__)


def test_the_distributions_share_one_version() -> None:
    assert sapsam.__version__ == sapsam_client.__version__ == sapsam_proto.__version__


@pytest.mark.parametrize("folder", list(DISTRIBUTIONS), ids=lambda folder: folder.name)
def test_spdx_license_with_its_file(folder: Path) -> None:
    config = _pyproject(folder)
    project = config["project"]
    assert isinstance(project, dict)
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    # The SPDX string needs setuptools 77 (PEP 639); older ones refuse it.
    assert config["build-system"] == {
        "requires": ["setuptools>=77"],
        "build-backend": "setuptools.build_meta",
    }
    licence = (folder / "LICENSE").read_text(encoding="utf-8")
    assert licence == (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n\nCopyright (c) 2026 sapsam authors\n")


def test_the_changelog_has_the_current_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", changelog, flags=re.MULTILINE)
    assert headings[0] == "Unreleased"
    assert sapsam.__version__ in headings


def test_the_demo_extra_brings_the_sdk() -> None:
    project = _pyproject(ROOT)["project"]
    assert isinstance(project, dict)
    assert project["optional-dependencies"]["demo"] == ["sapsam-client>=0.1.0"]


@pytest.mark.parametrize("argv", [["demo"], ["tournament", "demo"]])
def test_a_demo_without_the_sdk_says_what_to_install(argv: list[str]) -> None:
    # sys.modules[name] = None makes `import name` fail as if the package were not installed.
    script = (
        "import sys\nsys.modules['sapsam_client'] = None\n"
        f"from sapsam.cli import main\nsys.exit(main({argv!r}))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode != 0
    assert "pip install 'sapsam[demo]'" in completed.stderr
    assert "sapsam_client is missing" in completed.stderr
    assert "Traceback" not in completed.stderr

"""``sapsam keys show | create | rotate`` through the CLI's entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sapsam import cli
from sapsam.keys import KeyPaths
from sapsam.log.signed_note import VerifierKey


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["keys", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_create_show_rotate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = str(tmp_path)
    code, _, err = _run(capsys, "show", "--data-dir", folder)
    assert code == 1 and "sapsam keys create" in err

    code, out, _ = _run(capsys, "create", "--data-dir", folder, "--name", "game.example")
    assert code == 0
    status, vkey = out.split()
    assert status == "current"
    created = VerifierKey.parse(vkey)
    assert created.name == "sapsam/game.example"
    assert "PRIVATE" not in out

    code, _, err = _run(capsys, "create", "--data-dir", folder)
    assert code == 1 and "exists already" in err

    code, out, _ = _run(capsys, "rotate", "--data-dir", folder, "--json")
    assert code == 0
    rotated = json.loads(out)
    assert rotated["origin"] == "sapsam/game.example"
    assert rotated["retired"] == [created.vkey()]
    assert rotated["current"] != created.vkey()

    code, out, _ = _run(capsys, "show", "--data-dir", folder)
    assert out.splitlines() == [f"current {rotated['current']}", f"retired {created.vkey()}"]

    key_file = KeyPaths.of(tmp_path).key
    code, out, _ = _run(capsys, "show", "--key-file", str(key_file), "--json")
    assert json.loads(out)["current"] == rotated["current"]


def test_bad_names_and_unreadable_keys_say_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "create", "--data-dir", str(tmp_path), "--name", "a b")
    assert code == 1 and "server name" in err
    code, _, err = _run(capsys, "rotate", "--data-dir", str(tmp_path))
    assert code == 1 and "cannot read the server key" in err


def test_keys_show_loads_no_network_code(tmp_path: Path) -> None:
    script = (
        "import sys\nfrom sapsam.cli import main\n"
        f"code = main(['keys', 'create', '--data-dir', {str(tmp_path)!r}, '--name', 'x'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'grpc', 'sapsam_proto',"
        " 'alembic', 'sqlalchemy'})\nprint(code, heavy, file=sys.stderr)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.stderr.strip().splitlines()[-1] == "0 []"

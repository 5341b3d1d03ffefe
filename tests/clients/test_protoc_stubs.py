"""A client that compiles proto/ itself, with protoc's standard flags, imports its own stubs
(``from sapsam.v1 import ...``) whether or not the server package ``sapsam`` is installed, and
calls a real server with them.

The stubs land in ``<dir>/sapsam/v1/`` with no __init__.py; the server's ``sapsam/__init__.py``
takes such folders into its path (see there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import sapsam

PROTO_ROOT = Path(__file__).resolve().parents[2] / "proto"

# Registers a player through the client's own stubs; prints where `sapsam` and the stubs came from.
CLIENT = """
import json, sys
import grpc
import sapsam
from sapsam.v1 import player_service_pb2, player_service_pb2_grpc

with grpc.insecure_channel(sys.argv[1]) as channel:
    players = player_service_pb2_grpc.PlayerServiceStub(channel)
    answer = players.RegisterPlayer(
        player_service_pb2.RegisterPlayerRequest(display_name="Stub"), timeout=30
    )
print(json.dumps({
    "server_package": getattr(sapsam, "__file__", None),
    "stubs": player_service_pb2.__file__,
    "player": answer.player.name,
    "display_name": answer.player.display_name,
    "token": bool(answer.token),
}))
"""


@pytest.fixture
def stubs(tmp_path: Path) -> Path:
    """proto/ compiled as a client would: ``protoc -I proto --python_out=. --grpc_python_out=.``."""
    protos = sorted(str(path) for path in (PROTO_ROOT / "sapsam" / "v1").glob("*.proto"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            "--python_out=.",
            "--grpc_python_out=.",
            *protos,
        ],
        cwd=tmp_path,
        check=True,
        timeout=120,
    )
    assert (tmp_path / "sapsam" / "v1" / "player_service_pb2_grpc.py").is_file()
    assert not (tmp_path / "sapsam" / "__init__.py").exists()
    return tmp_path


def _run_client(arguments: list[str], directory: Path, env: dict[str, str]) -> dict[str, object]:
    completed = subprocess.run(
        arguments, cwd=directory, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
    answer: dict[str, object] = json.loads(completed.stdout)
    return answer


def test_own_stubs_work_beside_the_installed_server(stubs: Path, address: str) -> None:
    # The stubs' folder first on the path, the server package importable as in this test run.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(stubs), *sys.path[1:]])
    answer = _run_client([sys.executable, "-c", CLIENT, address], stubs, env)
    assert answer["server_package"] == sapsam.__file__
    assert str(answer["stubs"]).startswith(str(stubs))
    assert str(answer["player"]).startswith("players/")
    assert answer["display_name"] == "Stub"
    assert answer["token"] is True


def test_own_stubs_work_with_the_server_path_last(stubs: Path, address: str) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*sys.path[1:], str(stubs)])
    answer = _run_client([sys.executable, "-c", CLIENT, address], stubs, env)
    assert answer["server_package"] == sapsam.__file__
    assert str(answer["stubs"]).startswith(str(stubs))
    assert str(answer["player"]).startswith("players/")


def test_own_stubs_work_without_the_server(stubs: Path, address: str) -> None:
    # -S: no site processing, so no .pth file puts an (editable) server on the path; the path is
    # the stubs' folder (the working directory), the standard library and site-packages.
    site_packages = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    if any((Path(folder) / "sapsam" / "__init__.py").exists() for folder in site_packages):
        pytest.skip("the server is installed into site-packages itself, not as an editable path")
    prelude = f"import sys; sys.path.extend({site_packages!r})\n"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    answer = _run_client([sys.executable, "-S", "-c", prelude + CLIENT, address], stubs, env)
    assert answer["server_package"] is None  # `sapsam` is only the stubs' namespace package
    assert str(answer["stubs"]).startswith(str(stubs))
    assert str(answer["player"]).startswith("players/")

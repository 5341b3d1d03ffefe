"""The client package imports nothing of the server: its generated code comes from the
``sapsam-proto`` distribution, and ``sapsam`` is only an optional extra (``rules``)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import sapsam_client

CLIENT_ROOT = Path(sapsam_client.__file__).resolve().parent
CLIENT_PYPROJECT = CLIENT_ROOT.parents[1] / "pyproject.toml"


def test_the_client_depends_on_the_proto_distribution_not_the_server() -> None:
    project = tomllib.loads(CLIENT_PYPROJECT.read_text(encoding="utf-8"))["project"]
    names = [re.split(r"[\s<>=!~;\[]", requirement)[0] for requirement in project["dependencies"]]
    assert "sapsam-proto" in names
    assert "sapsam" not in names


def test_the_client_imports_no_server_code_at_module_level() -> None:
    # sapsam.rules is reached only through importlib in sapsam_client.rules (the `rules` extra).
    for path in CLIENT_ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("sapsam."), (path.name, node.module)
                assert node.module != "sapsam", path.name
            elif isinstance(node, ast.Import):
                assert all(not a.name.startswith("sapsam.") for a in node.names), path.name

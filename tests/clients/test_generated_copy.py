"""The client package's copy of the generated API code is the server's, byte for byte, and the
client package imports nothing of the server."""

from __future__ import annotations

import ast
from pathlib import Path

import sapsam_client
from sapsam.api import codegen

CLIENT_ROOT = Path(sapsam_client.__file__).resolve().parent
CLIENT_COPY = CLIENT_ROOT / "generated"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_the_client_copy_equals_the_server_code() -> None:
    server = _tree(codegen.DEFAULT_OUTPUT)
    client = _tree(CLIENT_COPY)
    assert sorted(client) == sorted(server), "run `make proto` and commit the result"
    assert [name for name in server if server[name] != client[name]] == []


def test_the_client_imports_no_server_code_at_module_level() -> None:
    # sapsam.rules is reached only through importlib in sapsam_client.rules (the `rules` extra).
    for path in CLIENT_ROOT.rglob("*.py"):
        if "generated" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("sapsam."), (path.name, node.module)
                assert node.module != "sapsam", path.name
            elif isinstance(node, ast.Import):
                assert all(not a.name.startswith("sapsam.") for a in node.names), path.name

"""The layers of design.md hold: each package imports only what lies below it.

``rules`` <- ``fairness`` <- ``domain`` <- ``log`` <- ``app`` <- ``store``/``audit`` <- ``api`` <-
``cli``. Read from the source (every ``import`` statement, at any depth, type-checking ones
included), not from what a test run happened to load, so a lazy import inside a function counts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import sapsam

PACKAGE = Path(sapsam.__file__).parent
LAYERS = ("rules", "fairness", "domain", "log", "app", "store", "audit", "api", "cli")
# audit sits beside store, above it: the database audit reads the log through the store.
RANK = {"rules": 0, "fairness": 1, "domain": 2, "log": 3, "app": 4, "store": 5, "audit": 6}
RANK |= {"api": 7, "cli": 8}
DATABASE = ("psycopg", "psycopg_pool", "alembic", "sqlalchemy")
NETWORK = ("grpc", "grpc_health", "grpc_reflection", "sapsam_proto")
PURE = ("rules", "fairness", "domain", "log")

# api/ modules that still use psycopg, each owned by a change in progress (issue #14): the LISTEN
# connection of the live feed (belongs in the store), the error table's database-outage test and
# the audit servicer's reads. Nothing may join this list.
API_DATABASE_USE = {
    "sapsam.api.errors": {"psycopg"},
    "sapsam.api.live_feed": {"psycopg"},
    "sapsam.api.audit_servicer": {"psycopg_pool"},
}


def _modules(layer: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        yield ".".join(relative.parts).removesuffix(".__init__"), path


def _imports(module: str, path: Path) -> set[str]:
    """Every module ``path`` imports, absolute (relative imports resolved against ``module``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[: -node.level]
                base = ".".join([*parent, base] if base else parent)
            found.add(base)
            # "from sapsam import store" imports a layer by its attribute name.
            found.update(f"{base}.{alias.name}" for alias in node.names if base == "sapsam")
    return found


def _layer_of(imported: str) -> str | None:
    parts = imported.split(".")
    if len(parts) >= 2 and parts[0] == "sapsam" and parts[1] in RANK:
        return parts[1]
    return None


def _top(imported: str) -> str:
    return imported.split(".")[0]


def test_every_layer_has_modules_to_check() -> None:
    for layer in LAYERS:
        assert list(_modules(layer)), f"no modules found in sapsam/{layer}"


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_no_layer_above_it(layer: str) -> None:
    wrong = []
    for module, path in _modules(layer):
        for imported in _imports(module, path):
            other = _layer_of(imported)
            if other is not None and other != layer and RANK[other] >= RANK[layer]:
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


@pytest.mark.parametrize("layer", [*PURE, "app"])
def test_the_pure_layers_and_app_import_no_database_or_network_code(layer: str) -> None:
    wrong = [
        f"{module} imports {imported}"
        for module, path in _modules(layer)
        for imported in _imports(module, path)
        if _top(imported) in DATABASE + NETWORK
    ]
    assert wrong == []


def test_api_imports_no_database_code_beyond_the_known_remainder() -> None:
    wrong = []
    for module, path in _modules("api"):
        allowed = API_DATABASE_USE.get(module, set())
        for imported in _imports(module, path):
            if _top(imported) in DATABASE and _top(imported) not in allowed:
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


def test_the_checker_sees_imports_inside_functions_and_relative_ones(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text(
        "import grpc\n"
        "def later() -> None:\n"
        "    from psycopg import sql\n"
        "from . import chain\n"
        "from sapsam import store\n"
    )
    found = _imports("sapsam.log.probe", source)
    assert {"grpc", "psycopg", "sapsam.log", "sapsam.store"} <= found
    assert _layer_of("sapsam.store") == "store"

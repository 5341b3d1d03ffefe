"""The store's named SQL (store/sql/*.sql): every file parses, and every name the code asks for
exists, so a typo in a query's name fails here rather than on the first call that runs it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sapsam.store import queries

STORE = Path(queries.__file__).parent


def test_every_sql_file_parses_into_named_statements() -> None:
    found = queries.all_queries()
    assert "tables.page" in found
    for name, statement in found.items():
        assert re.fullmatch(r"[a-z_]+\.[a-z_][a-z0-9_]*", name)
        assert statement.lstrip("(").split()[0].upper() in {
            "SELECT",
            "INSERT",
            "UPDATE",
            "DELETE",
            "WITH",
            "CREATE",
        }
        assert "-- name:" not in statement


def test_every_query_the_store_names_exists() -> None:
    asked = {
        name
        for path in STORE.rglob("*.py")
        if path.name != "queries.py"  # its docstring's example
        for name in re.findall(r"""query\(\s*["']([a-z_.0-9]+)["']""", path.read_text())
    }
    assert asked, "no module executes a named query"
    assert asked - set(queries.all_queries()) == set()
    # ... and no statement sits unused in the files.
    assert set(queries.all_queries()) - asked == set()


def test_a_block_is_its_statement_without_its_comments() -> None:
    text = (
        "-- about all\n\n-- name: one\n-- what it does\nSELECT 1\n\n"
        "-- name: two\nSELECT %(x)s\n  -- why\n"
    )
    assert queries.parse_queries("f", text) == {"f.one": "SELECT 1", "f.two": "SELECT %(x)s"}


@pytest.mark.parametrize(
    "text",
    [
        "SELECT 1\n-- name: one\nSELECT 2\n",  # a statement with no name
        "-- name: one\n-- only a comment\n",  # a name with no statement
        "-- name: one\nSELECT 1\n-- name: one\nSELECT 2\n",  # a name twice
    ],
)
def test_a_malformed_file_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        queries.parse_queries("f", text)


def test_an_unknown_name_says_so() -> None:
    with pytest.raises(queries.UnknownQueryError, match=re.escape("tables.nothing")):
        queries.query("tables.nothing")

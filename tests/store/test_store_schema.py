"""Migrations: up from empty, down to base, up again; the result is the schema the code expects."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg

from sapsam.store import schema
from sapsam.store.schema import EXPECTED_SCHEMA, SchemaDescription, inspect_schema


def describe(url: str) -> SchemaDescription:
    with psycopg.connect(url) as connection:
        return inspect_schema(connection)


def functions(url: str) -> set[str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = 'public'"
        ).fetchall()
    return {str(row[0]) for row in rows}


def test_upgrade_from_empty_downgrade_to_base_and_upgrade_again(empty_database_url: str) -> None:
    assert schema.current_revision(empty_database_url) is None
    assert describe(empty_database_url) == SchemaDescription(frozenset(), frozenset(), frozenset())

    schema.upgrade(empty_database_url)
    assert schema.current_revision(empty_database_url) == schema.head_revision()
    assert EXPECTED_SCHEMA.difference(describe(empty_database_url)) == []

    schema.downgrade(empty_database_url, schema.BASE)
    assert schema.current_revision(empty_database_url) is None
    assert describe(empty_database_url) == SchemaDescription(frozenset(), frozenset(), frozenset())
    assert not {
        "sapsam_refuse_event_change",
        "sapsam_mark_event_insert",
        "sapsam_safe_position",
    } & functions(empty_database_url)

    schema.upgrade(empty_database_url)
    assert EXPECTED_SCHEMA.difference(describe(empty_database_url)) == []


def test_the_test_databases_carry_the_expected_schema(database_url: str) -> None:
    assert EXPECTED_SCHEMA.difference(describe(database_url)) == []
    assert schema.current_revision(database_url) == schema.head_revision()


def test_a_schema_difference_is_spelled_out(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("ALTER TABLE deal_secrets ADD COLUMN note text")
        connection.execute("DROP TRIGGER events_mark_inserts ON events")
    lines = EXPECTED_SCHEMA.difference(describe(database_url))
    assert "only in second: column ('deal_secrets', 'note', 'text', True)" in lines
    assert "only in first: trigger ('events', 'events_mark_inserts', 'BEFORE', 'INSERT')" in lines


def test_the_migrate_command_upgrades_and_downgrades(empty_database_url: str) -> None:
    def run(*arguments: str) -> dict[str, object]:
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "sapsam.cli",
                "migrate",
                "--database-url",
                empty_database_url,
                *arguments,
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        return dict(json.loads(completed.stdout))

    assert run() == {"database": "external", "from": None, "to": schema.head_revision()}
    assert run() == {
        "database": "external",
        "from": schema.head_revision(),
        "to": schema.head_revision(),
    }
    assert run("--downgrade", "base") == {
        "database": "external",
        "from": schema.head_revision(),
        "to": None,
    }
    assert schema.current_revision(empty_database_url) is None


def test_the_position_sequence_hands_out_values_one_at_a_time(database_url: str) -> None:
    # The high-water-mark proof in sapsam_safe_position needs CACHE 1 (see docs/store.md).
    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT seqcache FROM pg_sequence"
            " WHERE seqrelid = pg_get_serial_sequence('events', 'position')::regclass"
        ).fetchone()
    assert row == (1,)

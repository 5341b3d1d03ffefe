"""Migrations: up from empty, down to base, up again; the result is the schema the code expects."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg
import pytest
from database_roles import new_role

from sapsam.store import schema
from sapsam.store.expected_schema import (
    EXPECTED_SCHEMA,
    MIGRATED_TABLES,
    SchemaDescription,
    inspect_schema,
)
from sapsam.store.schema import grant_service_role


def describe(url: str) -> SchemaDescription:
    with psycopg.connect(url) as connection:
        return inspect_schema(connection)


def public_tables(url: str) -> set[str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    return {str(row[0]) for row in rows}


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
    # The expected schema covers every table the migrations make.
    assert public_tables(empty_database_url) == {*MIGRATED_TABLES, "alembic_version"}

    schema.downgrade(empty_database_url, schema.BASE)
    assert schema.current_revision(empty_database_url) is None
    assert public_tables(empty_database_url) <= {"alembic_version"}
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


def test_the_service_role_starts_on_a_current_schema_without_migrating(database_url: str) -> None:
    with new_role(database_url, grant_service_role) as (_, url):
        schema.upgrade_unless_current(url)  # nothing to do, and nothing it may not do
        assert schema.current_revision(url) == schema.head_revision()


def test_a_role_that_cannot_read_the_revision_is_told_what_to_grant(database_url: str) -> None:
    with (
        new_role(database_url) as (_, url),
        pytest.raises(schema.SchemaAccessError, match="grant it SELECT"),
    ):
        schema.upgrade_unless_current(url)


def test_the_service_role_on_an_old_schema_is_told_to_migrate_as_the_owner(
    database_url: str,
) -> None:
    with new_role(database_url, grant_service_role) as (_, url):
        schema.downgrade(database_url, "0001")  # as if this code were newer than the database
        with pytest.raises(schema.SchemaAccessError, match="run `sapsam migrate` as the schema"):
            schema.upgrade_unless_current(url)
        migrate = subprocess.run(
            [sys.executable, "-m", "sapsam.cli", "migrate", "--database-url", url],
            capture_output=True,
            text=True,
        )
        assert migrate.returncode != 0
        assert "at schema revision 0001 and this role may not migrate it" in migrate.stderr
        assert "Traceback" not in migrate.stderr
        assert schema.current_revision(database_url) == "0001"  # nothing half-done
        assert "players" not in public_tables(database_url)
    schema.upgrade_unless_current(database_url)  # the owner can
    assert EXPECTED_SCHEMA.difference(describe(database_url)) == []


def test_the_head_revision_read_without_alembic_is_alembics_head() -> None:
    from alembic.script import ScriptDirectory

    alembic_head = ScriptDirectory(str(schema.MIGRATIONS_FOLDER)).get_current_head()
    assert schema.head_revision() == alembic_head


def test_the_migrate_command_says_each_step_on_stderr(
    empty_database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from sapsam.cli import main

    assert main(["migrate", "--database-url", empty_database_url]) == 0
    up = capsys.readouterr()
    assert json.loads(up.out)["to"] == schema.head_revision()
    lines = up.err.splitlines()
    assert lines[0].startswith("migrating to revision 0001: The append-only event log")
    assert lines[-1].startswith(f"migrating to revision {schema.head_revision()}: ")
    assert len(lines) == int(schema.head_revision())
    assert main(["migrate", "--database-url", empty_database_url, "--downgrade", "0009"]) == 0
    down = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in down] == [
        f"undoing revision {number:04d}" for number in range(int(schema.head_revision()), 9, -1)
    ]

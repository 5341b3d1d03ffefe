"""The schema is ready for Citus where that costs nothing (docs/scaling.md): read from the catalog
of a migrated database with every read model, each table has its place in the distributed layout,
and every unique key of a table to be distributed by stream includes the column it would be
distributed on, but the two keys docs/scaling.md §2 names; its SQL, run here, removes those two
and keeps the constraint names the append's race handling reads."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

from sapsam.store.append_retries import RACE_CONSTRAINTS
from sapsam.store.projections import prepare_projections
from sapsam.store.projectors import all_projectors

SCALING = (Path(__file__).resolve().parents[2] / "docs" / "scaling.md").read_text(encoding="utf-8")

DISTRIBUTED_BY = {
    # the log and what an append writes beside it: by stream
    "events": "stream_id",
    "processed_requests": "stream_id",
    "deal_secrets": "stream_id",
    # read models: by the id their stream is named after (a stream_id column on Citus, §2)
    "table_state": "table_id",
    "seat_scores": "table_id",
    "tournament_tables": "table_id",
    "tournaments": "tournament_id",
    "tournament_entries": "tournament_id",
}
REFERENCE = {"players", "player_tokens", "player_keys"}
COORDINATOR = {
    "projections",
    "serving_intervals",
    "background_failures",
    "wakeup_listeners",
    "wakeup_streams",
    "merkle_nodes",
    "merkle_leaves",
    "log_checkpoints",
    "checkpoint_cosignatures",
    "alembic_version",
}
NOT_YET = {"events_pkey": ("position",), "processed_requests_pkey": ("request_id",)}
"""The unique keys that do not include the stream id yet, and what they are on (§2)."""


def unique_keys(connection: psycopg.Connection[object]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every unique index of the public schema: its name -> (table, its columns)."""
    rows = connection.execute(
        """
        SELECT i.relname, t.relname,
            array(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
                  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
                  ORDER BY k.n)
        FROM pg_index x
        JOIN pg_class i ON i.oid = x.indexrelid
        JOIN pg_class t ON t.oid = x.indrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public' AND x.indisunique
        """
    ).fetchall()
    return {str(index): (str(table), tuple(columns)) for index, table, columns in rows}


def tables(connection: psycopg.Connection[object]) -> set[str]:
    rows = connection.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
    ).fetchall()
    return {str(row[0]) for row in rows}


@pytest.fixture
def migrated_with_read_models(database_url: str) -> str:
    with psycopg.connect(database_url, autocommit=True) as connection:
        prepare_projections(connection, all_projectors())
    return database_url


def test_every_table_has_its_place(migrated_with_read_models: str) -> None:
    with psycopg.connect(migrated_with_read_models) as connection:
        present = tables(connection)
    placed = set(DISTRIBUTED_BY) | REFERENCE | COORDINATOR
    assert present == placed, (
        f"not placed in docs/scaling.md §1: {sorted(present - placed)};"
        f" placed but gone: {sorted(placed - present)}"
    )
    for table in present:
        assert f"`{table}`" in SCALING.split("## 2.")[0], table


def test_unique_keys_include_the_stream_but_the_two_named(migrated_with_read_models: str) -> None:
    with psycopg.connect(migrated_with_read_models) as connection:
        keys = unique_keys(connection)
        for table, column in DISTRIBUTED_BY.items():
            kind = connection.execute(
                "SELECT data_type FROM information_schema.columns"
                " WHERE table_schema = 'public' AND table_name = %s AND column_name = %s",
                [table, column],
            ).fetchone()
            assert kind is not None, f"{table} has no {column} to distribute on"
    lacking = {
        index: columns
        for index, (table, columns) in keys.items()
        if table in DISTRIBUTED_BY and DISTRIBUTED_BY[table] not in columns
    }
    assert lacking == NOT_YET
    assert keys["events_stream_version_key"] == ("events", ("stream_id", "version"))
    assert keys["deal_secrets_pkey"] == ("deal_secrets", ("stream_id", "deal_number"))


def _section_two_sql() -> list[str]:
    section = SCALING.split("## 2.", 1)[1].split("\n## 3.", 1)[0]
    blocks = re.findall(r"```sql\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 2
    return [
        statement.strip()
        for block in blocks
        for statement in re.sub(r"--[^\n]*", "", block).split(";")
        if statement.strip()
    ]


def test_the_documented_key_changes_leave_every_key_with_the_stream(
    migrated_with_read_models: str,
) -> None:
    with psycopg.connect(migrated_with_read_models, autocommit=True) as connection:
        for statement in _section_two_sql():
            connection.execute(statement.encode())
        keys = unique_keys(connection)
    lacking = {
        index
        for index, (table, columns) in keys.items()
        if table in DISTRIBUTED_BY and DISTRIBUTED_BY[table] not in columns
    }
    assert lacking == set()
    assert keys["events_stream_version_key"] == ("events", ("stream_id", "version"))
    assert keys["processed_requests_pkey"] == (
        "processed_requests",
        ("stream_id", "request_id"),
    )
    # The append recognises a lost race by these constraint names: both still exist.
    with psycopg.connect(migrated_with_read_models) as connection:
        names = {
            str(row[0])
            for row in connection.execute(
                "SELECT conname FROM pg_constraint WHERE conrelid = ANY("
                "ARRAY['events'::regclass, 'processed_requests'::regclass])"
            ).fetchall()
        }
        primary = connection.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'events'::regclass"
            " AND contype = 'p'"
        ).fetchone()
        position_index = connection.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'events_position'"
        ).fetchone()
    assert set(RACE_CONSTRAINTS) <= names
    assert primary == ("events_stream_version_key",)
    assert position_index is not None and '("position")' in position_index[0]

"""Migration 0011: a role that may read the log may read the tree that proves it.

docs/store.md's read-only role held ``SELECT`` on ``events`` alone, so it could not read the
Merkle tree, checkpoints or cosignatures (its exports came without their proof). The migration
grants those four tables to every role that reads ``events``, and to nobody else.
"""

from __future__ import annotations

import psycopg
import pytest
from database_roles import new_role, read_only
from psycopg import sql

from sapsam.store import schema

TREE_TABLES = ("merkle_leaves", "merkle_nodes", "log_checkpoints", "checkpoint_cosignatures")


def _readable(url: str, table: str) -> bool:
    with psycopg.connect(url, autocommit=True) as connection:
        try:
            connection.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table)))
        except psycopg.errors.InsufficientPrivilege:
            return False
    return True


@pytest.mark.parametrize("table", TREE_TABLES)
def test_a_log_reader_reads_the_tree_after_migration_0011(
    empty_database_url: str, table: str
) -> None:
    schema.upgrade(empty_database_url, "0010")
    with (
        new_role(empty_database_url, read_only) as (_, reader_url),
        new_role(empty_database_url) as (_, stranger_url),
    ):
        assert not _readable(reader_url, table)  # what 0010 left: the log, not its tree
        schema.upgrade(empty_database_url)
        assert _readable(reader_url, table)
        assert _readable(reader_url, "events")
        assert not _readable(stranger_url, table), "a role that may not read the log got its tree"
        schema.downgrade(empty_database_url, "0010")  # leaves the grants (and the tables)
        assert schema.current_revision(empty_database_url) == "0010"

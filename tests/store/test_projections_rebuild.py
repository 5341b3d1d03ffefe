"""Issue 13, defect 5: ``sapsam projections rebuild`` rebuilds every read model (the tables' too),
and the rebuilt tables keep their owner and grants whichever role runs it, or it refuses in one
line and changes nothing."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid

import psycopg
import pytest
from database_roles import new_role
from psycopg import sql

from sapsam.app.tables import TableService
from sapsam.audit.sample_play import play_series
from sapsam.cli import main
from sapsam.store.event_store import EventStore
from sapsam.store.projections import all_projectors
from sapsam.store.schema import grant_service_role
from sapsam.store.table_projections import table_rows_as_json

READ_MODEL_TABLES = [table for projector in all_projectors() for table in projector.tables]


def _play_series(url: str, seats: int, deals: int) -> uuid.UUID:
    """A series played through the table service (its own event loop and pool) on ``url``."""

    async def play() -> uuid.UUID:
        store = await EventStore.connect(url, projectors=all_projectors())
        store.prepare()
        try:
            return await play_series(TableService(store), seats, deals=deals)
        finally:
            await store.close()

    return asyncio.run(play())


def _rebuild(url: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["projections", "rebuild", "--database-url", url])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _owners(url: str) -> dict[str, str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT tablename, tableowner FROM pg_tables WHERE tablename = ANY(%s)",
            [READ_MODEL_TABLES],
        ).fetchall()
    return {str(table): str(owner) for table, owner in rows}


def _table_rows(url: str) -> str:
    with psycopg.connect(url) as connection:
        return table_rows_as_json(connection)


def test_the_default_rebuild_repairs_the_table_read_models(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = _play_series(database_url, 3, deals=2)
    before = _table_rows(database_url)
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("UPDATE table_state SET phase = 'ARRANGING', deals_scored = 7")
        connection.execute("DELETE FROM seat_scores WHERE deal_number = 2")
    assert _table_rows(database_url) != before

    status, out, err = _rebuild(database_url, capsys)

    assert (status, err) == (0, "")
    rebuilt = {entry["name"]: entry for entry in json.loads(out)["projections"]}
    assert {"table_state", "seat_scores", "tournaments"} <= set(rebuilt)
    assert _table_rows(database_url) == before
    assert str(table_id) in before


def test_a_long_rebuild_says_how_far_it_is_off_a_terminal(
    database_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _play_series(database_url, 2, deals=1)
    monkeypatch.setattr("sapsam.cli.progress.PLAIN_EVERY_SECONDS", 0.0)  # every update a line
    status, out, err = _rebuild(database_url, capsys)
    assert status == 0 and json.loads(out)["projections"]
    lines = err.splitlines()
    with psycopg.connect(database_url) as connection:
        row = connection.execute("SELECT count(*) FROM events").fetchone()
    total = int(row[0]) if row else 0
    assert lines[-2] == f"rebuilding the read models: {total} of {total} events (100%)"
    assert lines[-1].startswith(f"rebuilding the read models: {total} events, done in ")


def test_an_owner_rebuild_leaves_the_read_models_with_the_service_role(
    database_url: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with (
        new_role(database_url, grant_service_role) as (service_role, service_url),
        new_role(database_url) as (reader, _),
    ):
        # The service creates its read models at start and plays; it lets a reader see scores.
        _play_series(service_url, 2, deals=2)
        with psycopg.connect(service_url, autocommit=True) as connection:
            connection.execute(
                sql.SQL("GRANT SELECT ON seat_scores TO {}").format(sql.Identifier(reader))
            )
        assert set(_owners(database_url).values()) == {service_role}
        before = _table_rows(database_url)

        # The schema owner (here the superuser that migrated) rebuilds.
        status, _, err = _rebuild(database_url, capsys)
        assert (status, err) == (0, "")
        assert _owners(database_url) == dict.fromkeys(READ_MODEL_TABLES, service_role)
        assert _table_rows(database_url) == before
        with psycopg.connect(database_url) as connection:
            granted = connection.execute(
                "SELECT has_table_privilege(%s, 'seat_scores', 'SELECT'),"
                " has_table_privilege(%s, 'table_state', 'SELECT')",
                [reader, reader],
            ).fetchone()
        assert granted == (True, False)

        # The service goes on writing every read model, without a privilege error.
        caplog.set_level(logging.WARNING)
        _play_series(service_url, 3, deals=1)
        with psycopg.connect(service_url) as connection:  # every privilege it needs, unused
            for table in READ_MODEL_TABLES:
                connection.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(table)))
            connection.rollback()
        assert not [r for r in caplog.records if "InsufficientPrivilege" in r.getMessage()]

        # And the service role rebuilds them itself, keeping the same owner.
        status, out, err = _rebuild(service_url, capsys)
        assert (status, err) == (0, "")
        assert _owners(database_url) == dict.fromkeys(READ_MODEL_TABLES, service_role)
        assert len(json.loads(out)["projections"]) == len(all_projectors())


def test_a_role_that_could_not_keep_the_owner_is_refused_in_one_line(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _play_series(database_url, 2, deals=1)  # the owner made the read models
    before = _table_rows(database_url)
    with psycopg.connect(database_url) as connection:
        owner = connection.execute("SELECT current_user").fetchone()
    assert owner is not None
    with new_role(database_url, grant_service_role) as (service_role, service_url):
        status, out, err = _rebuild(service_url, capsys)
    assert (status, out) == (1, "")
    assert len(err.strip().splitlines()) == 1
    assert f"belongs to the role {owner[0]}" in err
    assert f"run `sapsam projections rebuild` as {owner[0]}" in err
    assert "Traceback" not in err
    assert _table_rows(database_url) == before
    assert set(_owners(database_url).values()) == {owner[0]}
    assert service_role not in err.split("and")[0]

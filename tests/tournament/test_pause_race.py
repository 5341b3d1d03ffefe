"""A deal's start and a pause of its tournament never cross: a deal whose check passed before
the pause starts before the pause is recorded, and a deal checked while a pause is being
recorded waits for it and is refused. Each interleaving is forced with real database locks (a
row lock the test holds stops one side in its append; ``pg_locks`` shows the other waiting for
the tournament's pause lock), so the test does not depend on timing."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable

import psycopg
import pytest
from tournament_play import Services, started_tournament

from sapsam.app.tournaments import stream_id_for
from sapsam.domain.errors import DomainError, Reason

PAUSE_LOCK_SPACE = 1953461871  # tournaments.sql, hold_pause_lock


def _count(database_url: str, sql: str, parameters: list[object]) -> int:
    with psycopg.connect(database_url, autocommit=True) as connection:
        row = connection.execute(sql, parameters).fetchone()
    assert row is not None
    return int(row[0])


async def _until(check: Callable[[], int], what: str) -> None:
    """Wait (polling the database, never a fixed sleep) until ``check()`` is not 0."""
    give_up = time.monotonic() + 20
    while not await asyncio.to_thread(check):
        assert time.monotonic() < give_up, f"never saw {what}"
        await asyncio.sleep(0.01)


def _waiting_for_row_lock(database_url: str) -> int:
    return _count(
        database_url,
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        " AND query NOT LIKE '%%pg_advisory%%'",
        [],
    )


def _waiting_for_pause_lock(database_url: str) -> int:
    return _count(
        database_url,
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        " AND classid = %s::bigint::oid",
        [PAUSE_LOCK_SPACE],
    )


def _position(database_url: str, stream_id: str, event_type: str) -> int | None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT max(position) FROM events WHERE stream_id = %s AND type = %s",
            [stream_id, event_type],
        ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


async def _tournament_table(services: Services) -> tuple[uuid.UUID, uuid.UUID]:
    tournament_id = await started_tournament(services.tournaments, 2, seats=2, rounds=2, deals=1)
    [table] = (await services.tournaments.load(tournament_id)).round_tables(1)
    return tournament_id, table.table_id


async def test_a_deal_checked_before_the_pause_starts_before_it_is_recorded(
    services: Services,
) -> None:
    url = services.database_url
    tournament_id, table_id = await _tournament_table(services)
    table_stream = f"table-{table_id}"
    # The deal's append stops at the table's read-model row, after its check passed.
    with psycopg.connect(url) as blocker:
        blocker.execute("SELECT 1 FROM table_state WHERE table_id = %s FOR UPDATE", [table_id])
        deal = asyncio.create_task(services.tables.start_deal(table_id, "operator", "deal-1"))
        await _until(lambda: _waiting_for_row_lock(url), "the deal's append waiting")
        # The pause now waits for the deal (it would have been recorded before it).
        pause = asyncio.create_task(services.tournaments.pause(tournament_id, "lunch", "pause"))
        await _until(lambda: _waiting_for_pause_lock(url), "the pause waiting for the deal")
        assert _position(url, stream_id_for(tournament_id), "TournamentPaused") is None
        blocker.rollback()  # the deal's append goes on
    await deal
    await pause
    started = _position(url, table_stream, "DealStarted")
    paused = _position(url, stream_id_for(tournament_id), "TournamentPaused")
    assert started is not None and paused is not None and started < paused


async def test_a_deal_checked_while_the_pause_is_recorded_waits_and_is_refused(
    services: Services,
) -> None:
    url = services.database_url
    tournament_id, table_id = await _tournament_table(services)
    # The pause's append stops at the tournament's read-model row, holding its pause lock.
    with psycopg.connect(url) as blocker:
        blocker.execute(
            "SELECT 1 FROM tournaments WHERE tournament_id = %s FOR UPDATE", [tournament_id]
        )
        pause = asyncio.create_task(services.tournaments.pause(tournament_id, "lunch", "pause"))
        await _until(lambda: _waiting_for_row_lock(url), "the pause's append waiting")
        deal = asyncio.create_task(services.tables.start_deal(table_id, "operator", "deal-1"))
        await _until(lambda: _waiting_for_pause_lock(url), "the deal waiting for the pause")
        blocker.rollback()  # the pause is recorded
    await pause
    with pytest.raises(DomainError) as refused:
        await deal
    assert refused.value.reason is Reason.TOURNAMENT_PAUSED
    assert _position(url, f"table-{table_id}", "DealStarted") is None
    # Resumed, the deal starts.
    await services.tournaments.resume(tournament_id, "resume")
    await services.tables.start_deal(table_id, "operator", "deal-1-again")
    assert _position(url, f"table-{table_id}", "DealStarted") is not None

"""A deal's start and a pause of its tournament never cross: a deal whose check passed before
the pause starts before the pause is recorded, and a deal checked while a pause is being
recorded waits for it and is refused; nor do a round's seating and a pause (the results process
decides again on the paused tournament, and the resume seats the round). Each interleaving is
forced: with real database locks (a row lock the test holds stops one side in its append;
``pg_locks`` shows the other waiting for the tournament's pause lock), or at the results
process's ``decided`` step, so the tests do not depend on timing."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable

import psycopg
import pytest
from tournament_play import Services, started_tournament

from sapsam.app.tables import TableService
from sapsam.app.tournament_control import TournamentControl
from sapsam.app.tournament_results import ResultsProcess
from sapsam.app.tournaments import stream_id_for
from sapsam.audit.sample_play import play_deal
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.tournament import TournamentPhase
from sapsam.domain.tournament_events import RoundSeated
from sapsam.store.event_store import EventStore
from sapsam.store.projections import registered_projectors
from sapsam.store.table_projections import projectors as table_projectors

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
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
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


def _pause_elsewhere(database_url: str, tournament_id: uuid.UUID) -> None:
    """The operator's pause, from a store (and an event loop) of its own, on another thread."""

    async def pause() -> None:
        store = await EventStore.connect(
            database_url, projectors=[*table_projectors(), *registered_projectors()]
        )
        store.prepare()
        try:
            await TournamentControl(store, TableService(store)).pause(
                tournament_id, "lunch", "pause"
            )
        finally:
            await store.close()

    failures: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(pause())
        except BaseException as error:  # handed to the test below
            failures.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert not failures, failures


async def test_a_round_completing_as_the_pause_is_recorded_is_seated_by_the_resume(
    services: Services,
) -> None:
    # The results process decides to credit the round's last deal and seat the next round; the
    # pause is recorded before its append. The append loses the race, the credit is decided
    # again on the paused tournament: the round completes, no round is seated, and the resume
    # seats it.
    tournaments = services.tournaments
    tournament_id, table_id = await _tournament_table(services)
    paused_once: list[str] = []

    def pause_when_decided(step: str) -> None:
        if step == "decided" and not paused_once:
            paused_once.append(step)
            _pause_elsewhere(services.database_url, tournament_id)

    process = ResultsProcess(tournaments, crash_hook=pause_when_decided)
    await play_deal(services.tables, table_id, 1)
    assert await process.process_available() == 1 and paused_once
    state = await tournaments.load(tournament_id)
    assert state.phase is TournamentPhase.PAUSED
    assert state.rounds_completed == 1 and state.current_round == 1
    recorded = [tournaments.decode(item) for item in await tournaments.events(tournament_id)]
    assert not any(isinstance(event, RoundSeated) and event.round == 2 for event in recorded)
    await tournaments.resume(tournament_id, "resume")
    state = await tournaments.load(tournament_id)
    assert state.current_round == 2 and state.phase is TournamentPhase.RUNNING

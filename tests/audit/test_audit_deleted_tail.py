"""Issue 13, defect 6: ``sapsam audit verify --all`` checks every acknowledged request against the
log, so a deleted tail fails it even after the read models were rebuilt; and it names the deals
still in play, pending or stuck, instead of a plain OK."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from sapsam import fairness
from sapsam.app.tables import TableService, stream_id_for
from sapsam.audit import Status
from sapsam.audit import database as audit_database
from sapsam.audit.sample_play import play_series, seated_table, start_and_deal
from sapsam.cli import main
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.solver import solve

SHORT_SERIES = RuleSet(series_length=2)


def _audit(database_url: str, now_ms: int | None = None) -> audit_database.AuditReport:
    with psycopg.connect(database_url, autocommit=True) as connection:
        return audit_database.audit_database(connection, now_ms=now_ms)


async def test_a_finished_tables_deleted_last_deal_fails_the_audit_naming_the_table(
    service: TableService, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await play_series(service, 2, rule_set=SHORT_SERIES)
    other = await play_series(service, 3, deals=1)
    stream = stream_id_for(table_id)
    assert _audit(database_url).holds
    # A tampering owner: switch the guards off and delete the last deal (DealStarted through
    # SeriesCompleted), then make the read models agree with what is left.
    with (
        psycopg.connect(database_url, autocommit=True) as connection,
        connection.transaction(),
    ):
        connection.execute("ALTER TABLE events DISABLE TRIGGER ALL")
        deleted = connection.execute(
            "DELETE FROM events WHERE stream_id = %s AND version >= (SELECT max(version)"
            " FROM events WHERE stream_id = %s AND type = 'DealStarted')",
            [stream, stream],
        ).rowcount
        connection.execute("ALTER TABLE events ENABLE TRIGGER ALL")
    assert deleted >= 14
    assert (
        await asyncio.to_thread(main, ["projections", "rebuild", "--database-url", database_url])
    ) == 0
    capsys.readouterr()

    report = _audit(database_url)

    assert not report.ok
    # What is left of the stream still verifies, and the rebuilt read models match it ...
    assert report.named("chains").status is Status.PASSED
    assert report.named("deals").status is Status.PASSED
    assert report.named("projection table_state").status is Status.PASSED
    # ... but the service acknowledged calls whose events are gone.
    assert report.named("acknowledged_requests").status is Status.FAILED
    lost = report.named(f"{stream}: acknowledged_requests")
    assert lost.status is Status.FAILED and "ends at version" in lost.detail
    assert [check.name for check in report.failed] == [
        "acknowledged_requests",
        f"{stream}: acknowledged_requests",
    ]
    assert str(other) not in " ".join(check.name for check in report.failed)
    assert (
        await asyncio.to_thread(main, ["audit", "verify", "--all", "--database-url", database_url])
    ) == 1
    out = capsys.readouterr().out
    assert f"✗ {stream}: acknowledged_requests" in out
    assert "OK: everything holds" not in out


async def test_the_audit_names_pending_and_stuck_deals(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from sapsam.audit.projection_audit import default_projectors
    from sapsam.store.event_store import EventStore

    now = [1_700_000_000_000]  # 2023: the command below, on today's clock, finds them stuck
    rules = RuleSet(arrange_seconds=30, reveal_seconds=30)
    store = await EventStore.connect(database_url, projectors=default_projectors())
    store.prepare()
    try:
        service = TableService(store, clock=lambda: now[0])
        await play_series(service, 2, deals=1)  # a table between deals: nothing in play
        arranging = await seated_table(service, 2, rules)
        await start_and_deal(service, arranging, 1)  # deadline 30 s ahead
        revealing = await seated_table(service, 3, rules)
        await start_and_deal(service, revealing, 1)
        state = await service.load(revealing)
        for player in (seat for seat in state.seats if seat is not None):
            seat, hand = await service.hand_of(revealing, player)
            arrangement, nonce = solve(hand, rules), bytes([seat + 1]) * 16
            commitment = fairness.arrangement_commitment(revealing, 1, seat, arrangement, nonce)
            await service.commit(revealing, player, commitment, f"commit-{player}")
            await service.confirm(revealing, player, f"confirm-{player}")
    finally:
        await store.close()

    soon = _audit(database_url, now_ms=now[0] + 10_000)
    assert soon.ok and not soon.complete
    assert soon.named("deals_in_play").detail.startswith("2 deals in play: 2 pending, 0 stuck")
    pending = soon.named(f"{stream_id_for(arranging)}: deal_in_play")
    assert pending.status is Status.PENDING
    assert pending.detail.startswith("deal 1 pending: ARRANGING, its deadline in 20 s")
    assert "REVEALING" in soon.named(f"{stream_id_for(revealing)}: deal_in_play").detail

    # An hour on, nobody timed the seats out: both tables are past all their deadlines.
    late = _audit(database_url, now_ms=now[0] + 3_600_000)
    assert late.ok and not late.complete
    summary = late.named("deals_in_play").detail
    assert summary.startswith("2 deals in play: 0 pending, 2 stuck")
    assert stream_id_for(arranging) in summary and stream_id_for(revealing) in summary
    stuck = late.named(f"{stream_id_for(revealing)}: deal_in_play").detail
    assert stuck.startswith("deal 1 stuck: REVEALING, past its deadline")

    # The command says so too: exit 3 (nothing failed, not everything done), never a plain OK.
    assert (
        await asyncio.to_thread(main, ["audit", "verify", "--all", "--database-url", database_url])
    ) == 3
    out = capsys.readouterr().out
    assert f"… {stream_id_for(arranging)}: deal_in_play: deal 1 stuck" in out
    assert "OK: everything holds" not in out


async def test_worker_processes_give_the_same_report(
    service: TableService, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tampered = await play_series(service, 2, deals=2)
    await play_series(service, 3, deals=1)
    running = await seated_table(service, 2)
    await start_and_deal(service, running, 1)
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(
            "UPDATE seat_scores SET delta = delta + 1 WHERE table_id = %s AND deal_number = 2",
            [tampered],
        )
    monkeypatch.setattr(audit_database, "PARALLEL_FROM_EVENTS", 0)
    with psycopg.connect(database_url, autocommit=True) as connection:
        alone = audit_database.audit_database(connection, now_ms=0)
        shared = audit_database.audit_database(connection, now_ms=0, workers=2)
    assert not alone.ok and alone.named("projection seat_scores").failed
    assert shared == alone

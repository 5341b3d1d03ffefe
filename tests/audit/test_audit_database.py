"""The audit against the database: the whole-database audit, tampering in place, access rules."""

from __future__ import annotations

import asyncio
import uuid

import psycopg
import pytest

from sapsam import fairness
from sapsam.app.tables import TableService, stream_id_for
from sapsam.audit import (
    ExportAccessError,
    NothingToExportError,
    Requester,
    Status,
    verify_export,
    write_lines,
)
from sapsam.audit import database as audit_database
from sapsam.audit.projection_audit import compare_projections, default_projectors
from sapsam.audit.replay import replay
from sapsam.audit.sample_play import play_deal, play_series, seated_table, start_and_deal
from sapsam.cli import main
from sapsam.rules.ruleset import RuleSet, TimeoutPolicy
from sapsam.rules.solver import solve
from sapsam.store.deal_secrets import load_deal_seed
from sapsam.store.event_store import EventStore
from sapsam.store.projections import SqlProjector


def _connect(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url, autocommit=True)


async def test_the_whole_database_audit_passes_on_an_honest_log(
    service: TableService, database_url: str
) -> None:
    tables = [await play_series(service, seats, deals=3) for seats in (2, 3)]
    running = await seated_table(service, 4)
    await start_and_deal(service, running, 1)  # a deal being played: pending, not a failure
    seen: list[tuple[int, int]] = []
    with _connect(database_url) as connection:
        report = audit_database.audit_database(
            connection, progress=lambda done, total: seen.append((done, total))
        )
    assert report.ok, [check for check in report.failed]
    assert report.deals_verified == 6
    assert report.named("chains").status is Status.PASSED
    assert report.named("deals").detail.startswith("6 of 6 finished deals in 3 tables")
    assert report.named("projection table_state").status is Status.PASSED
    assert report.named("projection seat_scores").status is Status.PASSED
    assert seen[-1] == (6, 6)
    assert len(tables) == 2
    # The scratch schema is gone.
    with _connect(database_url) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'audit_scratch_%'"
        ).fetchone()
    assert row == (0,)


async def test_a_row_of_events_edited_in_place_is_caught(
    service: TableService, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await play_series(service, 2, deals=2)
    other = await play_series(service, 3, deals=1)
    with _connect(database_url) as connection:
        # What a superuser could do: switch the guards off and edit a stored reveal.
        with connection.transaction():
            connection.execute("ALTER TABLE events DISABLE TRIGGER ALL")
            connection.execute(
                "UPDATE events SET data = jsonb_set(data, '{nonce}', to_jsonb(repeat('0', 32)))"
                " WHERE stream_id = %s AND type = 'ArrangementRevealed'"
                " AND (data->>'deal_number')::int = 2 AND (data->>'seat')::int = 1",
                [stream_id_for(table_id)],
            )
            connection.execute("ALTER TABLE events ENABLE TRIGGER ALL")
        report = audit_database.audit_database(connection)
        online = audit_database.verify_deal_online(connection, table_id, 2)
        untouched = audit_database.verify_deal_online(connection, other, 1)
    assert not report.ok
    assert report.named("chains").status is Status.FAILED
    problems = [check.name for check in report.failed]
    stream = stream_id_for(table_id)
    assert f"{stream}: chain" in problems
    assert f"{stream}: deal 2 · reveal_commitment[1]" in problems
    assert not any(str(other) in name for name in problems)
    # Online verification of the deal names the break too; the other table still verifies.
    assert {"chain", "reveal_commitment[1]", "stored_chain"} <= set(online.failed_names())
    assert untouched.ok
    # And the command an operator runs after an incident says so, with a non-zero exit.
    assert (
        await asyncio.to_thread(main, ["audit", "verify", "--all", "--database-url", database_url])
    ) == 1
    out = capsys.readouterr().out
    assert f"✗ {stream}: chain: segment 1, the ArrangementRevealed event at version" in out
    assert "First divergence: chains" in out


async def test_a_tampered_projection_row_is_named_by_the_comparison(
    service: TableService, database_url: str
) -> None:
    table_id = await play_series(service, 3, deals=2)
    with _connect(database_url) as connection:
        connection.execute(
            "UPDATE seat_scores SET delta = delta + 5 WHERE table_id = %s AND deal_number = 2"
            " AND seat = 1",
            [table_id],
        )
        connection.execute(
            "UPDATE table_state SET phase = 'ARRANGING' WHERE table_id = %s", [table_id]
        )
        report = audit_database.audit_database(connection)
    assert report.named("chains").status is Status.PASSED
    assert report.named("deals").status is Status.PASSED
    scores = report.named("projection seat_scores")
    assert scores.status is Status.FAILED
    assert f"table_id={table_id}, deal_number=2, seat=1" in scores.detail
    assert "delta: live" in scores.detail
    state = report.named("projection table_state")
    assert state.status is Status.FAILED
    assert "phase: live 'ARRANGING', from the log 'BETWEEN_DEALS'" in state.detail


async def test_a_player_exports_only_finished_deals_of_their_own_tables(
    service: TableService, database_url: str
) -> None:
    table_id = await seated_table(service, 2)
    await play_deal(service, table_id, 1)
    await start_and_deal(service, table_id, 2)
    with _connect(database_url) as connection:
        # Their own finished deal: yes.
        assert verify_export(
            write_lines(
                audit_database.export_deal(connection, table_id, 1, Requester.player("ann"))
            )
        ).ok
        # A deal still being played: no.
        with pytest.raises(ExportAccessError) as running:
            audit_database.export_deal(connection, table_id, 2, Requester.player("ann"))
        assert running.value.reason == "DEAL_NOT_FINISHED"
        assert "still being played" in str(running.value)
        # Another table's deal: no.
        with pytest.raises(ExportAccessError) as stranger:
            audit_database.export_deal(connection, table_id, 1, Requester.player("zed"))
        assert stranger.value.reason == "NOT_SEATED"
        with pytest.raises(ExportAccessError):
            audit_database.export_table(connection, table_id, Requester.player("zed"))
        # The whole table for a player stops before the running deal.
        table = audit_database.export_table(connection, table_id, Requester.player("bob"))
        assert table.header.deals == (1,)
        assert all(event.data.get("deal_number") in (None, 1) for event in table.events)
        # Missing things are not access problems.
        with pytest.raises(NothingToExportError):
            audit_database.export_deal(connection, table_id, 9, Requester.operator())
        with pytest.raises(NothingToExportError):
            audit_database.export_table(connection, uuid.uuid4(), Requester.operator())


async def test_the_operator_exports_a_running_deal_without_its_secret(
    service: TableService, database_url: str
) -> None:
    table_id = await seated_table(service, 3)
    await play_deal(service, table_id, 1)
    await start_and_deal(service, table_id, 2)
    with _connect(database_url) as connection:
        export = audit_database.export_deal(connection, table_id, 2, Requester.operator())
        whole = audit_database.export_table(connection, table_id, Requester.operator())
    async with service.store.connection() as secrets:  # type: ignore[attr-defined]
        seed = await load_deal_seed(secrets, stream_id_for(table_id), 2)
    assert seed is not None  # the deal is running: its seed is still a secret
    for exported in (export, whole):
        text = "\n".join(write_lines(exported))
        assert seed.hex() not in text
        assert "SeedRevealed" not in [
            e.type for e in exported.events if e.data.get("deal_number") == 2
        ]
    assert export.header.deals == (2,) and export.header.finished_deals == ()
    report = verify_export(write_lines(export))
    assert report.ok and not report.complete  # what can be checked holds; cards wait for seed
    assert report.pending_deals == (2,)
    assert report.named("fair_dealing", 2).status is Status.PENDING
    assert "secret" in report.named("fair_dealing", 2).detail
    assert verify_export(write_lines(whole)).deals_verified == 1


async def test_a_read_model_never_set_up_here_is_not_covered_and_a_dropped_one_fails(
    service: TableService, database_url: str
) -> None:
    await play_series(service, 2, deals=1)
    never = SqlProjector(
        name="audit_test_never",
        tables=("audit_test_never",),
        create_statements=("CREATE TABLE audit_test_never (id integer PRIMARY KEY)",),
        apply_event=lambda connection, event: None,
    )
    with _connect(database_url) as connection:
        pending, present = compare_projections(connection, [never, *default_projectors()[:1]])
        assert pending.status is Status.NOT_COVERED and present.status is Status.PASSED
        connection.execute("DROP TABLE seat_scores")
        (dropped,) = compare_projections(
            connection, [p for p in default_projectors() if p.name == "seat_scores"]
        )
    assert dropped.status is Status.FAILED
    assert dropped.detail == "the live table seat_scores does not exist"


async def test_deals_with_timeouts_verify_and_replay(database_url: str) -> None:
    # A seat that misses the arranging deadline gets the solver's hand (the rule set's option);
    # one that misses the reveal deadline fouls. Both are facts of the deal the audit checks.
    now = [1_800_000_000_000]
    rules = RuleSet(
        arrange_seconds=10, reveal_seconds=10, arrange_timeout_policy=TimeoutPolicy.SOLVER
    )
    store = await EventStore.connect(database_url, projectors=default_projectors())
    store.prepare()
    try:
        service = TableService(store, clock=lambda: now[0])
        table_id = await seated_table(service, 3, rules)
        await start_and_deal(service, table_id, 1)
        chosen = {}
        for player in ("ann", "bob"):
            seat, hand = await service.hand_of(table_id, player)
            arrangement, nonce = solve(hand, rules), bytes([seat + 1]) * 16
            chosen[player] = (arrangement, nonce)
            commitment = fairness.arrangement_commitment(table_id, 1, seat, arrangement, nonce)
            await service.commit(table_id, player, commitment, "commit")
            await service.confirm(table_id, player, "confirm")
        now[0] += 11_000
        await service.time_out(table_id, "arranging-deadline")  # cid: the solver sets its hand
        await service.reveal(table_id, "ann", *chosen["ann"], "reveal")
        now[0] += 11_000
        await service.time_out(table_id, "reveal-deadline")  # bob never reveals: a foul
        with _connect(database_url) as connection:
            export = audit_database.export_deal(connection, table_id, 1, Requester.player("cid"))
            online = audit_database.verify_deal_online(connection, table_id, 1)
    finally:
        await store.close()
    kinds = [(e.type, e.data.get("stage")) for e in export.events if e.type == "SeatTimedOut"]
    assert kinds == [("SeatTimedOut", "arranging"), ("SeatTimedOut", "revealing")]
    report = verify_export(write_lines(export))
    assert report.ok, report.failed_names()
    assert online.ok
    assert "never revealed" in report.named("reveal_commitment[1]", 1).detail
    assert "solver" in report.named("reveal_commitment[2]", 1).detail
    scored = next(e for e in export.events if e.type == "DealScored")
    assert scored.data["fouls"] == [False, True, False]
    # The solver's rows are recorded with the score (schema 2) and checked without the solver.
    assert scored.schema_version == 2
    assert scored.data["solver_arrangements"][:2] == [None, None]
    assert report.named("solver_arrangement[2]", 1).status is Status.PASSED
    cid_rows = scored.data["solver_arrangements"][2]
    assert scored.data["arrangements"][2] == "|".join(
        " ".join(cid_rows[row]) for row in ("front", "middle", "back")
    )
    final = replay(export)[-1]
    assert [view.status for view in final.seats] == ["seated"] * 3
    timed_out = next(f for f in replay(export) if f.event_type == "SeatTimedOut")
    assert timed_out.seats[2].status == "timed out (solver)"

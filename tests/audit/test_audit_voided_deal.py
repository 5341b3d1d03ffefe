"""A table with a forced timeout and a voided deal audits clean: the voided deal's published seed
matches its commitment and deals what was recorded, nothing was scored, the series totals run on
past it, and the read models rebuild to the same rows."""

from __future__ import annotations

import psycopg

from sapsam.app.tables import TableService, stream_id_for
from sapsam.audit import Requester, Status, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.audit.deal_account import export_account
from sapsam.audit.sample_play import play_deal, seated_table, start_and_deal
from sapsam.domain.events import DealVoided
from sapsam.rules.presets import DEFAULT_RULE_SET


async def test_a_voided_deal_and_a_forced_timeout_verify(
    service: TableService, database_url: str
) -> None:
    table_id = await seated_table(service, 2)
    await play_deal(service, table_id, 1)
    await start_and_deal(service, table_id, 2)
    await service.force_time_out(table_id, 1, "force-1")
    # Before the voiding, the seed is nowhere in the log.
    with psycopg.connect(database_url, autocommit=True) as connection:
        seed_before = connection.execute(
            "SELECT count(*) FROM events WHERE stream_id = %s AND data ? 'seed'",
            [stream_id_for(table_id)],
        ).fetchone()
    assert seed_before == (1,)  # deal 1's SeedRevealed only
    outcome = await service.void_deal(table_id, "the seat's client crashed", "void-2")
    (voided,) = [service.decode(recorded) for recorded in outcome.events]
    assert isinstance(voided, DealVoided) and voided.deal_number == 2
    await play_deal(service, table_id, 3)
    state = await service.load(table_id)
    assert state.deals_scored == 3 and state.voided_in_series == 1

    with psycopg.connect(database_url, autocommit=True) as connection:
        export = audit_database.export_table(connection, table_id, Requester.operator())
        report = verify_export(write_lines(export))
        assert report.ok, [check for check in report.failed]
        (check,) = [c for c in report.checks if c.name == "voided_deal"]
        assert check.status is Status.PASSED and check.deal == 2
        assert "deals the cards recorded in CardsDealt" in check.detail
        totals = [c for c in report.checks if c.name == "series_totals" and c.deal == 3]
        assert totals and totals[0].status is Status.PASSED
        # The whole-database audit rebuilds the read models and compares them row by row.
        whole = audit_database.audit_database(connection)
        assert whole.ok, [check for check in whole.failed]
        assert whole.named("projection table_state").status is Status.PASSED
        assert whole.named("projection seat_scores").status is Status.PASSED


async def test_a_voided_deal_whose_seed_is_forged_fails(
    service: TableService, database_url: str
) -> None:
    table_id = await seated_table(service, 2, request_id="forged-void")
    await start_and_deal(service, table_id, 1)
    await service.void_deal(table_id, "dispute", "void-1")
    with psycopg.connect(database_url, autocommit=True) as connection:
        with connection.transaction():
            connection.execute("ALTER TABLE events DISABLE TRIGGER ALL")
            connection.execute(
                "UPDATE events SET data = jsonb_set(data, '{seed}', to_jsonb(repeat('0', 64)))"
                " WHERE stream_id = %s AND type = 'DealVoided'",
                [stream_id_for(table_id)],
            )
            connection.execute("ALTER TABLE events ENABLE TRIGGER ALL")
        export = audit_database.export_table(connection, table_id, Requester.operator())
        report = verify_export(write_lines(export))
    (check,) = [c for c in report.checks if c.name == "voided_deal"]
    assert check.status is Status.FAILED
    assert "does not match the deal's commitment" in check.detail


async def test_a_replaced_seat_verifies_in_the_table_and_in_each_deal(
    service: TableService, database_url: str
) -> None:
    # Scheme 2 commitments bind the seat's player: deal 2's seat 1 is zed's, deal 1's bob's.
    table_id = await seated_table(service, 2, request_id="replaced")
    await play_deal(service, table_id, 1)
    await service.replace_seat(table_id, 1, "zed", "replace-1")
    await play_deal(service, table_id, 2)
    events = [service.decode(recorded) for recorded in await service.events(table_id)]
    committers = [
        (e.deal_number, e.seat) for e in events if type(e).__name__ == "ArrangementCommitted"
    ]
    assert (2, 1) in committers
    with psycopg.connect(database_url, autocommit=True) as connection:
        table = audit_database.export_table(connection, table_id, Requester.operator())
        report = verify_export(write_lines(table))
        assert report.ok, [check for check in report.failed]
        assert report.deals_verified == 2
        deal = audit_database.export_deal(connection, table_id, 2, Requester.operator())
        assert [e.type for e in deal.events].count("SeatReplaced") == 1
        single = verify_export(write_lines(deal))
        assert single.ok, [check for check in single.failed]
        # The new player may export the table's deals; the read models rebuild alike.
        audit_database.export_deal(connection, table_id, 2, Requester.player("zed"))
        whole = audit_database.audit_database(connection)
        assert whole.ok, [check for check in whole.failed]
        rows = connection.execute(
            "SELECT deal_number, player_id FROM seat_scores WHERE table_id = %s AND seat = 1"
            " ORDER BY deal_number",
            [table_id],
        ).fetchall()
    assert rows == [(1, "bob"), (2, "zed")]


async def test_a_series_completed_after_a_voided_deal_verifies(
    service: TableService, database_url: str
) -> None:
    # Deals 1 and 3 scored, deal 2 voided: the 2-deal series completes after deal 3 with
    # deals_played 2. The standings check failed this ("the series is recorded complete after
    # deal 3 (deals_played 2)"), and the account said deal 2 was missing from the export.
    rule_set = DEFAULT_RULE_SET.with_changes(series_length=2)
    table_id = await seated_table(service, 2, rule_set, request_id="void-then-complete")
    await play_deal(service, table_id, 1)
    await start_and_deal(service, table_id, 2)
    await service.void_deal(table_id, "a misdeal", "void-then-complete-2")
    await play_deal(service, table_id, 3)
    with psycopg.connect(database_url, autocommit=True) as connection:
        export = audit_database.export_table(connection, table_id, Requester.operator())
        last_deal = audit_database.export_deal(connection, table_id, 3, Requester.operator())
    report = verify_export(write_lines(export))
    assert report.ok, [check for check in report.failed]
    (standings,) = [c for c in report.checks if c.name == "standings"]
    assert standings.status is Status.PASSED and standings.deal == 3
    _, told = export_account(export, checks_hold=True)
    assert "  running totals after deal 3:" in told
    # Deal 3 alone cannot show that deal 2 was voided: not covered, never failed.
    alone = verify_export(write_lines(last_deal))
    (standings,) = [c for c in alone.checks if c.name == "standings"]
    assert standings.status is Status.NOT_COVERED, standings.detail

"""Every deal of played series verifies, offline from its export and online from the database."""

from __future__ import annotations

import json

import psycopg
import pytest

from sapsam.app.tables import TableService
from sapsam.audit import (
    Requester,
    Status,
    read_export,
    verify_audit_export,
    verify_export,
    write_lines,
)
from sapsam.audit import database as audit_database
from sapsam.audit.replay import frame_at, replay
from sapsam.audit.sample_play import play_series
from sapsam.log.chain import GENESIS_HASH

FAIRNESS_CHECKS = (
    "seed_commitment",
    "contributions",
    "cut",
    "dealer",
    "fouls",
    "scores",
    "reveal_fouls",
    "scored_arrangements",
    "sequence",
    "dealer_rotation",
)


@pytest.mark.parametrize("seat_count", [2, 3, 4])
async def test_every_deal_of_a_series_verifies_offline_and_online(
    service: TableService, database_url: str, seat_count: int
) -> None:
    table_id = await play_series(service, seat_count)
    with psycopg.connect(database_url, autocommit=True) as connection:
        for number in range(1, 9):
            export = audit_database.export_deal(
                connection, table_id, number, Requester.player("ann")
            )
            lines = list(write_lines(export))
            report = verify_export(lines)
            assert report.ok, [check for check in report.checks if check.status != "passed"]
            assert report.deals_verified == 1
            for name in FAIRNESS_CHECKS:
                assert report.named(name, number).status is Status.PASSED
            for seat in range(seat_count):
                assert report.named(f"reveal_commitment[{seat}]", number).status is Status.PASSED
            online = audit_database.verify_deal_online(connection, table_id, number)
            assert online.ok
            assert online.named("stored_chain").status is Status.PASSED
            assert [c.label for c in online.checks][: len(report.checks)] == [
                c.label for c in report.checks
            ]
        table = audit_database.export_table(connection, table_id, Requester.player("bob"))
    report = verify_export(write_lines(table))
    assert report.ok
    assert report.deals_verified == 8
    assert [report.named("series_totals", n).status for n in range(1, 9)] == [Status.PASSED] * 8
    assert report.named("standings", 8).status is Status.PASSED


async def test_a_deal_export_has_the_opening_and_the_deal_with_its_anchor(
    service: TableService, database_url: str
) -> None:
    table_id = await play_series(service, 2, deals=3)
    with psycopg.connect(database_url, autocommit=True) as connection:
        stream = await service.events(table_id)
        first = audit_database.export_deal(connection, table_id, 1, Requester.operator())
        third = audit_database.export_deal(connection, table_id, 3, Requester.operator())
    # Deal 1 touches the opening: one segment from the genesis.
    assert len(first.header.segments) == 1
    assert first.header.segments[0].anchor.hash == GENESIS_HASH
    # Deal 3: the opening from the genesis, then the deal hanging on the event before it.
    opening, deal = third.header.segments
    assert opening.anchor.version == 0 and opening.first_version == 1
    assert [event.type for event in third.events[:4]] == [
        "TableCreated",
        "PlayerSeated",
        "PlayerSeated",
        "DealerChosen",
    ]
    started = next(e for e in third.events if e.type == "DealStarted")
    assert started.data["deal_number"] == 3
    assert deal.first_version == started.version
    before = next(e for e in stream if e.version == started.version - 1)
    assert deal.anchor.version == before.version and deal.anchor.hash == before.hash
    assert third.events[-1].type == "DealScored"
    assert deal.last_hash == third.events[-1].hash
    # The text form round-trips exactly.
    lines = list(write_lines(third))
    assert read_export(lines) == third
    assert json.loads(lines[0])["format"] == "sapsam-audit-export"
    assert verify_audit_export(read_export(lines)).ok


async def test_replay_shows_each_moment_and_who_could_see_what(
    service: TableService, database_url: str
) -> None:
    table_id = await play_series(service, 3, deals=2)
    with psycopg.connect(database_url, autocommit=True) as connection:
        export = audit_database.export_deal(connection, table_id, 2, Requester.operator())
    frames = replay(export)
    assert [frame.version for frame in frames] == [event.version for event in export.events]
    dealt = next(frame for frame in frames if frame.event_type == "CardsDealt")
    for view in dealt.seats:
        assert view.cards is not None and len(view.cards.split()) == 13
        assert view.seen_by == f"seat {view.seat} only"
    assert frame_at(frames, dealt.version - 1) != dealt  # before the deal: nobody's cards
    before = frame_at(frames, dealt.version - 1)
    assert before is not None and all(view.cards is None for view in before.seats)
    first_reveal = next(frame for frame in frames if frame.event_type == "ArrangementRevealed")
    shown = [view for view in first_reveal.seats if view.arrangement is not None]
    assert len(shown) == 1 and shown[0].seen_by == "everyone"
    hidden = [view for view in first_reveal.seats if view.arrangement is None]
    assert all(view.seen_by == f"seat {view.seat} only" for view in hidden)
    seed = next(frame for frame in frames if frame.event_type == "SeedRevealed")
    assert all(view.seen_by == "everyone" for view in seed.seats)
    scored = frames[-1]
    assert scored.event_type == "DealScored" and scored.phase == "BETWEEN_DEALS"

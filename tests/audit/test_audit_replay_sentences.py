"""``sapsam audit replay`` tells each event so a player reads it (issue #16 item 11): the seats
by their players' display names, never a raw id in a sentence; the operator's moves as the
operator's (a forced timeout is not "missed its deadline"); a voided deal's hands, computable
from the seed it published, shown as such; a seat given away after a deal names who played that
deal. And ``sapsam audit verify`` does not say of a seat that never revealed that "the rows shown
are the ones the seat committed to"."""

from __future__ import annotations

import dataclasses
import re
import uuid
from pathlib import Path

import psycopg
import pytest

from sapsam.app.tables import TableService
from sapsam.audit import Requester, write_lines
from sapsam.audit import database as audit_database
from sapsam.audit.export_format import with_display_names
from sapsam.audit.replay import replay
from sapsam.audit.replay_rendering import render_replay
from sapsam.audit.report import NO_REVEAL_PHRASE
from sapsam.audit.sample_play import play_deal, seated_table, start_and_deal
from sapsam.cli import main
from sapsam.rules.presets import DEFAULT_RULE_SET

NAMES = {"ann": "Ann", "bob": "Bob", "cid": "Cid", "dee": "Dee"}


async def _table_with_the_operators_moves(service: TableService) -> uuid.UUID:
    """Deal 1 played; deal 2: Cid forced out of time, then the deal voided; seat 1 given from
    Bob to Dee; deal 3 played with Dee (the series has 2 deals that count: 1 and 3)."""
    two_deals = dataclasses.replace(DEFAULT_RULE_SET, series_length=2)
    table_id = await seated_table(service, 3, two_deals, players=("ann", "bob", "cid"))
    await play_deal(service, table_id, 1)
    await start_and_deal(service, table_id, 2)
    await service.force_time_out(table_id, 2, "force-2")
    await service.void_deal(table_id, "a spilled drink", "void-2")
    await service.replace_seat(table_id, 1, "dee", "replace-1")
    await play_deal(service, table_id, 3)
    return table_id


async def test_replay_names_the_seats_and_tells_the_operators_moves(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_id = await _table_with_the_operators_moves(service)
    with psycopg.connect(database_url, autocommit=True) as connection:
        export = audit_database.export_table(connection, table_id, Requester.operator())
    export = with_display_names(export, NAMES)
    frames = replay(export)
    said = {frame.event_type: frame.happened for frame in frames}
    everything = "\n".join(frame.happened for frame in frames)
    # No player id in any sentence: every seated player has a name in this export.
    assert not re.search(r"\b(ann|bob|cid|dee)\b", everything), everything
    assert said["PlayerSeated"] == "Cid sat down at seat 2"
    assert "the operator created the table: 3 seats" in said["TableCreated"]
    assert re.fullmatch(
        r"(Ann|Bob|Cid|Dee) \(seat \d\) cut the deck at position \d+", said["DeckCut"]
    )
    assert said["SeatTimedOut"] == (
        "the operator timed Cid (seat 2) out while it was arranging (a forced timeout, not a"
        " missed deadline): its hand counts as a foul"
    )
    assert said["DealVoided"].startswith(
        "the operator voided deal 2 (a spilled drink): nobody scores, and the deal does not"
        " count towards the series; its seed, published now ("
    )
    assert said["SeatReplaced"] == (
        "the operator gave seat 1 to Dee (it was Bob's) from the next deal on; the seat's"
        " series total carries on"
    )
    assert re.fullmatch(
        r"the series is complete after 2 deals: .*; seat 1's total includes the points Bob"
        r" scored there before",
        said["SeriesCompleted"],
    )
    scored = [frame for frame in frames if frame.event_type == "DealScored"]
    assert scored[-1].happened.startswith("deal 3 scored: Ann (seat 0) ")
    assert ", Dee (seat 1) " in scored[-1].happened and "; running totals Ann (seat 0) " in (
        scored[-1].happened
    )

    # The voided deal: its seed is published, so its hands are shown, to everyone; no frame
    # says a hand waits for a seed that is in the log.
    voided = next(frame for frame in frames if frame.event_type == "DealVoided")
    assert all(view.cards and view.seen_by == "everyone" for view in voided.seats)
    assert all(view.status == "deal voided" for view in voided.seats)
    after_void = [f for f in frames if f.deal_number == 2 and f.version >= voided.version]
    assert not any("before the seed is revealed" in v.seen_by for f in after_void for v in f.seats)

    # The frame of the replacement still shows the voided deal 2's hands, and says that Bob,
    # not Dee, held seat 1 for it.
    replaced = next(frame for frame in frames if frame.event_type == "SeatReplaced")
    assert replaced.seats[1].player == "dee" and replaced.seats[1].played_by == "bob"
    text = "\n".join(render_replay(export, frames))
    block = text[text.index(" SeatReplaced by ") :]
    seat_line = next(line for line in block.splitlines() if line.startswith("  seat 1 Dee:"))
    assert seat_line.endswith("(deal 2 was played by Bob)")

    # Through the command, with --json as programs read it.
    path = tmp_path / "table.jsonl"
    path.write_text("".join(line + "\n" for line in write_lines(export)), encoding="utf-8")
    assert main(["audit", "replay", str(path), "--plain"]) == 0
    out = capsys.readouterr().out
    assert "the operator timed Cid (seat 2) out while it was arranging" in out
    assert "missed the arranging deadline" not in out


async def test_verify_does_not_say_a_seat_that_never_revealed_showed_committed_rows(
    service: TableService, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Both seats forced out of time while arranging: the deal is scored, neither revealed.
    table_id = await seated_table(service, 2)
    await start_and_deal(service, table_id, 1)
    await service.force_time_out(table_id, 0, "force-0")
    await service.force_time_out(table_id, 1, "force-1")
    with psycopg.connect(database_url, autocommit=True) as connection:
        export = audit_database.export_table(connection, table_id, Requester.operator())
    path = tmp_path / "table.jsonl"
    path.write_text("".join(line + "\n" for line in write_lines(export)), encoding="utf-8")
    assert main(["audit", "verify", str(path), "--plain"]) == 4
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if "deal 1 · reveal_commitment[1]" in line]
    assert "the seat never revealed" in line
    assert line.endswith(NO_REVEAL_PHRASE)
    assert "committed to before the seed" not in line

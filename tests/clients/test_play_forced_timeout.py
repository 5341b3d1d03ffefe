"""An operator's forced timeout is told to the player as the operator's, not as "your time ran
out" (the event records who: ``SeatTimedOut.by_operator``, from the event's actor): on a real
server, the operator times the person out (ForceSeatTimeout) while they type deal 2's rows; the
prompt's notice, the event line and the deal's results all say the operator did it. A timeout
by the deadline stays "ran out of time" (pure lines below)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from test_sdk_operator_moves import Metadata, Players, operator, wait_for
from typing_person import Person

from sapsam_client.card_style import PLAIN
from sapsam_client.deal_watch import deal_over_notice
from sapsam_client.dispute import INTERNALLY_CONSISTENT_ONLY, DisputeVerdict
from sapsam_client.prompts import Terminal
from sapsam_client.results_text import seat_lines, timed_out_line
from sapsam_client.table_view import TableView
from sapsam_proto.v1 import operator_service_pb2, table_event_pb2, table_pb2

T = "tables/7f0e4c1a-0000-4000-8000-000000000002"
NOTICE = re.compile(r"out of deal 2: the table went on|deal 2 was scored without your rows")


def test_the_operators_timeout_is_told_as_the_operators(
    address: str, operator_metadata: Metadata, tmp_path: Path
) -> None:
    players = Players(address, tmp_path)
    first, second = players.seats
    person = Person(NOTICE)
    view = TableView(Terminal(person.ask, person.say), second.client, second)
    view.deal_poll_seconds = 0.2
    players.handlers[1] = view.show_event
    players.play(first)
    players.play(second, view.arranger)
    assert person.typing_deal_2.wait(60), person.lines()
    wait_for(first.client, players.table, lambda t: t.seats[0].confirmed and t.deal_number == 2)
    operator(address).ForceSeatTimeout(
        operator_service_pb2.ForceSeatTimeoutRequest(
            request_id=str(uuid.uuid4()), table=players.table, seat=second.position
        ),
        metadata=operator_metadata,
    )
    players.join()
    assert players.failures == {}

    said = person.lines()
    text = "\n".join(said)
    # The notice while typing (deal 2 still on, or already scored and deal 3 dealt when the
    # watch looked): the operator's, unless the event could not be read within the watch's 2 s
    # (a loaded machine), when it says only that the seat was timed out; never that the
    # person's time ran out.
    assert "ran out of time" not in text and "your time ran out" not in text
    notice = next(line for line in said if NOTICE.search(line))
    assert re.search(r"operator timed you out|seat was timed out|you were timed out", notice)
    assert f"the operator timed you out (seat {second.position}) while you were arranging" in said
    # The deal's results: the seat fouled because the operator timed it out.
    joined = " ".join(line.strip() for line in said)
    assert "FOUL (timed out by the operator while arranging)" in joined, text
    # On the wire: the event says who (the actor recorded is the operator).
    (forced,) = [
        event.seat_timed_out
        for event in first.client.watch(players.table)
        if event.WhichOneof("payload") == "seat_timed_out"
    ]
    assert forced.by_operator and forced.seat == second.name


def test_a_deadline_timeout_is_still_told_as_the_time_running_out() -> None:
    seat = f"{T}/seats/1"
    arranging = table_pb2.TIMEOUT_STAGE_ARRANGING
    missed = table_event_pb2.SeatTimedOut(deal=f"{T}/deals/2", seat=seat, stage=arranging)
    forced = table_event_pb2.SeatTimedOut(
        deal=f"{T}/deals/2", seat=seat, stage=arranging, by_operator=True
    )
    assert timed_out_line("Bob", missed) == "Bob (seat 1) ran out of time"
    assert timed_out_line("you", missed) == "you (seat 1) ran out of time"
    assert timed_out_line("Bob", forced) == "the operator timed Bob (seat 1) out while arranging"
    table = table_pb2.Table(
        deal_number=2,
        phase=table_pb2.TABLE_PHASE_ARRANGING,
        seats=[table_pb2.Seat(name=seat, timed_out=True)],
    )
    assert str(deal_over_notice(table, seat, 2, None)).startswith("you ran out of time on deal 2")
    notice = deal_over_notice(table, seat, 2, None, lambda: True)
    assert str(notice).startswith("the operator timed you out of deal 2")
    unknown = deal_over_notice(table, seat, 2, None, lambda: None)  # the event was not readable
    assert str(unknown).startswith("your seat was timed out of deal 2")
    result = table_pb2.DealSeatResult(seat=seat, foul=True, timed_out_stage=arranging)
    missed_lines = " ".join(line.strip() for line in seat_lines(result, "", {}, PLAIN))
    assert "FOUL (missed the arranging deadline)" in missed_lines
    forced_lines = " ".join(line.strip() for line in seat_lines(result, "", {}, PLAIN, {seat}))
    assert "FOUL (timed out by the operator while arranging)" in forced_lines


def test_a_dispute_verdict_does_not_say_every_hand_was_committed_to() -> None:
    # A deal a seat never revealed (the operator timed it out) verifies: the verdict must not
    # claim every hand is what its seat committed to; every hand revealed is.
    verdict = DisputeVerdict(
        deal=f"{T}/deals/2",
        verdict=INTERNALLY_CONSISTENT_ONLY,
        verdict_line="",
        checks=(),
        key_source="",
        receipts=0,
        report_text="",
    )
    text = verdict.explain()
    assert "every hand is what its seat committed to" not in text
    assert "every hand revealed is the one its seat committed to" in text

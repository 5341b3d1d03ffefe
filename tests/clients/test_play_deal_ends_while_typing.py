"""`sapsam-play` when the deal a person is typing rows for ends under them, on a real server: the
operator voids it. The prompt notices within seconds and says so above the question; the next
line typed ends the dialogue, nothing is sent for the voided deal (no commitment recorded), the
operator's reason follows, and the series goes on to the next deal and finishes."""

from __future__ import annotations

import re
from pathlib import Path

from test_sdk_operator_moves import DEALS, Metadata, Players, void, wait_for
from typing_person import Person

from sapsam_client.deal_watch import deal_over_notice
from sapsam_client.prompts import Terminal
from sapsam_client.table_view import TableView
from sapsam_proto.v1 import table_pb2

VOIDED_NOTICE = re.compile("voided deal 2 while you were arranging")


def test_a_deal_voided_while_the_person_types_is_said_and_nothing_is_sent(
    address: str, operator_metadata: Metadata, tmp_path: Path
) -> None:
    players = Players(address, tmp_path)
    first, second = players.seats
    person = Person(VOIDED_NOTICE)
    view = TableView(Terminal(person.ask, person.say), second.client, second)
    view.deal_poll_seconds = 0.2
    players.handlers[1] = view.show_event
    players.play(first)
    players.play(second, view.arranger)
    assert person.typing_deal_2.wait(60), person.lines()
    wait_for(first.client, players.table, lambda t: t.seats[0].confirmed and t.deal_number == 2)
    void(address, operator_metadata, players.table, 2, "a spilled drink")
    players.join()

    assert players.failures == {}
    outcome = players.outcomes[second.name]
    assert [result.deal_number for result in outcome.results] == [1, 3, 4]
    said = person.lines()
    notice = next(i for i, s in enumerate(said) if "voided deal 2 while you were" in s)
    shown = " ".join(line.strip() for line in said[notice : notice + 2])
    assert "what you type now is not sent" in shown
    # The operator's reason follows (the play loop's next events), then deal 3's cards.
    reason = next(i for i, s in enumerate(said) if "the operator voided deal 2: a spilled" in s)
    deal_3 = next(i for i, s in enumerate(said) if s.lstrip().startswith("Deal 3: your cards"))
    assert notice < reason < deal_3
    # Nothing of the person's was committed in deal 2; the other seat's commitment was.
    committed = [
        (event.arrangement_committed.seat, event.arrangement_committed.deal)
        for event in first.client.watch(players.table)
        if event.WhichOneof("payload") == "arrangement_committed"
    ]
    assert (first.name, f"{players.table}/deals/2") in committed
    assert (second.name, f"{players.table}/deals/2") not in committed
    assert len([seat for seat, _ in committed if seat == second.name]) == DEALS


def _table(deal: int, phase: int, *, timed_out: bool = False) -> table_pb2.Table:
    seat = table_pb2.Seat(name="tables/t/seats/0", timed_out=timed_out)
    return table_pb2.Table(deal_number=deal, phase=phase, seats=[seat])  # type: ignore[arg-type]


def test_the_notice_names_what_ended_the_deal() -> None:
    arranging, between = table_pb2.TABLE_PHASE_ARRANGING, table_pb2.TABLE_PHASE_BETWEEN_DEALS
    seat = "tables/t/seats/0"
    voided = table_pb2.DealResult(scored=False)
    scored = table_pb2.DealResult(seed_revealed=True, scored=True)
    assert deal_over_notice(_table(2, arranging), seat, 2, None) is None
    assert "ran out of time on deal 2" in str(
        deal_over_notice(_table(2, arranging, timed_out=True), seat, 2, None)
    )
    assert "operator voided deal 2" in str(deal_over_notice(_table(2, between), seat, 2, voided))
    assert "operator voided deal 2" in str(deal_over_notice(_table(3, arranging), seat, 2, voided))
    assert "scored without your rows" in str(
        deal_over_notice(_table(3, arranging), seat, 2, scored)
    )

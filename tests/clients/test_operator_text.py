"""What sapsam-play says of the operator's moves (``results_text``, ``waiting``): a voided deal,
a seat given to another player, the deals that count after a void, and the waiting line after
each. Pure text from messages, no server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sapsam_client.results_text import (
    deal_started_line,
    replaced_line,
    seat_labels,
    seat_lost_line,
    standing_label,
    voided_lines,
)
from sapsam_client.waiting import waiting_text
from sapsam_proto.v1 import table_event_pb2, table_pb2

T = "tables/7f0e4c1a-0000-4000-8000-000000000002"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def seat(position: int) -> str:
    return f"{T}/seats/{position}"


def table_between_deals(deal_number: int, dealer: int, names: list[str]) -> table_pb2.Table:
    return table_pb2.Table(
        name=T,
        phase=table_pb2.TABLE_PHASE_BETWEEN_DEALS,
        deal_number=deal_number,
        dealer_seat=seat(dealer),
        seats=[
            table_pb2.Seat(name=seat(i), position=i, player=f"players/p{i}", display_name=name)
            for i, name in enumerate(names)
        ],
    )


def test_a_voided_deal_is_said_with_the_operators_reason() -> None:
    voided = table_event_pb2.DealVoided(deal=f"{T}/deals/2", reason="a spilled drink")
    assert voided_lines(voided) == [
        "the operator voided deal 2: a spilled drink (no points change; the deal does",
        "  not count towards the series)",
    ]


def test_after_a_void_the_waiting_line_names_the_next_deal() -> None:
    # The voided deal 2 ends the deal: the dealer (passed left) starts deal 3.
    table = table_between_deals(2, dealer=1, names=["Ann", "Bob"])
    labels = seat_labels(table.seats)
    assert waiting_text(table, seat(0), labels, NOW, NOW - timedelta(seconds=5)) == (
        "waiting for Bob (seat 1) to start deal 3: 5 s so far (no time limit)"
    )


def test_deal_numbers_after_a_void_say_which_deals_count() -> None:
    assert deal_started_line(3, 3, 0) == "-- deal 3 of 3 started --"
    assert deal_started_line(3, 0, 0) == "-- deal 3 started --"
    assert deal_started_line(4, 3, 1) == "-- deal 4 started (3 of 3 that count; 1 voided) --"
    assert deal_started_line(4, 0, 2) == "-- deal 4 started (2 that count; 2 voided) --"


def test_a_replaced_seat_is_said_with_its_new_players_name() -> None:
    assert replaced_line(seat(1), "Carol") == "seat 1 is now played by Carol"
    assert replaced_line(seat(1), "you") == "seat 1 is now played by you"
    # A seat's series total is the seat's (the rules score seats): it carries on, and says so.
    assert replaced_line(seat(1), "Carol", "Bob", 2) == (
        "seat 1 is now played by Carol (Bob played it until deal 2); the seat's series total"
        " carries on: a series total is the seat's, not the player's"
    )
    assert standing_label("Carol", seat(1), "Bob", 2) == "Carol (seat 1, Bob until deal 2)"
    assert seat_lost_line(seat(1), "Carol") == (
        "the operator gave your seat (seat 1) to Carol: you no longer play at this table"
    )


def test_after_a_replacement_the_waiting_line_names_the_new_player() -> None:
    # Carol took seat 1 between deals 1 and 2 and deals next.
    table = table_between_deals(1, dealer=1, names=["Ann", "Carol"])
    labels = seat_labels(table.seats)
    assert waiting_text(table, seat(0), labels, NOW, NOW) == (
        "waiting for Carol (seat 1) to start deal 2 (no time limit)"
    )

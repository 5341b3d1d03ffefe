"""The SDK plays whole series against a real server, one thread per seat, each seat its own
client and player. Commitments are computed by the SDK alone; the server accepts every reveal
against them, and ``verify_deal`` passes on every deal the log holds."""

from __future__ import annotations

import threading

import psycopg
import pytest

from sapsam import fairness
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import Event
from sapsam.domain.published import published_deal
from sapsam.fairness.verify import verify_deal
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.store.offline_reads import read_stream
from sapsam_client import Client, Hand, Rows, Seat, SeriesOutcome, connect, table_id
from sapsam_client.commitment import arrangement_commitment
from sapsam_client.rules import random_arranger, solver_arranger
from sapsam_proto.v1 import table_pb2


def logged_events(database_url: str, table: str) -> list[Event]:
    """A table's events as the log holds them, decoded."""
    with psycopg.connect(database_url) as connection:
        recorded = read_stream(connection, f"table-{table_id(table)}")
    return [DEFAULT_CODEC.decode(r.type, r.schema_version, r.data) for r in recorded]


def play(
    address: str, seat_count: int, deals: int, preset: str
) -> tuple[str, list[Seat], list[SeriesOutcome]]:
    """Create a table and play its series with one client per seat, alternating strategies."""
    creator = connect(address)
    creator.register("creator")
    table = creator.create_table(seat_count, preset=preset, series_length=deals)
    seats: list[Seat] = []
    for index in range(seat_count):
        client = connect(address)
        client.register(f"sdk {index}")
        seats.append(client.join_table(table.name))
    outcomes: list[SeriesOutcome | None] = [None] * seat_count
    failures: list[BaseException] = []

    def run(index: int) -> None:
        arranger = solver_arranger if index % 2 == 0 else random_arranger(index)
        try:
            outcomes[index] = seats[index].play_series(arranger)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(seat_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    assert all(outcome is not None for outcome in outcomes)
    return table.name, seats, [outcome for outcome in outcomes if outcome is not None]


@pytest.mark.parametrize(("seat_count", "preset"), [(2, "pagat"), (3, "two_four"), (4, "one_six")])
def test_the_sdk_plays_a_full_series(
    address: str, database_url: str, seat_count: int, preset: str
) -> None:
    deals = 4 if seat_count > 2 else 8
    table, seats, outcomes = play(address, seat_count, deals, preset)
    reader: Client = seats[0].client
    final = reader.get_table(table)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    for outcome in outcomes:
        assert [result.deal_number for result in outcome.results] == list(range(1, deals + 1))
        assert len(outcome.standings) == seat_count
    totals = {seat.name: seat.series_total for seat in final.seats}
    assert {s.seat: s.total for s in outcomes[0].standings} == totals
    assert sum(totals.values()) == 0

    events = logged_events(database_url, table)
    for number in range(1, deals + 1):
        result = reader.get_deal_result(f"{table}/deals/{number}")
        for seat_result, seat in zip(result.seats, seats, strict=True):
            committed = seat.commitments[number]
            # The server scored exactly the rows the SDK committed to, with the SDK's nonce.
            assert seat_result.commitment == committed.commitment
            assert seat_result.nonce == committed.nonce
            assert (
                Rows.of(
                    seat_result.arrangement.front,
                    seat_result.arrangement.middle,
                    seat_result.arrangement.back,
                )
                == committed.rows
            )
            assert not seat_result.foul  # both strategies only play legal rows
            assert len(committed.nonce) == 32
            # The SDK's commitment is the server's commitment of the same rows.
            rows = committed.rows
            assert committed.commitment == fairness.arrangement_commitment(
                table_id(table),
                number,
                seat.position,
                Arrangement(
                    parse_cards(list(rows.front)),
                    parse_cards(list(rows.middle)),
                    parse_cards(list(rows.back)),
                ),
                committed.nonce,
                scheme=2,  # the SDK's: bound to the seat's player
                player_id=seat.player_id(),
            )
        report = verify_deal(published_deal(events, number))
        assert report.ok, report.failed
    # Nonces are fresh for every commitment.
    nonces = [c.nonce for seat in seats for c in seat.commitments.values()]
    assert len(set(nonces)) == len(nonces)


def test_a_seat_plays_one_deal_step_by_step(address: str) -> None:
    # The low-level calls, as the README shows them: no play loop.
    clients = [connect(address) for _ in range(2)]
    for index, client in enumerate(clients):
        client.register(f"step {index}")
    table = clients[0].create_table(2, series_length=1)
    seats = [client.join_table(table.name) for client in clients]
    clients[0].choose_dealer(table.name)
    deal = clients[0].start_deal(table.name)
    cutter = clients[0].get_table(table.name).cutter_seat
    next(seat for seat in seats if seat.name == cutter).client.cut_deck(cutter, 17)
    hands: list[Hand] = []
    for seat in seats:
        hand = seat.hand()
        assert hand.deal == deal and len(hand.cards) == 13
        hands.append(hand)
        first = seat.commit(1, solver_arranger(hand, table))
        second = seat.commit(1, solver_arranger(hand, table))
        assert first.nonce != second.nonce and first.commitment != second.commitment
        seat.confirm()
    for seat in seats:
        seat.reveal(1)
    result = clients[1].get_deal_result(deal)
    assert result.scored and result.seed_revealed
    assert [list(s.dealt_cards) for s in result.seats] == [list(h.cards) for h in hands]
    assert seats[0].commitments[1].commitment == arrangement_commitment(
        table_id(table.name),
        1,
        0,
        seats[0].commitments[1].rows,
        seats[0].commitments[1].nonce,
        scheme=2,
        player_id=seats[0].player_id(),
    )

"""An arrangement chosen for deal 1 that reaches the server during deal 2 is refused (WRONG_DEAL),
dropped by the SDK, and the seat still arranges and reveals deal 2.

Before ``deal_number`` such rows became deal 2's commitment, which the SDK held as deal 1's: it
never revealed deal 2 and the table waited for ever (the flake in test_deadlines.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sapsam_client import Hand, Rows, Seat, SeriesOutcome, connect, solver_arranger
from sapsam_client.commitment_file import CommitmentFile
from sapsam_proto.v1 import table_pb2

DEALT = (
    table_pb2.TABLE_PHASE_ARRANGING,
    table_pb2.TABLE_PHASE_REVEALING,
    table_pb2.TABLE_PHASE_SERIES_COMPLETE,
)


def test_rows_for_a_past_deal_are_refused_and_the_seat_plays_on(
    address: str, tmp_path: Path
) -> None:
    clients = [connect(address) for _ in range(2)]
    for index, client in enumerate(clients):
        client.register(f"late{index}")
    table = clients[0].create_table(2, series_length=2).name
    seats = [client.join_table(table) for client in clients]
    # A second arranger for seat 1 (same player, as after a restart): it fetches deal 1's hand
    # and thinks until deal 2 is dealt, while seat 1's play loop arranges deal 1 itself.
    keeper = CommitmentFile(tmp_path / "open.json")
    stale = Seat(clients[1], seats[1].name, keeper)
    stale_has_hand = threading.Event()
    stale_hands: list[Hand] = []

    def slow(hand: Hand, current: table_pb2.Table) -> Rows:
        stale_hands.append(hand)
        stale_has_hand.set()
        while not (current.deal_number == 2 and current.phase in DEALT):
            time.sleep(0.05)
            current = clients[1].get_table(table)
        return solver_arranger(hand, current)

    def after_the_stale_arranger(hand: Hand, current: table_pb2.Table) -> Rows:
        assert stale_has_hand.wait(30)
        return solver_arranger(hand, current)

    failures: list[BaseException] = []

    def arrange_late() -> None:
        try:
            current = clients[1].get_table(table)
            while current.phase != table_pb2.TABLE_PHASE_ARRANGING:
                time.sleep(0.05)
                current = clients[1].get_table(table)
            stale.act(current, slow)  # the refusal only means "too late": act swallows it
        except BaseException as error:
            failures.append(error)

    outcomes: list[SeriesOutcome] = []

    def run(index: int) -> None:
        try:
            arranger = solver_arranger if index == 0 else after_the_stale_arranger
            outcomes.append(seats[index].play_series(arranger))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=arrange_late, daemon=True)]
    threads += [threading.Thread(target=run, args=(index,), daemon=True) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not [thread for thread in threads if thread.is_alive()], clients[0].get_table(table)
    assert failures == [] and len(outcomes) == 2
    assert [hand.deal_number for hand in stale_hands] == [1]
    assert 1 not in stale.commitments and keeper.load(stale.name) == {}  # dropped, not kept
    final = clients[0].get_table(table)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    second = clients[0].get_deal_result(f"{table}/deals/2")
    assert all(seat.HasField("arrangement") and not seat.timed_out_stage for seat in second.seats)

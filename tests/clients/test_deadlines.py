"""A seat that misses its arranging deadline: the SDK's move is refused as SEAT_TIMED_OUT, the
play loop carries on, and both seats finish the series."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from sapsam_client import Hand, Rows, SeriesOutcome, connect, solver_arranger
from sapsam_proto.v1 import rule_set_pb2, table_pb2


def test_a_late_seat_is_timed_out_and_the_series_goes_on(address: str) -> None:
    clients = [connect(address) for _ in range(2)]
    for index, client in enumerate(clients):
        client.register(f"d{index}")
    rules = rule_set_pb2.RuleSet(
        arrange_seconds=1, arrange_timeout_policy=rule_set_pb2.TIMEOUT_POLICY_SOLVER
    )
    table = clients[0].create_table(2, rule_set=rules, series_length=1).name
    seats = [client.join_table(table) for client in clients]

    def too_slow(hand: Hand, current: table_pb2.Table) -> Rows:
        # Think until the server has timed this seat out, then try to commit anyway.
        while not clients[1].get_table(table).seats[1].timed_out:
            time.sleep(0.05)
        return solver_arranger(hand, current)

    outcomes: list[SeriesOutcome] = []
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            arranger = solver_arranger if index == 0 else too_slow
            outcomes.append(seats[index].play_series(arranger))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == [] and len(outcomes) == 2
    result = clients[0].get_deal_result(f"{table}/deals/1")
    late = result.seats[1]
    assert late.timed_out_stage == table_pb2.TIMEOUT_STAGE_ARRANGING
    assert late.timeout_consequence == table_pb2.TIMEOUT_CONSEQUENCE_SOLVER
    assert 1 not in seats[1].commitments  # its commitment never reached the server
    assert all(len(outcome.standings) == 2 for outcome in outcomes)


def test_a_dealer_timed_out_in_the_last_deal_still_starts_the_next(address: str) -> None:
    # Both seats miss deal 1's deadline, so whichever deals deal 2 shows timed_out between deals;
    # the SDK honoured that flag in every phase and never started deal 2: the table waited for
    # ever (found by make torture, finding T4).
    clients = [connect(address) for _ in range(2)]
    for index, client in enumerate(clients):
        client.register(f"e{index}")
    rules = rule_set_pb2.RuleSet(
        arrange_seconds=1, arrange_timeout_policy=rule_set_pb2.TIMEOUT_POLICY_SOLVER
    )
    table = clients[0].create_table(2, rule_set=rules, series_length=2).name
    seats = [client.join_table(table) for client in clients]

    def late_in_deal_one(index: int) -> Callable[[Hand, table_pb2.Table], Rows]:
        def arrange(hand: Hand, current: table_pb2.Table) -> Rows:
            while current.deal_number == 1 and not current.seats[index].timed_out:
                time.sleep(0.05)
                current = clients[index].get_table(table)
            return solver_arranger(hand, current)

        return arrange

    outcomes: list[SeriesOutcome] = []
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            outcomes.append(seats[index].play_series(late_in_deal_one(index)))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=run, args=(index,), daemon=True) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    # Should a seat still play, say where the table stands (a flake must leave its evidence).
    still_playing = [index for index, thread in enumerate(threads) if thread.is_alive()]
    assert not still_playing, f"seats {still_playing} still play: {clients[0].get_table(table)}"
    assert failures == [] and len(outcomes) == 2
    first = clients[0].get_deal_result(f"{table}/deals/1")
    assert all(seat.timed_out_stage == table_pb2.TIMEOUT_STAGE_ARRANGING for seat in first.seats)
    assert clients[0].get_deal_result(f"{table}/deals/2").seats

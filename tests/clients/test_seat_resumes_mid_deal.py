"""A seat whose client dies mid-deal is taken up by a new one with the same token and state
file: after confirming it reveals the commitment the state file kept; before arranging it finds
its hand (on its stream, else GetMyHand) and arranges. Either way the series finishes (the table
has no time limits: a seat that could not reveal would hold it for ever)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from sapsam_client import Hand, connect, solver_arranger
from sapsam_client.bot_state import BotState
from sapsam_client.seat import take_seat
from sapsam_client.seat_types import SeriesOutcome
from sapsam_proto.v1.table_pb2 import TABLE_PHASE_ARRANGING, Table


def wait_until(condition, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize("dies", ["after confirming", "while arranging"])
def test_a_seat_taken_up_again_mid_deal_plays_on(address: str, tmp_path: Path, dies: str) -> None:
    host = connect(address)
    host.register("bee")
    table = host.create_table(2, series_length=2).name
    bee = host.join_table(table)  # seat 0
    ann = connect(address)
    registration = ann.register("ann")
    state_path = tmp_path / "state.json"
    first_state = BotState(state_path)
    first = take_seat(ann, table, player=registration.player, keeper=first_state)

    bee_go = threading.Event()  # bee arranges deal 1 only once ann's first client is gone
    ann_stuck = threading.Event()  # ann's first client never gets its rows (it "dies")
    outcomes: dict[str, SeriesOutcome] = {}
    failures: list[BaseException] = []

    def bee_rows(hand: Hand, current: Table) -> object:
        bee_go.wait(60)
        return solver_arranger(hand, current)

    def ann_rows(hand: Hand, current: Table) -> object:
        if dies == "while arranging":
            ann_stuck.wait(60)
        return solver_arranger(hand, current)

    def play(name: str, seat, arranger) -> None:  # type: ignore[no-untyped-def]
        try:
            outcomes[name] = seat.play_series(arranger)
        except BaseException as error:
            failures.append(error)

    threading.Thread(target=play, args=("bee", bee, bee_rows), daemon=True).start()
    doomed = threading.Thread(target=play, args=("first", first, ann_rows), daemon=True)
    doomed.start()
    kept = {}
    if dies == "after confirming":
        wait_until(lambda: host.get_table(table).seats[1].confirmed)
        kept = first_state.load(first.name)  # kept before it was sent
        assert list(kept) == [1]
    else:
        wait_until(lambda: host.get_table(table).phase == TABLE_PHASE_ARRANGING)
        assert not host.get_table(table).seats[1].confirmed
    ann.close()  # the first client dies: its calls and stream fail from now on
    ann_stuck.set()
    doomed.join(30)
    assert failures, "the first client stopped with an error"
    failures.clear()
    first_state.close()

    again = connect(address, token=registration.token)
    second = take_seat(again, table, player=registration.player, keeper=BotState(state_path))
    assert second.name == first.name
    player = threading.Thread(target=play, args=("ann", second, solver_arranger), daemon=True)
    player.start()
    bee_go.set()
    player.join(120)
    assert failures == [] and len(outcomes["ann"].results) == 2
    deal_1 = outcomes["ann"].results[0].seats[1]
    assert not deal_1.foul  # revealed (or arranged) by the second client, not settled as a foul
    if kept:
        revealed = host.get_deal_result(f"{table}/deals/1").seats[1].arrangement
        assert list(revealed.back) == list(kept[1].rows.back)  # the rows the first one chose
    assert json.loads(state_path.read_text())["commitments"] == {}  # forgotten once revealed

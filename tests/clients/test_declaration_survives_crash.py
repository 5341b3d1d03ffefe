"""A client that dies between ``DeclareNatural`` and ``CommitArrangement`` (issue #17): its
declaration is final for the deal, so a client taking the seat up cannot declare again; it opens
the declaration the first one made, whose nonce the state file kept from before it was sent."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from sapsam_client import Hand, connect, solver_arranger
from sapsam_client.bot_state import BotState
from sapsam_client.seat import take_seat
from sapsam_client.seat_types import Commitment, SeriesOutcome
from sapsam_proto.v1.table_pb2 import Table


class DiesBeforeCommitting(BotState):
    """A bot's state file whose process dies right after declaring: the commitment it is about
    to keep (just before sending CommitArrangement) is never kept nor sent."""

    def __init__(self, path: Path, client: object) -> None:
        super().__init__(path)
        self.client = client

    def save(self, seat: str, committed: Commitment) -> None:
        self.client.close()  # type: ignore[attr-defined]
        raise ConnectionError("the process died between declaring and committing")


def wait_until(condition, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_declaration_made_before_a_crash_is_opened_by_the_rerun(
    address: str, tmp_path: Path
) -> None:
    host = connect(address)
    host.register("bee")
    table = host.create_table(2, preset="capsa_susun", series_length=1).name
    bee = host.join_table(table)  # seat 0
    ann = connect(address)
    registration = ann.register("ann")
    state_path = tmp_path / "state.json"
    dying = DiesBeforeCommitting(state_path, ann)
    first = take_seat(ann, table, player=registration.player, keeper=dying)
    declared: list[str] = []
    outcomes: dict[str, SeriesOutcome] = {}
    failures: list[BaseException] = []
    bee_go = threading.Event()

    def declarer(hand: Hand, current: Table) -> str:
        declared.append("none")
        return "none"

    def bee_rows(hand: Hand, current: Table) -> object:
        bee_go.wait(60)
        return solver_arranger(hand, current)

    def play(name: str, seat, arranger, **options) -> None:  # type: ignore[no-untyped-def]
        try:
            outcomes[name] = seat.play_series(arranger, **options)
        except BaseException as error:
            failures.append(error)

    threading.Thread(target=play, args=("bee", bee, bee_rows), daemon=True).start()
    doomed = threading.Thread(
        target=play, args=("first", first, solver_arranger), kwargs={"declarer": declarer}
    )
    doomed.start()
    doomed.join(60)
    assert declared == ["none"]
    assert len(failures) == 1 and isinstance(failures[0], ConnectionError), failures
    failures.clear()
    dying.close()
    # What the dead bot left: the declaration and its nonce, no rows.
    kept = json.loads(state_path.read_text())["commitments"][first.name]["1"]
    assert kept["natural"] == "none" and len(bytes.fromhex(kept["natural_nonce"])) == 32
    assert "nonce" not in kept and "front" not in kept

    again = connect(address, token=registration.token)
    second = take_seat(again, table, player=registration.player, keeper=BotState(state_path))
    assert second.name == first.name
    player = threading.Thread(
        target=play, args=("ann", second, solver_arranger), kwargs={"declarer": declarer}
    )
    player.start()
    bee_go.set()
    player.join(120)
    assert failures == [] and len(outcomes["ann"].results) == 1
    assert declared == ["none"]  # the rerun did not choose (nor send) a new declaration
    seat = outcomes["ann"].results[0].seats[1]
    assert not seat.foul  # revealed, its declaration opened, not a foul nor a timeout
    assert json.loads(state_path.read_text())["commitments"] == {}  # forgotten once revealed

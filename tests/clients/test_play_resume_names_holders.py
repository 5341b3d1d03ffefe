"""A resumed `sapsam-play` names, for each deal it replays, who held each seat when that deal was
played, not who holds it now (issue #16 item 1's resume, items 4 and 7's naming). On a pty: Ann
plays deal 1 against Bob, stops with Ctrl-C at her rows, the operator times her out (deal 1 is
scored) and gives Bob's seat to Carol; Ann's rerun of the same command replays the table: Bob sat
down, deal 1 was against Bob (its results, row by row, name Bob, never Carol), the operator timed
Ann out, then Carol took the seat."""

from __future__ import annotations

import contextlib
import io
import shlex
import signal
import threading
import uuid
from pathlib import Path

from pty_child import pty_child
from test_play_survives_restart import PLAY, PLAY_ENV, ROWS_PROMPT
from test_sdk_operator_moves import Metadata, hold_later_deals, operator, wait_for

from sapsam_client import connect
from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.rules import solver_arranger
from sapsam_client.seat_types import SeatReplacedError
from sapsam_proto.v1 import operator_service_pb2, table_pb2


def test_a_resumed_session_names_who_held_each_seat_then(
    address: str, operator_metadata: Metadata, tmp_path: Path
) -> None:
    host = connect(address)
    host.register("host")
    table = host.create_table(2, series_length=2).name
    bob = connect(address)
    bob.register("Bob")
    bob_seat = bob.join_table(table, 1, keeper=CommitmentFile(tmp_path / "bob.json"))
    hold_later_deals(bob, table, threading.Event())  # Bob never starts deal 2

    def play_bob() -> None:
        # His seat goes to Carol; a held start gives up.
        with contextlib.suppress(SeatReplacedError, AssertionError):
            bob_seat.play_series(solver_arranger)

    threading.Thread(target=play_bob, daemon=True).start()
    tokens = str(tmp_path / "ann" / "tokens.json")
    command = [*PLAY, "--server", address, "--table", table, "--seat", "0", "--name", "Ann"]
    command += ["--token-file", tokens, "--plain"]
    with pty_child(command, PLAY_ENV) as first:
        first.terminal.expect(ROWS_PROMPT)  # deal 1's rows: she stops here
        wait_for(host, table, lambda t: t.seats[1].confirmed)
        first.process.send_signal(signal.SIGINT)
        first.terminal.expect(r"to resume: (sapsam-play [^\r\n]+)\r\n")
        resume = shlex.split(first.terminal.match.group(1))
        assert first.exit_code() == 130

    stub = operator(address)
    stub.ForceSeatTimeout(
        operator_service_pb2.ForceSeatTimeoutRequest(request_id=str(uuid.uuid4()), table=table),
        metadata=operator_metadata,
    )
    wait_for(host, table, lambda t: t.phase == table_pb2.TABLE_PHASE_BETWEEN_DEALS)
    carol = connect(address)
    carol_player = carol.register("Carol").player
    stub.ReplaceSeat(
        operator_service_pb2.ReplaceSeatRequest(
            request_id=str(uuid.uuid4()), seat=f"{table}/seats/1", player=carol_player
        ),
        metadata=operator_metadata,
    )

    transcript = io.StringIO()
    with pty_child([*PLAY, *resume[1:]], PLAY_ENV) as resumed:
        resumed.terminal.logfile_read = transcript
        resumed.terminal.expect("seat 1 is now played by Carol")
        resumed.terminal.expect("waiting for")  # deal 2: Carol, who is not here, cuts or plays
        resumed.process.send_signal(signal.SIGINT)
        resumed.terminal.expect("to resume: ")
    screen = transcript.getvalue().replace("\r\n", "\n")
    # (Before the replay, the status says whom the table waits for now: Carol.)
    replayed = screen[screen.index("seat 1: Bob sat down") :]
    history, after = replayed.split("seat 1 is now played by Carol", 1)
    deal_1 = history[history.index("== deal 1 of 2: the reveal ==") :]
    assert "Carol" not in history, history
    assert "seat 1 Bob: " in deal_1 and "you v Bob (seat 1): " in deal_1
    assert "the operator timed you out (seat 0) while you were arranging" in history
    assert "FOUL (timed out by the operator while arranging)" in " ".join(deal_1.split())
    assert "(Bob played it until deal 1)" in after.split("\n", 1)[0]

"""The results process killed for real (SIGKILL, its own OS process) at each step, and while
following the log live: after restarts, nothing is lost and nothing is counted twice."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from tournament_play import (
    Services,
    credited_deals,
    play_round_deal,
    started_tournament,
    verified_totals,
)

from sapsam.domain.tournament import TournamentPhase

RUNNER = Path(__file__).with_name("results_runner.py")
# One kill per batch of deals; "tables" is reached only when a round completes (the 3rd batch).
KILL_ORDER = ("read", "decided", "tables", "appended", "checkpointed", "committed")


def run_runner(database_url: str, *arguments: str) -> int:
    completed = subprocess.run(
        [sys.executable, str(RUNNER), database_url, *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode in (0, 3, -signal.SIGKILL), completed.stderr
    return completed.returncode


async def test_sigkill_at_each_step_then_restart(services: Services) -> None:
    tournaments, tables = services.tournaments, services.tables
    tournament_id = await started_tournament(tournaments, 4, seats=2, rounds=2, deals=3)
    batches = 0
    for _round in (1, 2):
        for deal in (1, 2, 3):
            await play_round_deal(tables, await tournaments.load(tournament_id), deal)
            step = KILL_ORDER[batches]
            assert run_runner(services.database_url, "kill-at", step) == -signal.SIGKILL, step
            assert run_runner(services.database_url, "catch-up") == 0
            batches += 1
    state = await tournaments.load(tournament_id)
    assert state.phase is TournamentPhase.COMPLETE
    counts = await credited_deals(tournaments, tournament_id)
    assert len(counts) == 12 and set(counts.values()) == {1}
    assert dict(state.totals) == await verified_totals(tables, tournaments, tournament_id)


async def test_sigkill_while_following_live(services: Services) -> None:
    tournaments, tables = services.tournaments, services.tables
    tournament_id = await started_tournament(tournaments, 4, seats=2, rounds=2, deals=2)
    command = [sys.executable, str(RUNNER), services.database_url, "follow"]
    for _round in (1, 2):
        for deal in (1, 2):
            follower = subprocess.Popen(command, stdout=subprocess.DEVNULL)
            try:
                await play_round_deal(tables, await tournaments.load(tournament_id), deal)
                # Killed at whatever point it reached: mid-batch, mid-transaction or idle.
                follower.send_signal(signal.SIGKILL)
            finally:
                follower.wait(30)
            if deal == 2:
                # The next round's tables come from the process: let a fresh one catch up.
                assert run_runner(services.database_url, "catch-up") == 0
    assert run_runner(services.database_url, "catch-up") == 0
    deadline = time.monotonic() + 60
    while (await tournaments.load(tournament_id)).phase is not TournamentPhase.COMPLETE:
        assert time.monotonic() < deadline
        assert run_runner(services.database_url, "catch-up") == 0
    counts = await credited_deals(tournaments, tournament_id)
    assert len(counts) == 8 and set(counts.values()) == {1}
    state = await tournaments.load(tournament_id)
    assert dict(state.totals) == await verified_totals(tables, tournaments, tournament_id)

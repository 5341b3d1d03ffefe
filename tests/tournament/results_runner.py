"""Runs the results process in its own OS process, for the kill tests.

    python results_runner.py DATABASE_URL catch-up        # reconcile, handle everything, exit 0
    python results_runner.py DATABASE_URL kill-at STEP     # same, but SIGKILL itself at STEP
    python results_runner.py DATABASE_URL follow           # follow the log until killed

``kill-at`` exits with status 3 if the step was never reached.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from sapsam.app.tables import TableService
from sapsam.app.tournament_results import ResultsProcess
from sapsam.app.tournaments import TournamentService
from sapsam.store.background import StopSignal
from sapsam.store.event_store import EventStore
from sapsam.store.projections import registered_projectors
from sapsam.store.table_projections import projectors as table_projectors


async def run(arguments: list[str]) -> int:
    """Run the process as asked; see the module docstring."""
    url, mode = arguments[0], arguments[1]
    kill_step = arguments[2] if mode == "kill-at" else None

    def hook(step: str) -> None:
        if step == kill_step:
            os.kill(os.getpid(), signal.SIGKILL)  # a real, unannounced death

    store = await EventStore.connect(
        url, projectors=[*table_projectors(), *registered_projectors()]
    )
    tables = TableService(store)
    process = ResultsProcess(TournamentService(store, tables), crash_hook=hook)
    if mode == "follow":
        await process.run(StopSignal(), poll_seconds=0.2)  # never set: runs until killed
        return 0
    await process.reconcile()
    await process.process_available()
    await store.close()
    return 3 if kill_step is not None else 0


def main(arguments: list[str]) -> int:
    """``run`` on an event loop of its own."""
    return asyncio.run(run(arguments))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The composition root: the one place that wires the store and the servicers into a server.

``build_services`` opens the store on an already migrated database (one pool per process),
prepares the read models, and assembles the servicers, the token lookup, the live event feed and
the deadline sweeper. ``serve_database`` is what each server process runs.
"""

from __future__ import annotations

import logging
from typing import Final

from sapsam.api.audit_servicer import AuditServicer
from sapsam.api.call_log import configure_logging
from sapsam.api.players import PlayerDirectory, PlayerServicer
from sapsam.api.server import ServerConfig, Services, serve_until_signalled
from sapsam.api.table_servicer import TableServicer
from sapsam.api.tournament_servicer import TournamentServicer
from sapsam.api.watch import EventFeed
from sapsam.store import table_projections
from sapsam.store.background import BackgroundLoop
from sapsam.store.event_store import EventStore
from sapsam.store.projections import Projector, registered_projectors
from sapsam.store.tables import TableService
from sapsam.store.tournament_results import ResultsProcess, results_follower
from sapsam.store.tournaments import TournamentService

SWEEP_SECONDS: Final = 1.0
POOL_SIZE: Final = 16

_logger = logging.getLogger("sapsam.api.bootstrap")


def _projectors() -> list[Projector]:
    # The game's read models, plus any registered elsewhere, each once.
    found: dict[str, Projector] = {}
    for projector in (*table_projections.projectors(), *registered_projectors()):
        found.setdefault(projector.name, projector)
    return list(found.values())


def deadline_sweeper(tables: TableService, interval: float = SWEEP_SECONDS) -> BackgroundLoop:
    """Issues the timeout commands of tables past a deadline, every ``interval`` seconds.

    Every server process runs one; each deadline is still acted on once, because the table
    service names the timeout's request after the table and version (see ``sweep_deadlines``).
    """
    return BackgroundLoop(
        "sapsam-deadlines", lambda should_stop: tables.sweep_deadlines(), interval, _logger
    )


def build_services(database_url: str, pool_size: int = POOL_SIZE) -> Services:
    """The servicers, token lookup and background work for one server process."""
    store = EventStore.connect(database_url, projectors=_projectors(), max_size=pool_size)
    store.prepare()
    tables = TableService(store)
    players = PlayerDirectory(store.pool)
    feed = EventFeed(database_url)
    sweeper = deadline_sweeper(tables)
    tournaments = TournamentService(store, tables)  # tournaments: service and results process
    results = results_follower(ResultsProcess(tournaments))
    feed.start()
    sweeper.start()
    results.start()

    def on_stop() -> None:
        results.stop()
        sweeper.stop()
        feed.stop()

    return Services(
        table_service=TableServicer(tables, players, store.pool, feed),
        player_service=PlayerServicer(players),
        token_lookup=players.token_for_hash,
        on_stop=on_stop,
        close=store.close,
        cut_off=store.pool.cancel_work_in_progress,
        audit_service=AuditServicer(store.pool),
        tournament_service=TournamentServicer(tournaments, players, store.pool, feed),
    )


def serve_database(config: ServerConfig, database_url: str) -> int:
    """Serve the API on ``database_url`` until SIGTERM or SIGINT; the process's exit code."""
    configure_logging()
    return serve_until_signalled(config, build_services(database_url))

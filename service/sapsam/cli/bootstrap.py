"""The composition root: the one place that wires the store and the servicers into a server.

``build_services`` opens the store on an already migrated database (one pool per process),
prepares the read models, and assembles the servicers, the token lookup, the live event feed and
the background work. ``serve_database`` is what each server process runs.

This process's first heartbeat in the serving record is written in ``Services.open``, before the
port opens (a deal dealt before it would fall in the window since the last server's beat and be
extended). The deadline sweeper starts only once the server serves (``Services.on_serving``): a
seat can act only while a server serves, so a deadline is enforced only by a process that
serves, and a deadline that fell while none did (or within ``deadline_grace_seconds`` after
serving resumed) is extended instead (``sapsam.store.serving``, ``sapsam.domain.table_deadlines``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from sapsam.api.audit_servicer import AuditServicer
from sapsam.api.call_log import configure_logging
from sapsam.api.live_feed import DEFAULT_BUFFER_EVENTS, EventFeed
from sapsam.api.metrics_endpoint import MetricsEndpoint, MetricsSources
from sapsam.api.operator_servicer import OperatorServicer
from sapsam.api.players import RETIRED_CHECK_SECONDS, PlayerDirectory, PlayerServicer
from sapsam.api.server import ServerConfig, Services, serve_until_signalled
from sapsam.api.stuck_tables_health import (
    STUCK_CHECK_SECONDS,
    StuckTablesGauge,
    stuck_tables_check,
)
from sapsam.api.table_servicer import TableServicer
from sapsam.api.tournament_servicer import TournamentServicer
from sapsam.api.transparency_servicer import TransparencyServicer
from sapsam.app.receipts import ReceiptSigner
from sapsam.app.solver_processes import DEFAULT_PROCESSES as DEFAULT_SOLVER_PROCESSES
from sapsam.app.solver_processes import SolverProcesses
from sapsam.app.tables import TableService
from sapsam.app.tournament_control import TournamentControl
from sapsam.app.tournament_pause import TableHold
from sapsam.app.tournament_results import ResultsProcess
from sapsam.app.transparency import checkpoint_signer
from sapsam.keys import ServerKeys, load_server_keys, read_witnesses
from sapsam.rules.solver import prepare as prepare_solver
from sapsam.store import table_projections
from sapsam.store.background import BackgroundLoop
from sapsam.store.event_store import EventStore
from sapsam.store.players import PlayerRecords
from sapsam.store.projections import Projector, registered_projectors
from sapsam.store.serving import BEAT_SECONDS, ServingRecord
from sapsam.store.standby_reads import DEFAULT_MAX_LAG_SECONDS, StandbyReads
from sapsam.store.transparency import (
    CHECKPOINT_SECONDS,
    PooledTransparencyReads,
    checkpointer_step,
)

SWEEP_SECONDS: Final = 1.0
POOL_SIZE: Final = 16
DEADLINE_GRACE_SECONDS: Final = 30.0
"""Serving time every seat gets after an outage before a deadline that fell in it is enforced."""
MAX_BACKGROUND_PAUSE_SECONDS: Final = 10.0
"""The longest a failing background loop waits before trying again (it backs off up to this)."""

_logger = logging.getLogger("sapsam.cli.bootstrap")


def _projectors() -> list[Projector]:
    # The game's read models, plus any registered elsewhere, each once.
    found: dict[str, Projector] = {}
    for projector in (*table_projections.projectors(), *registered_projectors()):
        found.setdefault(projector.name, projector)
    return list(found.values())


def deadline_sweeper(
    tables: TableService,
    serving: ServingRecord | None = None,
    interval: float = SWEEP_SECONDS,
    grace_seconds: float = DEADLINE_GRACE_SECONDS,
    holds: Callable[[uuid.UUID], Awaitable[TableHold]] | None = None,
) -> BackgroundLoop:
    """Issues the timeout commands of tables past a deadline, every ``interval`` seconds.

    Every server process runs one; each deadline is still acted on once, because the table
    service names the timeout's request after the table and version (see ``sweep_deadlines``).
    With a ``serving`` record it sweeps only while this process's heartbeat is current, and
    extends the deadlines that fell while no server served (or within ``grace_seconds`` after).
    One table failing is backed off on its own (``sapsam.store.table_failures``); the loop itself
    backs off only when a whole sweep fails (the database is out of reach). ``holds``: a paused
    tournament's hold on its tables (``TournamentControl.table_hold``).
    """
    grace_ms = round(grace_seconds * 1000)

    async def sweep(should_stop: object) -> None:
        if serving is None:
            await tables.sweep_deadlines(holds=holds)
        elif serving.serving:
            await tables.sweep_deadlines(
                unserved=serving.unserved_since, grace_ms=grace_ms, holds=holds
            )

    return BackgroundLoop(
        "sapsam-deadlines", sweep, interval, _logger, max_pause=MAX_BACKGROUND_PAUSE_SECONDS
    )


def retired_token_check(players: PlayerDirectory) -> BackgroundLoop:
    """Drops tokens rotated or revoked elsewhere from this process's token cache, every
    ``RETIRED_CHECK_SECONDS`` (one statement per second, whatever the calls)."""
    return BackgroundLoop(
        "sapsam-retired-tokens",
        lambda should_stop: players.forget_retired(),
        RETIRED_CHECK_SECONDS,
        _logger,
        max_pause=MAX_BACKGROUND_PAUSE_SECONDS,
    )


def results_follower(process: ResultsProcess, poll_seconds: float = 1.0) -> BackgroundLoop:
    """``process`` following the log in a background task (one per server process; the
    advisory lock lets one of them follow at a time). A failed run is logged and started again
    after ``poll_seconds``."""
    return BackgroundLoop(
        "sapsam-results",
        lambda stop: process.run(stop, poll_seconds),
        poll_seconds,
        logging.getLogger("sapsam.app.tournament_results"),
    )


def heartbeat(serving: ServingRecord) -> BackgroundLoop:
    """This process's heartbeat in the serving record, every ``BEAT_SECONDS``."""

    async def beat(should_stop: object) -> None:
        await serving.beat()

    return BackgroundLoop("sapsam-heartbeat", beat, BEAT_SECONDS, _logger)


def transparency_checkpointer(
    store: EventStore, keys: ServerKeys, interval: float = CHECKPOINT_SECONDS
) -> BackgroundLoop:
    """Signs a checkpoint of the transparency log every ``interval`` seconds while events arrive
    (one process at a time: ``sapsam.store.transparency``); off the append path."""
    return BackgroundLoop(
        "sapsam-checkpointer",
        checkpointer_step(store.pool, checkpoint_signer(keys)),
        interval,
        logging.getLogger("sapsam.store.transparency"),
        max_pause=MAX_BACKGROUND_PAUSE_SECONDS,
    )


def build_services(
    database_url: str,
    pool_size: int = POOL_SIZE,
    deadline_grace_seconds: float = DEADLINE_GRACE_SECONDS,
    watch_buffer_events: int = DEFAULT_BUFFER_EVENTS,
    server_keys: ServerKeys | None = None,
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
    sign_receipts: bool = True,
    stuck_check_seconds: float = STUCK_CHECK_SECONDS,
    metrics_listen: str | None = None,
    stuck_waiting_seconds: int | None = None,
    read_database_url: str | None = None,
    read_max_lag_seconds: float = DEFAULT_MAX_LAG_SECONDS,
    suggestion_processes: int = DEFAULT_SOLVER_PROCESSES,
    suggestions_waiting: int | None = None,
) -> Services:
    """The servicers, token lookup and background work for one server process (the pool opens
    and the event feed starts on the server's loop: ``Services.open``, ``Services.feed``). With
    ``server_keys`` the process also signs checkpoints of the transparency log every
    ``checkpoint_seconds``, serves TransparencyService and signs a receipt of every
    acknowledged command (unless ``sign_receipts`` is False); without, none of these (tools,
    shells). Every ``stuck_check_seconds`` it counts the stuck tables for the health detail
    ``sapsam.tables.stuck`` (``sapsam.api.stuck_tables_health``): those past their deadline and,
    with ``stuck_waiting_seconds``, those waiting longer than that. With ``metrics_listen`` it
    serves Prometheus metrics there (``sapsam.api.metrics_endpoint``), and its readiness at
    ``/ready``. With ``read_database_url`` (a streaming standby) the reads that may lag go there
    while it is at most ``read_max_lag_seconds`` behind (``sapsam.store.standby_reads``).
    ``GetSuggestion`` solves in ``suggestion_processes`` solver processes, at most
    ``suggestions_waiting`` suggestions at once (``sapsam.app.solver_processes``; None: twice
    the processes), stopped once the server has stopped."""
    store = EventStore.unopened(database_url, projectors=_projectors(), max_size=pool_size)
    store.prepare()
    standby = (
        StandbyReads.unopened(store, read_database_url, read_max_lag_seconds)
        if read_database_url
        else None
    )
    standby_measurer = standby.measurer() if standby else None
    receipts = ReceiptSigner(server_keys.signer) if server_keys and sign_receipts else None
    tables = TableService(store, receipts=receipts)
    tables.solvers = SolverProcesses(suggestion_processes, suggestions_waiting)
    if standby is not None:
        tables.lagging_reads = standby.store
    players = PlayerDirectory(PlayerRecords(store.pool))
    retired_tokens = retired_token_check(players)
    feed = EventFeed(database_url, buffer_limit=watch_buffer_events)
    tables.on_appended = feed.appended  # this process's appends reach its watchers unread
    tables.feed_listener = feed.listener_id  # ... so they send its watchers no wake-up
    serving = ServingRecord(store.pool)
    beats = heartbeat(serving)
    # tournaments: service (with the operator's controls) and results process
    tournaments = TournamentControl(store, tables, receipts=receipts)
    sweeper = deadline_sweeper(
        tables, serving, grace_seconds=deadline_grace_seconds, holds=tournaments.table_hold
    )
    stuck_gauge = StuckTablesGauge()
    stuck_check = stuck_tables_check(
        tables, stuck_gauge, stuck_check_seconds, stuck_waiting_seconds
    )
    results = results_follower(ResultsProcess(tournaments))
    checkpointer = (
        transparency_checkpointer(store, server_keys, checkpoint_seconds) if server_keys else None
    )
    metrics = (
        MetricsEndpoint(
            metrics_listen,
            MetricsSources(
                store.pool, stuck_gauge, checkpoints=server_keys is not None, standby=standby
            ),
            tables.clock,
        )
        if metrics_listen
        else None
    )

    async def open_store() -> None:
        if metrics is not None:
            metrics.start()  # first: a port taken stops the start before anything runs
        await asyncio.gather(store.open(), asyncio.to_thread(prepare_solver))
        if standby is not None:
            await standby.open()
        # The first beat before the port opens: a deal dealt before it would fall in the
        # window since the last server's beat and be extended by the grace (finding 6).
        await serving.beat()
        retired_tokens.start()  # before the first call caches a token
        results.start()
        if checkpointer is not None:
            checkpointer.start()

    def on_serving() -> None:
        # The heartbeat loop, then the sweeper (it judges only while this process's beat is recent).
        beats.start()
        sweeper.start()
        stuck_check.start()
        if standby_measurer is not None:
            standby_measurer.start()
        if metrics is not None:
            metrics.start_gauges()

    async def on_stop() -> None:
        loops = [retired_tokens, results, sweeper, stuck_check, beats]
        loops += [checkpointer] if checkpointer else []
        loops += [standby_measurer] if standby_measurer else []
        stopping = [loop.stop() for loop in loops]
        stopping += [metrics.stop()] if metrics else []
        await asyncio.gather(*stopping)

    return Services(
        table_service=TableServicer(tables, players, feed),
        player_service=PlayerServicer(players),
        token_lookup=players.token_for_hash,
        cached_token_lookup=players.cached_token,
        feed=feed,
        open=open_store,
        on_stop=on_stop,
        on_serving=on_serving,
        close=_both(
            tables.solvers.stop,
            store.close if standby is None else _both(standby.close, store.close),
        ),
        cut_off=store.cancel_work_in_progress,
        audit_service=AuditServicer(
            store.pool, server_keys, lagging_reads=standby.pool if standby else None
        ),
        tournament_service=TournamentServicer(
            tournaments, players, feed, lagging_reads=standby.store if standby else None
        ),
        operator_service=OperatorServicer(tables, players),
        on_health=_each(stuck_gauge.attach, *([metrics.serving.attach] if metrics else [])),
        transparency_service=(
            TransparencyServicer(PooledTransparencyReads(store.pool), server_keys)
            if server_keys
            else None
        ),
    )


def _both(
    first: Callable[[], Awaitable[object]], second: Callable[[], Awaitable[object]]
) -> Callable[[], Awaitable[object]]:
    """``first``, then ``second`` even if ``first`` failed."""

    async def run() -> None:
        try:
            await first()
        finally:
            await second()

    return run


def _each(*hooks: Callable[[Any], None]) -> Callable[[Any], None]:
    """One ``Services.on_health`` that hands the health servicer to each of ``hooks``."""

    def attach(health_servicer: Any) -> None:
        for hook in hooks:
            hook(health_servicer)

    return attach


def serve_database(
    config: ServerConfig,
    database_url: str,
    deadline_grace_seconds: float = DEADLINE_GRACE_SECONDS,
    data_dir: Path | None = None,
    transparency: bool = True,
    sign_receipts: bool = True,
    log_format: str = "json",
    metrics_listen: str | None = None,
    stuck_waiting_seconds: int | None = None,
    read_database_url: str | None = None,
    read_max_lag_seconds: float = DEFAULT_MAX_LAG_SECONDS,
) -> int:
    """Serve the API on ``database_url`` until SIGTERM or SIGINT; the process's exit code. The
    server key is read from ``data_dir`` or the environment (``sapsam.keys``): ``sapsam serve``
    made it before starting the processes. Without ``transparency`` (a benchmark's A/B) no
    checkpoint, receipt or TransparencyService; without ``sign_receipts``, no receipts.
    ``log_format``: "json" (a JSON object a line) or "text" (``sapsam serve --log-format``);
    ``metrics_listen``: where to serve Prometheus metrics (None: nowhere);
    ``stuck_waiting_seconds``: a table waiting longer than this counts as stuck in the health
    detail and the metric (``sapsam serve --waiting-longer-than``; None: off);
    ``read_database_url``: a streaming standby for the reads that may lag, used while it is at
    most ``read_max_lag_seconds`` behind (``sapsam serve --read-database-url``)."""
    configure_logging(log_format=log_format)
    keys = load_server_keys(data_dir)
    services = build_services(
        database_url,
        deadline_grace_seconds=deadline_grace_seconds,
        server_keys=(
            dataclasses.replace(keys, witnesses=read_witnesses(data_dir)) if transparency else None
        ),
        sign_receipts=sign_receipts,
        metrics_listen=metrics_listen,
        stuck_waiting_seconds=stuck_waiting_seconds,
        read_database_url=read_database_url,
        read_max_lag_seconds=read_max_lag_seconds,
        suggestion_processes=config.suggestion_processes,
        suggestions_waiting=config.suggestions_waiting,
    )
    return serve_until_signalled(config, services)

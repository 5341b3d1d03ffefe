"""The gRPC server: servicers, interceptors, health, reflection, TLS, graceful stop, workers.

The server is ``grpc.aio``: one event loop per process serves every call and every open stream
(no thread per call, none per stream). :func:`serve_until_signalled` runs one on the process's
main thread until SIGTERM or SIGINT and then stops it gracefully (health goes NOT_SERVING, live
streams are told to end, calls in flight get ``grace_seconds`` to finish).
:func:`sapsam.api.worker_processes.run_worker_processes` runs several server processes that share
one port through SO_REUSEPORT, so a machine's cores all serve (Python runs about one core per
process).
:func:`start_server` runs one on a loop thread of its own, for tests and in-process use, and
gives back a :class:`RunningServer` to stop it from any thread. With ``ServerConfig.http_listen``
(``sapsam serve --http``) the same loop also serves the services over Connect and gRPC-web for
browsers, through the same interceptor objects (``sapsam.api.connect_app``).

Interceptors run outermost first: the status sender (sends what the layers inside decided,
``sapsam.api.interception``), the call log (sees every outcome, including refused
authentication), stopping (refuses calls once the server stops, see ``sapsam.api.stopping``),
authentication, the limits per caller (``sapsam.api.limits``), then error mapping (turns
whatever a servicer raises into a status). The store below is asynchronous too (psycopg's
``AsyncConnectionPool``, opened on the server's loop by ``Services.open``): a call waiting for the
database holds no thread.

Keepalive (:data:`KEEPALIVE_OPTIONS`, docs/api.md "Keepalive"): the server pings an idle
connection every 60 s and drops it if the ping is not answered within 20 s, so a stream whose
client vanished without a word (a dead NAT entry, a pulled cable) is freed; a client may ping as
often as every 10 s, even with no call open; one that pings more often is sent GOAWAY after two
strikes (a ping flood is not served).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Final, Protocol

import grpc
from grpc import aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from sapsam.api import (
    audit_servicer,
    bench_echo,
    operator_servicer,
    tournament_servicer,
    transparency_servicer,
)
from sapsam.api.auth import AuthInterceptor, CachedTokenLookup, TokenLookup
from sapsam.api.call_log import CallLogInterceptor
from sapsam.api.collector import collect_fully_every, start_serving_collector
from sapsam.api.gc_pauses import report_pauses
from sapsam.api.interception import CallInterceptor, ErrorInterceptor, StatusSender
from sapsam.api.limits import CallerLimits, LimitsInterceptor, token_lookup_limit
from sapsam.api.stopping import StopGate, StoppingInterceptor
from sapsam.app.solver_processes import DEFAULT_PROCESSES as DEFAULT_SOLVER_PROCESSES
from sapsam_proto.v1 import (
    audit_service_pb2,
    operator_service_pb2,
    player_service_pb2,
    player_service_pb2_grpc,
    table_service_pb2,
    table_service_pb2_grpc,
    tournament_service_pb2,
    transparency_service_pb2,
)

DEFAULT_LISTEN: Final = "127.0.0.1:50051"
DEFAULT_MAX_RECEIVE_MESSAGE_BYTES: Final = 1024 * 1024
STATUS_MARGIN_SECONDS: Final = 1.0
"""After the grace period, how long calls cut off by the stop get to send their UNAVAILABLE."""
KEEPALIVE_OPTIONS: Final[tuple[tuple[str, int], ...]] = (
    ("grpc.keepalive_time_ms", 60_000),  # ping a connection after 60 s without traffic
    ("grpc.keepalive_timeout_ms", 20_000),  # and close it if the ping is not answered in 20 s
    ("grpc.keepalive_permit_without_calls", 1),  # clients may ping with no call open
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),  # at most every 10 s
    # grpc's default of 2 strikes: a client pinging faster than that is sent GOAWAY (0 would let
    # one client flood the server with pings for as long as it likes).
    ("grpc.http2.max_ping_strikes", 2),
)
"""The server's keepalive settings (documented in docs/api.md, "Keepalive")."""
PENDING_CALL_OPTIONS: Final[tuple[tuple[str, int], ...]] = (
    ("grpc.server.max_pending_requests", 20_000),
    ("grpc.server.max_pending_requests_hard_limit", 30_000),
)
"""Calls that arrived and wait for the event loop to take them. grpc's defaults (1,000 and
3,000) cancel the rest of a burst, as when thousands of watchers reconnect at once after a
restart; each waiting call costs memory only."""
TABLE_SERVICE_NAME: Final = table_service_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
PLAYER_SERVICE_NAME: Final = player_service_pb2.DESCRIPTOR.services_by_name[
    "PlayerService"
].full_name
AUDIT_SERVICE_NAME: Final = audit_service_pb2.DESCRIPTOR.services_by_name["AuditService"].full_name
OPERATOR_SERVICE_NAME: Final = operator_service_pb2.DESCRIPTOR.services_by_name[
    "OperatorService"
].full_name
TOURNAMENT_SERVICE_NAME: Final = tournament_service_pb2.DESCRIPTOR.services_by_name[
    "TournamentService"
].full_name
TRANSPARENCY_SERVICE_NAME: Final = transparency_service_pb2.DESCRIPTOR.services_by_name[
    "TransparencyService"
].full_name
SERVICE_NAMES: Final = (TABLE_SERVICE_NAME, PLAYER_SERVICE_NAME)

_logger = logging.getLogger("sapsam.api.server")


@dataclass(frozen=True)
class ServerConfig:
    """How to listen and whom to trust."""

    listen: str = DEFAULT_LISTEN
    """``host:port`` to listen on; port 0 picks a free port (see ``RunningServer.port``)."""
    tls_cert: Path | None = None
    """PEM certificate chain; with ``tls_key``, the server speaks TLS only."""
    tls_key: Path | None = None
    """PEM private key for ``tls_cert``."""
    operator_token: str | None = None
    """Bearer token of the operator (administrative calls); ``None`` disables the operator."""
    token_ttl: timedelta | None = None
    """How long a player's token works after it was issued; ``None``: until rotated or revoked."""
    reuse_port: bool = False
    """Let several processes listen on the same port (only for ``--workers``)."""
    grace_seconds: float = 5.0
    """How long calls in flight may take to finish once stopping begins."""
    drain_seconds: float = 0.0
    """On SIGTERM, how long to go on serving every call while health says NOT_SERVING, before
    stopping begins: a load balancer that checks the health (``/ready``) takes the process out
    meanwhile, so no call is refused SERVER_STOPPING (``sapsam serve --drain-seconds``)."""
    limits: CallerLimits = field(default_factory=CallerLimits)
    """Registrations per address, calls and open streams per player (``sapsam.api.limits``)."""
    max_receive_message_bytes: int = DEFAULT_MAX_RECEIVE_MESSAGE_BYTES
    """The largest request accepted; grpc answers a larger one RESOURCE_EXHAUSTED itself."""
    bench_echo: bool = False
    """Also serve the benchmarking echo RPC (``sapsam.api.bench_echo``); off in production."""
    gc_report: Path | None = None
    """A folder to log the collector's pauses in (``sapsam.api.gc_pauses``, a benchmarking aid);
    ``None``: not logged."""
    http_listen: str | None = None
    """``host:port`` to also serve the same services over Connect and gRPC-web (browsers), on
    the same loop (``sapsam.api.connect_app``, ``sapsam serve --http``); ``None``: gRPC only."""
    http_allowed_origins: tuple[str, ...] = ()
    """Origins of pages allowed to call the ``http_listen`` services from another origin (CORS,
    ``sapsam.api.cors``; ``*``: any); empty: same origin only."""
    suggestion_processes: int = DEFAULT_SOLVER_PROCESSES
    """Solver processes answering ``GetSuggestion`` per server process
    (``sapsam.app.solver_processes``, ``sapsam serve --suggestion-processes``)."""
    suggestions_waiting: int | None = None
    """Suggestions being solved or queued at once per server process, beyond which one is
    refused SUGGESTIONS_BUSY (``sapsam serve --suggestions-waiting``); None: twice
    ``suggestion_processes``."""


def _no_op() -> None:
    return None


def _no_op_health(health_servicer: Any) -> None:
    return None


async def _nothing() -> None:
    return None


class LiveFeed(Protocol):
    """What the server starts and stops on its loop: the process's event feed (the LISTEN
    connection that wakes WatchTable and WatchTournament streams, ``sapsam.api.watch``)."""

    async def start(self) -> None:
        """Start listening (on the running loop)."""

    async def stop(self) -> None:
        """Stop listening and end every stream it feeds."""


@dataclass(frozen=True)
class Services:
    """What a server serves: the servicers, and how to find a player by a token's hash."""

    table_service: table_service_pb2_grpc.TableServiceServicer
    player_service: player_service_pb2_grpc.PlayerServiceServicer
    token_lookup: TokenLookup
    open: Callable[[], Awaitable[object]] = field(default=_nothing)
    """Awaited on the server's loop before it serves: open the database pool (an asyncio pool
    belongs to the loop that opened it)."""
    on_stop: Callable[[], Awaitable[object]] = field(default=_nothing)
    """Awaited when stopping begins: stop background work."""
    close: Callable[[], Awaitable[object]] = field(default=_nothing)
    """Awaited once the server has stopped: release pools and connections."""
    on_serving: Callable[[], None] = field(default=_no_op)
    """Called once the port is open and health says SERVING: start work that must run only
    while the server serves (the deadline sweeper: deadlines are fair only if seats can act)."""
    cut_off: Callable[[], Awaitable[object]] = field(default=_nothing)
    """Called when the grace period ends with calls still in flight: cancel their database work,
    so that they answer UNAVAILABLE now rather than be cut off by grpc (CANCELLED)."""
    audit_service: Any = None  # an AuditServicer (sapsam.api.audit_servicer); None: not served
    tournament_service: Any = None  # a TournamentServicer; None: not served
    operator_service: Any = None  # an OperatorServicer; None: not served
    transparency_service: Any = None  # a TransparencyServicer; None: not served (no server key)
    cached_token_lookup: CachedTokenLookup | None = None
    """Finds a token in memory only (no I/O), so most calls authenticate without awaiting."""
    feed: LiveFeed | None = None
    """Started on the server's loop before it serves, stopped first when it stops."""
    on_health: Callable[[Any], None] = field(default=_no_op_health)
    """Given the server's health servicer before it serves: background checks that report a
    health detail of their own (``sapsam.api.stuck_tables_health``)."""


@dataclass(frozen=True)
class ServedServer:
    """A server serving on the running loop, the port it listens on, and its health service."""

    server: aio.Server
    port: int
    health: Any  # grpc_health's asyncio HealthServicer
    services: Services
    grace_seconds: float
    gate: StopGate
    http: Any = None  # the Connect server (sapsam.api.connect_app.HttpServer); None: not served

    @property
    def http_port(self) -> int | None:
        """The port the Connect server listens on, if any."""
        return None if self.http is None else int(self.http.port)

    async def stop(self) -> None:
        """Stop gracefully: refuse new calls (UNAVAILABLE) and report NOT_SERVING, end live
        streams (UNAVAILABLE), let calls in flight finish within the grace period, cancel the
        database work of any left (they answer UNAVAILABLE), then stop grpc and close."""
        self.gate.begin_stop(self.grace_seconds)
        await self.health.enter_graceful_shutdown()
        # At the cut-off, whatever still waits on the database (a call, or background work that
        # on_stop is waiting for) is cancelled, wherever the stop is by then.
        loop = asyncio.get_running_loop()
        cutting: list[asyncio.Task[object]] = []
        cutter = loop.call_later(
            self.grace_seconds, lambda: cutting.append(loop.create_task(self._cut_off()))
        )
        try:
            if self.services.feed is not None:
                await self.services.feed.stop()
            await self.services.on_stop()
            if not await self.gate.drained():
                # Calls still in flight (on the database, or waiting for a connection): answer
                # them SERVER_STOPPING now rather than let grpc cancel them (CANCELLED).
                self.gate.cut_off_unary_calls()
                # Let the cut-off calls send their UNAVAILABLE before grpc cancels what is left.
                await self.gate.drained(extra_seconds=STATUS_MARGIN_SECONDS)
        finally:
            cutter.cancel()
            # Whatever failed above, grpc still stops and the pools still close.
            try:
                if self.http is not None:
                    await self.http.stop()
                await self.server.stop(STATUS_MARGIN_SECONDS)
            finally:
                if cutting:
                    await asyncio.gather(*cutting, return_exceptions=True)
                await self.services.close()

    async def _cut_off(self) -> object:
        if self.gate.in_flight:
            _logger.warning(
                "grace period over with %d calls in flight: cancelling their database work",
                self.gate.in_flight,
            )
        return await self.services.cut_off()


def _credentials(config: ServerConfig) -> grpc.ServerCredentials | None:
    if config.tls_cert is None and config.tls_key is None:
        return None
    if config.tls_cert is None or config.tls_key is None:
        raise ValueError("TLS needs both a certificate (--tls-cert) and a key (--tls-key)")
    return grpc.ssl_server_credentials(
        ((config.tls_key.read_bytes(), config.tls_cert.read_bytes()),)
    )


def call_interceptors(
    config: ServerConfig, services: Services, gate: StopGate
) -> tuple[CallInterceptor, ...]:
    """The interceptors every call passes, outermost first; the Connect server
    (``sapsam.api.connect_app``) runs the same objects, so limits count across both."""
    return (
        StatusSender(),
        CallLogInterceptor(),
        StoppingInterceptor(gate),
        AuthInterceptor(
            services.token_lookup,
            config.operator_token,
            config.token_ttl,
            cached_lookup=services.cached_token_lookup,
            lookup_limit=token_lookup_limit(config.limits),
        ),
        LimitsInterceptor(config.limits),
        ErrorInterceptor(),
    )


async def serve(config: ServerConfig, services: Services) -> ServedServer:
    """Build, bind and start a server on the running loop; ``RuntimeError`` if the address
    cannot be bound."""
    options: Sequence[tuple[str, Any]] = (
        # Off by default so a second server on a busy port fails loudly instead of sharing it.
        ("grpc.so_reuseport", 1 if config.reuse_port else 0),
        ("grpc.max_receive_message_length", config.max_receive_message_bytes),
        *KEEPALIVE_OPTIONS,
        *PENDING_CALL_OPTIONS,
    )
    gate = StopGate()
    interceptors = call_interceptors(config, services, gate)
    server = aio.server(interceptors=interceptors, options=options)
    table_service_pb2_grpc.add_TableServiceServicer_to_server(services.table_service, server)
    player_service_pb2_grpc.add_PlayerServiceServicer_to_server(services.player_service, server)
    audit_servicer.add_audit_service(services.audit_service, server)
    tournament_servicer.add_tournament_service(services.tournament_service, server)
    operator_servicer.add_operator_service(services.operator_service, server)
    transparency_servicer.add_transparency_service(services.transparency_service, server)
    if config.bench_echo:
        bench_echo.add_echo_service(server)
    served = (
        *SERVICE_NAMES,
        *((AUDIT_SERVICE_NAME,) if services.audit_service is not None else ()),
        *((TOURNAMENT_SERVICE_NAME,) if services.tournament_service is not None else ()),
        *((OPERATOR_SERVICE_NAME,) if services.operator_service is not None else ()),
        *((TRANSPARENCY_SERVICE_NAME,) if services.transparency_service is not None else ()),
    )
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (*served, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    credentials = _credentials(config)
    try:
        if credentials is None:
            port = server.add_insecure_port(config.listen)
        else:
            port = server.add_secure_port(config.listen, credentials)
    except RuntimeError as error:
        raise RuntimeError(f"cannot listen on {config.listen}: {error}") from None
    if port == 0:
        raise RuntimeError(f"cannot listen on {config.listen}")
    await services.open()
    if services.feed is not None:
        await services.feed.start()
    await server.start()
    http = None
    if config.http_listen is not None:
        from sapsam.api import connect_app  # only a server with --http needs connectrpc

        try:
            http = await connect_app.serve_services(config, services, interceptors)
        except BaseException:
            await server.stop(None)
            raise
    for name in ("", *served):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    services.on_health(health_servicer)
    services.on_serving()
    return ServedServer(
        server, port, health_servicer, services, config.grace_seconds, gate, http=http
    )


@dataclass(frozen=True)
class RunningServer:
    """A server serving on a loop thread of its own (:func:`start_server`)."""

    served: ServedServer
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread

    @property
    def port(self) -> int:
        """The port it listens on."""
        return self.served.port

    @property
    def gate(self) -> StopGate:
        """Its stop gate (calls in flight)."""
        return self.served.gate

    @property
    def services(self) -> Services:
        """What it serves."""
        return self.served.services

    def stop(self) -> None:
        """Stop gracefully (``ServedServer.stop``), then end the loop thread. Call it once,
        from any thread but the loop's."""
        try:
            asyncio.run_coroutine_threadsafe(self.served.stop(), self.loop).result()
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join()


def start_server(config: ServerConfig, services: Services) -> RunningServer:
    """Serve on a new loop thread; raises ``RuntimeError`` if the address cannot be bound."""
    loop = asyncio.new_event_loop()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    thread = threading.Thread(target=run, name="sapsam-server-loop", daemon=True)
    thread.start()
    try:
        served = asyncio.run_coroutine_threadsafe(serve(config, services), loop).result()
    except BaseException:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        raise
    return RunningServer(served, loop, thread)


def serve_until_signalled(config: ServerConfig, services: Services) -> int:
    """Serve until SIGTERM or SIGINT, then stop gracefully. Must run in the main thread."""
    return asyncio.run(_serve_until_signalled(config, services))


async def _serve_until_signalled(config: ServerConfig, services: Services) -> int:
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stopping.set)
    background: list[asyncio.Task[None]] = []
    try:
        served = await serve(config, services)
        # Each collection stops the loop: start-up's objects frozen out of them, young ones
        # by count, full ones on a timer (sapsam.api.collector).
        start_serving_collector()
        background.append(loop.create_task(collect_fully_every()))
        if config.gc_report is not None:
            background.append(loop.create_task(report_pauses(config.gc_report)))
        scheme = "TLS" if config.tls_cert else "plaintext"
        _logger.info(
            "serving on %s (port %d, %s, pid %d)", config.listen, served.port, scheme, os.getpid()
        )
        await stopping.wait()
        if config.drain_seconds > 0:
            await _drain(served, stopping, config.drain_seconds)
        _logger.info("stopping: finishing calls in flight")
        await served.stop()
        _logger.info("stopped")
        return 0
    finally:
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(number)


async def _drain(served: ServedServer, stopping: asyncio.Event, seconds: float) -> None:
    """Say NOT_SERVING and go on serving for ``seconds`` (a second signal ends it early)."""
    _logger.info("draining: NOT_SERVING, still serving calls for %g s", seconds)
    await served.health.enter_graceful_shutdown()
    stopping.clear()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stopping.wait(), seconds)

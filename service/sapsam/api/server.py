"""The gRPC server: servicers, interceptors, health, reflection, TLS, graceful stop, workers.

:func:`build_server` assembles a server from a :class:`ServerConfig` and the :class:`Services` to
serve; :func:`serve_until_signalled` runs one until SIGTERM or SIGINT and then stops it
gracefully (health goes NOT_SERVING, live streams are told to end, calls in flight get
``grace_seconds`` to finish). :func:`run_worker_processes` runs several server processes that
share one port through SO_REUSEPORT, so a machine's cores all serve (Python runs about one core
per process).

Interceptors run outermost first: the call log (sees every outcome, including refused
authentication), stopping (refuses calls once the server stops, see ``sapsam.api.stopping``),
authentication, the limits per caller (``sapsam.api.limits``), then error mapping (turns
whatever a servicer raises into a status). The server is grpc's thread-pool server: the store
is synchronous psycopg, and one thread per call keeps each call's work, its deadline and its
context variables together.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from types import FrameType
from typing import Any, Final

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from sapsam.api import audit_servicer, bench_echo, tournament_servicer
from sapsam.api.auth import AuthInterceptor, TokenLookup
from sapsam.api.call_log import CallLogInterceptor
from sapsam.api.errors import ErrorInterceptor
from sapsam.api.limits import CallerLimits, LimitsInterceptor
from sapsam.api.stopping import StopGate, StoppingInterceptor
from sapsam_proto.v1 import (
    audit_service_pb2,
    player_service_pb2,
    player_service_pb2_grpc,
    table_service_pb2,
    table_service_pb2_grpc,
    tournament_service_pb2,
)

DEFAULT_LISTEN: Final = "127.0.0.1:50051"
DEFAULT_MAX_RECEIVE_MESSAGE_BYTES: Final = 1024 * 1024
STATUS_MARGIN_SECONDS: Final = 1.0
"""After the grace period, how long calls cut off by the stop get to send their UNAVAILABLE."""
TABLE_SERVICE_NAME: Final = table_service_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
PLAYER_SERVICE_NAME: Final = player_service_pb2.DESCRIPTOR.services_by_name[
    "PlayerService"
].full_name
AUDIT_SERVICE_NAME: Final = audit_service_pb2.DESCRIPTOR.services_by_name["AuditService"].full_name
TOURNAMENT_SERVICE_NAME: Final = tournament_service_pb2.DESCRIPTOR.services_by_name[
    "TournamentService"
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
    threads: int = 64
    """Calls served at once; each WatchTable stream holds one thread while it is open."""
    reuse_port: bool = False
    """Let several processes listen on the same port (only for ``--workers``)."""
    grace_seconds: float = 5.0
    """How long calls in flight may take to finish once stopping begins."""
    limits: CallerLimits = field(default_factory=CallerLimits)
    """Registrations per address, calls and open streams per player (``sapsam.api.limits``)."""
    max_receive_message_bytes: int = DEFAULT_MAX_RECEIVE_MESSAGE_BYTES
    """The largest request accepted; grpc answers a larger one RESOURCE_EXHAUSTED itself."""
    bench_echo: bool = False
    """Also serve the benchmarking echo RPC (``sapsam.api.bench_echo``); off in production."""


def _no_op() -> None:
    return None


@dataclass(frozen=True)
class Services:
    """What a server serves: the servicers, and how to find a player by a token's hash."""

    table_service: table_service_pb2_grpc.TableServiceServicer
    player_service: player_service_pb2_grpc.PlayerServiceServicer
    token_lookup: TokenLookup
    on_stop: Callable[[], None] = field(default=_no_op)
    """Called when stopping begins: end live WatchTable streams, stop background work."""
    close: Callable[[], None] = field(default=_no_op)
    """Called once the server has stopped: release pools and connections."""
    on_serving: Callable[[], None] = field(default=_no_op)
    """Called once the port is open and health says SERVING: start work that must run only
    while the server serves (the deadline sweeper: deadlines are fair only if seats can act)."""
    cut_off: Callable[[], object] = field(default=_no_op)
    """Called when the grace period ends with calls still in flight: cancel their database work,
    so that they answer UNAVAILABLE now rather than be cut off by grpc (CANCELLED)."""
    audit_service: Any = None  # an AuditServicer (sapsam.api.audit_servicer); None: not served
    tournament_service: Any = None  # a TournamentServicer; None: not served


@dataclass(frozen=True)
class RunningServer:
    """A started server, the port it listens on, and its health service."""

    server: grpc.Server
    port: int
    health: health.HealthServicer
    services: Services
    grace_seconds: float
    gate: StopGate = field(default_factory=StopGate)

    def stop(self) -> None:
        """Stop gracefully: refuse new calls (UNAVAILABLE) and report NOT_SERVING, end live
        streams (UNAVAILABLE), let calls in flight finish within the grace period, cancel the
        database work of any left (they answer UNAVAILABLE), then stop grpc and close."""
        self.gate.begin_stop(self.grace_seconds)
        self.health.enter_graceful_shutdown()
        # At the cut-off, whatever still waits on the database (a call, or background work that
        # on_stop is waiting for) is cancelled, wherever this thread is by then.
        cutter = threading.Timer(self.grace_seconds, self._cut_off)
        cutter.daemon = True
        cutter.start()
        try:
            self.services.on_stop()
            if not self.gate.wait_for_drain():
                # Let the cut-off calls send their UNAVAILABLE before grpc cancels what is left.
                self.gate.wait_for_drain(extra_seconds=STATUS_MARGIN_SECONDS)
        finally:
            cutter.cancel()
        self.server.stop(STATUS_MARGIN_SECONDS).wait()
        self.services.close()

    def _cut_off(self) -> None:
        if self.gate.in_flight:
            _logger.warning(
                "grace period over with %d calls in flight: cancelling their database work",
                self.gate.in_flight,
            )
        self.services.cut_off()


def _credentials(config: ServerConfig) -> grpc.ServerCredentials | None:
    if config.tls_cert is None and config.tls_key is None:
        return None
    if config.tls_cert is None or config.tls_key is None:
        raise ValueError("TLS needs both a certificate (--tls-cert) and a key (--tls-key)")
    return grpc.ssl_server_credentials(
        ((config.tls_key.read_bytes(), config.tls_cert.read_bytes()),)
    )


def start_server(config: ServerConfig, services: Services) -> RunningServer:
    """Build, bind and start a server; raises ``RuntimeError`` if the address cannot be bound."""
    from concurrent import futures

    options: Sequence[tuple[str, Any]] = (
        # Off by default so a second server on a busy port fails loudly instead of sharing it.
        ("grpc.so_reuseport", 1 if config.reuse_port else 0),
        ("grpc.max_receive_message_length", config.max_receive_message_bytes),
    )
    gate = StopGate()
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=config.threads, thread_name_prefix="sapsam-rpc"),
        interceptors=(
            CallLogInterceptor(),
            StoppingInterceptor(gate),
            AuthInterceptor(services.token_lookup, config.operator_token, config.token_ttl),
            LimitsInterceptor(config.limits),
            ErrorInterceptor(),
        ),
        options=options,
    )
    table_service_pb2_grpc.add_TableServiceServicer_to_server(services.table_service, server)
    player_service_pb2_grpc.add_PlayerServiceServicer_to_server(services.player_service, server)
    audit_servicer.add_audit_service(services.audit_service, server)
    tournament_servicer.add_tournament_service(services.tournament_service, server)
    if config.bench_echo:
        bench_echo.add_echo_service(server)
    served = (
        *SERVICE_NAMES,
        *((AUDIT_SERVICE_NAME,) if services.audit_service is not None else ()),
        *((TOURNAMENT_SERVICE_NAME,) if services.tournament_service is not None else ()),
    )
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
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
    server.start()
    for name in ("", *served):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    services.on_serving()
    return RunningServer(server, port, health_servicer, services, config.grace_seconds, gate)


def serve_until_signalled(config: ServerConfig, services: Services) -> int:
    """Serve until SIGTERM or SIGINT, then stop gracefully. Must run in the main thread."""
    stopping = threading.Event()

    def request_stop(signal_number: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {
        number: signal.signal(number, request_stop) for number in (signal.SIGTERM, signal.SIGINT)
    }
    try:
        running = start_server(config, services)
        scheme = "TLS" if config.tls_cert else "plaintext"
        _logger.info(
            "serving on %s (port %d, %s, pid %d)", config.listen, running.port, scheme, os.getpid()
        )
        stopping.wait()
        _logger.info("stopping: finishing calls in flight")
        running.stop()
        _logger.info("stopped")
        return 0
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def run_worker_processes(count: int, target: Callable[..., int], arguments: tuple[Any, ...]) -> int:
    """Run ``target(*arguments)`` in ``count`` fresh processes until they exit; forward signals.

    The processes are spawned (not forked: grpc must not be initialised before a fork). On SIGTERM
    or SIGINT each child gets SIGTERM and stops gracefully. If one child exits on its own, the
    others are stopped too; the result is the first non-zero exit code, or 0. A child that our
    SIGTERM ended before it could handle it (still starting up: nothing in flight) stopped as
    asked, not in error; one killed by anyone else's signal is an error. Should this process be
    killed outright, each child notices and stops gracefully on its own.
    """
    context = multiprocessing.get_context("spawn")
    children = [
        context.Process(target=_run_child, args=(target, arguments), name=f"sapsam-worker-{index}")
        for index in range(count)
    ]
    stopping = threading.Event()

    def request_stop(signal_number: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {
        number: signal.signal(number, request_stop) for number in (signal.SIGTERM, signal.SIGINT)
    }
    try:
        for child in children:
            child.start()
        while not stopping.is_set() and all(child.is_alive() for child in children):
            stopping.wait(0.2)
        terminated: set[int] = set()
        for index, child in enumerate(children):
            if child.is_alive() and child.pid is not None:
                child.terminate()  # SIGTERM: the child stops gracefully
                terminated.add(index)
        for child in children:
            child.join()
        codes = [
            0
            if index in terminated and child.exitcode == -signal.SIGTERM
            else (child.exitcode or 0)
            for index, child in enumerate(children)
        ]
        return next((code for code in codes if code != 0), 0)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _run_child(target: Callable[..., int], arguments: tuple[Any, ...]) -> None:
    _stop_when_orphaned()
    raise SystemExit(target(*arguments))


def _stop_when_orphaned() -> None:
    """Send this worker SIGTERM once its supervisor is gone, however it went: a graceful stop
    once it serves (before that, SIGTERM's default ends it, with nothing in flight).

    A supervisor killed outright (SIGKILL, the OOM killer) cannot stop its workers; left running,
    they would keep the port (shared through SO_REUSEPORT) and take connections meant for the next
    ``sapsam serve``. The parent's sentinel becomes ready when the parent exits, with no race.
    """
    parent = multiprocessing.parent_process()
    if parent is None:  # pragma: no cover - only called in spawned workers
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="sapsam-orphan-watch", daemon=True).start()

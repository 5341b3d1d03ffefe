"""The HTTP endpoint of ``sapsam serve --metrics-listen HOST:PORT``: Prometheus metrics
(``GET /metrics``) and the server's readiness and liveness for HTTP-only health checkers
(``GET /ready``, ``GET /live``).

``/ready`` and ``/live`` answer what the gRPC health service answers, asked on the server's own
event loop (``ServingStatus``): ``/ready`` is the status of ``sapsam.v1.TableService`` (the
name the Kubernetes readiness probe asks for; NOT_SERVING from the first moment of a graceful
stop), ``/live`` that of ``""``. 200 with ``SERVING`` while it is SERVING; 503 with the status
otherwise, with ``STARTING`` before the server serves, and with ``NOT_ANSWERING`` when the loop
does not answer within ``STATUS_TIMEOUT_SECONDS`` (a stuck process is neither ready nor live).
A load balancer that cannot send a gRPC health check (HAProxy 2.6 cannot send its request body)
checks ``/ready`` instead (cluster/haproxy.py, docs/operations.md "Readiness over HTTP").

What each process exports (docs/operations.md, "Metrics", lists them with their meaning; the
deploy test holds deploy/monitoring/ to ``METRIC_NAMES``):

- per call, from ``sapsam.api.call_metrics``: ``sapsam_rpc_calls_total`` and the histogram
  ``sapsam_rpc_duration_seconds`` by method and status; ``sapsam_open_streams`` by method;
- from this process: the pool's connections (``sapsam_pool_connections`` by state, its
  maximum, the calls waiting for one), ``sapsam_database_up`` (0 while the pool cannot connect
  or the last reading of the gauges below failed), ``sapsam_appends_total`` and
  ``sapsam_events_appended_total`` (``sapsam.store.append_count``; their rate is appends per
  second), ``sapsam_stuck_tables`` (the health detail's count, ``sapsam.api.stuck_tables_health``);
- read from the database every ``GAUGE_SECONDS`` (``sapsam.store.metrics_reads``), the same
  from every replica (alert on their ``max``): ``sapsam_deadlines_pending``,
  ``sapsam_deadlines_overdue``, ``sapsam_background_failing_tables`` by process,
  ``sapsam_log_position``, ``sapsam_checkpoint_age_seconds`` and ``sapsam_checkpoint_lag_events``;
- with ``--read-database-url`` (``sapsam.store.standby_reads``): ``sapsam_standby_lag_seconds``
  and ``sapsam_lagging_reads_total`` by the database that served them.

Nothing is computed per call here: a scrape (on prometheus_client's HTTP thread) reads the
plain counters the loop keeps and the last database reading. prometheus_client is imported only
when the endpoint starts.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

from grpc_health.v1 import health_pb2

from sapsam.api.call_metrics import BUCKET_BOUNDS, CALLS, STREAMS, CallMetrics, OpenStreams
from sapsam.api.stuck_tables_health import StuckTablesGauge
from sapsam.app.store_interface import DEADLINES_PROCESS, RESULTS_PROCESS
from sapsam.store.append_count import APPENDED, AppendCount
from sapsam.store.background import BackgroundLoop
from sapsam.store.event_store import ServicePool
from sapsam.store.metrics_reads import DatabaseGauges, read_database_gauges
from sapsam.store.standby_reads import StandbyReads

GAUGE_SECONDS: Final = 10.0
READY_PATH: Final = "/ready"
LIVE_PATH: Final = "/live"
READY_SERVICE: Final = "sapsam.v1.TableService"
"""The health service name ``/ready`` reports (the readiness probe's: deploy/kubernetes)."""
STATUS_TIMEOUT_SECONDS: Final = 2.0
"""How long ``/ready`` and ``/live`` wait for the server's loop to answer."""
METRIC_NAMES: Final = (
    "sapsam_rpc_calls_total",
    "sapsam_rpc_duration_seconds",
    "sapsam_open_streams",
    "sapsam_pool_connections",
    "sapsam_pool_max_connections",
    "sapsam_pool_requests_waiting",
    "sapsam_database_up",
    "sapsam_appends_total",
    "sapsam_events_appended_total",
    "sapsam_stuck_tables",
    "sapsam_deadlines_pending",
    "sapsam_deadlines_overdue",
    "sapsam_background_failing_tables",
    "sapsam_log_position",
    "sapsam_checkpoint_age_seconds",
    "sapsam_checkpoint_lag_events",
    "sapsam_standby_lag_seconds",
    "sapsam_lagging_reads_total",
)
"""Every metric name the endpoint exports (a histogram's series add _bucket, _sum, _count)."""
STANDBY_METRIC_NAMES: Final = ("sapsam_standby_lag_seconds", "sapsam_lagging_reads_total")
"""Those exported only by a server with ``--read-database-url``."""

_logger = logging.getLogger("sapsam.api.metrics")


def parse_listen(listen: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:9464`` for IPv6) as (host, port); ``ValueError`` if malformed."""
    host, separator, port = listen.rpartition(":")
    if not separator or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--metrics-listen wants HOST:PORT, not {listen!r}")
    return host.removeprefix("[").removesuffix("]"), int(port)


@dataclass
class MetricsSources:
    """Where a scrape reads from; ``database`` is replaced by each reading."""

    pool: ServicePool
    stuck: StuckTablesGauge
    calls: CallMetrics = CALLS
    streams: OpenStreams = STREAMS
    appended: AppendCount = APPENDED
    database: DatabaseGauges | None = None
    database_read_failed: bool = False
    checkpoints: bool = True
    standby: StandbyReads | None = None
    """With ``--read-database-url``: where the reads that may lag went, and the lag."""


class SapsamCollector:
    """A prometheus_client collector over ``MetricsSources``."""

    def __init__(self, sources: MetricsSources) -> None:
        self.sources = sources

    def collect(self) -> Iterator[Any]:
        """The families, as of now."""
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        sources = self.sources
        calls = CounterMetricFamily(
            "sapsam_rpc_calls",
            "Calls ended, by method and gRPC status",
            labels=("method", "status"),
        )
        durations = HistogramMetricFamily(
            "sapsam_rpc_duration_seconds",
            "Call latency in seconds, by method and gRPC status",
            labels=("method", "status"),
        )
        bounds = [*(f"{bound:g}" for bound in BUCKET_BOUNDS), "+Inf"]
        for method, status, cumulative, total in sources.calls.snapshot():
            calls.add_metric((method, status), cumulative[-1])
            durations.add_metric(
                (method, status), list(zip(bounds, cumulative, strict=True)), total
            )
        yield calls
        yield durations
        streams = GaugeMetricFamily(
            "sapsam_open_streams", "Server streams open now, by method", labels=("method",)
        )
        for method, count in list(sources.streams.by_method.items()):
            streams.add_metric((method,), count)
        yield streams
        yield from self._pool(GaugeMetricFamily)
        yield CounterMetricFamily(
            "sapsam_appends", "Appends this process wrote", value=sources.appended.appends
        )
        yield CounterMetricFamily(
            "sapsam_events_appended", "Events this process appended", value=sources.appended.events
        )
        if sources.stuck.count is not None:
            yield GaugeMetricFamily(
                "sapsam_stuck_tables",
                "Tables past their deadline by over a minute with seats awaited",
                value=sources.stuck.count,
            )
        yield from self._database(GaugeMetricFamily)
        yield from self._standby(GaugeMetricFamily, CounterMetricFamily)

    def _standby(self, gauge: Callable[..., Any], counter: Callable[..., Any]) -> Iterator[Any]:
        standby = self.sources.standby
        if standby is None:
            return
        lag = standby.lag_seconds()
        if lag is not None:
            yield gauge(
                "sapsam_standby_lag_seconds",
                "How far behind the primary the standby is at most, as last measured",
                value=lag,
            )
        reads = counter(
            "sapsam_lagging_reads",
            "Reads that may lag, by the database that served them",
            labels=("database",),
        )
        reads.add_metric(("standby",), standby.reads_on_standby)
        reads.add_metric(("primary",), standby.reads_on_primary)
        yield reads

    def _pool(self, gauge: Callable[..., Any]) -> Iterator[Any]:
        pool = self.sources.pool
        stats = pool.get_stats()
        size, idle = stats.get("pool_size", 0), stats.get("pool_available", 0)
        connections = gauge(
            "sapsam_pool_connections", "The database pool's connections", labels=("state",)
        )
        connections.add_metric(("idle",), idle)
        connections.add_metric(("in_use",), max(size - idle, 0))
        yield connections
        yield gauge("sapsam_pool_max_connections", "The pool's maximum", value=pool.max_size)
        yield gauge(
            "sapsam_pool_requests_waiting",
            "Calls waiting for a pooled connection",
            value=stats.get("requests_waiting", 0),
        )
        down = pool.unreachable or self.sources.database_read_failed
        yield gauge("sapsam_database_up", "1 while the database answers", value=0 if down else 1)

    def _database(self, gauge: Callable[..., Any]) -> Iterator[Any]:
        reading = self.sources.database
        if reading is None:
            return
        yield gauge(
            "sapsam_deadlines_pending",
            "Tables waiting for seats under a deadline not yet passed",
            value=reading.deadlines_pending,
        )
        yield gauge(
            "sapsam_deadlines_overdue",
            "Tables waiting for seats past their deadline",
            value=reading.deadlines_overdue,
        )
        failing = gauge(
            "sapsam_background_failing_tables",
            "Tables background work keeps failing on, by process",
            labels=("process",),
        )
        # Every process named, at 0 when none fails: an absent series alerts no one.
        counts = {DEADLINES_PROCESS: 0, RESULTS_PROCESS: 0, **dict(reading.failing_tables)}
        for process, count in sorted(counts.items()):
            failing.add_metric((process,), count)
        yield failing
        yield gauge(
            "sapsam_log_position", "The last position drawn in the log", value=reading.log_position
        )
        if reading.checkpoint_age_seconds is not None:
            yield gauge(
                "sapsam_checkpoint_age_seconds",
                "Seconds since the newest signed checkpoint",
                value=reading.checkpoint_age_seconds,
            )
        if reading.checkpoint_lag_events is not None:
            yield gauge(
                "sapsam_checkpoint_lag_events",
                "Events appended after the newest signed checkpoint",
                value=reading.checkpoint_lag_events,
            )


class _NoSuchServiceError(LookupError):
    pass


class _CheckContext:
    """The one thing the health servicer's ``Check`` asks of a context: to abort when it does
    not know the service."""

    async def abort(self, code: object, details: str = "") -> None:
        raise _NoSuchServiceError(str(code))


@dataclass
class ServingStatus:
    """The gRPC health service's answer, for the HTTP thread: ``Services.on_health`` attaches
    the server's health servicer (on the server's loop)."""

    health: Any = None  # grpc_health's asyncio HealthServicer
    loop: asyncio.AbstractEventLoop | None = None

    def attach(self, health_servicer: Any) -> None:
        """The server's health servicer; called on the server's loop."""
        self.loop = asyncio.get_running_loop()
        self.health = health_servicer

    def status(self, service: str, timeout: float = STATUS_TIMEOUT_SECONDS) -> str:
        """The health status's name (``SERVING``, ``NOT_SERVING``, ...) of ``service``, as
        ``Check`` answers it on the server's loop; ``STARTING`` before the server serves,
        ``SERVICE_UNKNOWN``, ``NOT_ANSWERING`` if the loop does not answer within ``timeout``,
        ``STOPPED`` once the loop is gone."""
        health, loop = self.health, self.loop
        if health is None or loop is None:
            return "STARTING"
        if loop.is_closed():
            return "STOPPED"
        request = health_pb2.HealthCheckRequest(service=service)
        check = health.Check(request, _CheckContext())
        try:
            future = asyncio.run_coroutine_threadsafe(check, loop)
        except RuntimeError:  # the loop closed meanwhile
            check.close()
            return "STOPPED"
        try:
            answer = future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return "NOT_ANSWERING"
        except _NoSuchServiceError:
            return "SERVICE_UNKNOWN"
        except concurrent.futures.CancelledError:  # the loop stopped with the check pending
            return "STOPPED"
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status))


class _Handler(BaseHTTPRequestHandler):
    """``GET /metrics``, ``/ready``, ``/live``; anything else 404."""

    server: _EndpointServer

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            from prometheus_client.exposition import choose_encoder

            encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
            self._answer(200, encoder(self.server.registry), content_type)
        elif path in (READY_PATH, LIVE_PATH):
            name = READY_SERVICE if path == READY_PATH else ""
            status = self.server.serving.status(name)
            code = 200 if status == "SERVING" else 503
            self._answer(code, f"{status}\n".encode(), "text/plain; charset=utf-8")
        else:
            self._answer(404, b"not found: /metrics, /ready or /live\n", "text/plain")

    def _answer(self, code: int, body: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None  # scrapes and probes are not worth a log line each


class _EndpointServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], registry: Any, serving: ServingStatus) -> None:
        self.registry = registry
        self.serving = serving
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)


@dataclass
class MetricsEndpoint:
    """The HTTP endpoint and the loop that reads the database gauges."""

    listen: str
    sources: MetricsSources
    clock: Callable[[], int]
    """Milliseconds since the epoch (the table service's clock)."""
    interval: float = GAUGE_SECONDS
    serving: ServingStatus = field(default_factory=ServingStatus)
    """The gRPC health status ``/ready`` and ``/live`` report (attach the health servicer)."""
    _server: Any = field(default=None, init=False)
    _loop: BackgroundLoop | None = field(default=None, init=False)

    @property
    def port(self) -> int:
        """The port it listens on (after ``start``)."""
        return int(self._server.server_address[1])

    def start(self) -> None:
        """Listen; ``RuntimeError`` when the address cannot be bound."""
        from prometheus_client.registry import CollectorRegistry

        host, port = parse_listen(self.listen)
        registry = CollectorRegistry(auto_describe=False)
        registry.register(SapsamCollector(self.sources))
        try:
            self._server = _EndpointServer((host, port), registry, self.serving)
        except OSError as error:
            raise RuntimeError(f"cannot serve metrics on {self.listen}: {error}") from None
        threading.Thread(
            target=self._server.serve_forever, name="sapsam-metrics-http", daemon=True
        ).start()
        _logger.info("metrics on http://%s/metrics, readiness on %s", self.listen, READY_PATH)

    def start_gauges(self) -> None:
        """Read the database gauges now and every ``interval`` seconds (on the running loop)."""

        async def read(should_stop: object) -> None:
            try:
                self.sources.database = await read_database_gauges(
                    self.sources.pool, self.clock(), self.sources.checkpoints
                )
            except BaseException:
                self.sources.database_read_failed = True
                raise
            self.sources.database_read_failed = False

        self._loop = BackgroundLoop("sapsam-metrics", read, self.interval, _logger)
        self._loop.start()

    async def stop(self) -> None:
        """Stop the loop and the HTTP server."""
        if self._loop is not None:
            await self._loop.stop()
        if self._server is not None:
            await asyncio.to_thread(self._server.shutdown)  # waits for its poll (0.5 s)
            self._server.server_close()

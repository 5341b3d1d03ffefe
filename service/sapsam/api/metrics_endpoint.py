"""The Prometheus endpoint of ``sapsam serve --metrics-listen HOST:PORT`` (``GET /metrics``).

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
  ``sapsam_log_position``, ``sapsam_checkpoint_age_seconds`` and ``sapsam_checkpoint_lag_events``.

Nothing is computed per call here: a scrape (on prometheus_client's HTTP thread) reads the
plain counters the loop keeps and the last database reading. prometheus_client is imported only
when the endpoint starts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from sapsam.api.call_metrics import BUCKET_BOUNDS, CALLS, STREAMS, CallMetrics, OpenStreams
from sapsam.api.stuck_tables_health import StuckTablesGauge
from sapsam.app.store_interface import DEADLINES_PROCESS, RESULTS_PROCESS
from sapsam.store.append_count import APPENDED, AppendCount
from sapsam.store.background import BackgroundLoop
from sapsam.store.event_store import ServicePool
from sapsam.store.metrics_reads import DatabaseGauges, read_database_gauges

GAUGE_SECONDS: Final = 10.0
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
)
"""Every metric name the endpoint exports (a histogram's series add _bucket, _sum, _count)."""

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


@dataclass
class MetricsEndpoint:
    """The HTTP endpoint and the loop that reads the database gauges."""

    listen: str
    sources: MetricsSources
    clock: Callable[[], int]
    """Milliseconds since the epoch (the table service's clock)."""
    interval: float = GAUGE_SECONDS
    _server: Any = field(default=None, init=False)
    _loop: BackgroundLoop | None = field(default=None, init=False)

    @property
    def port(self) -> int:
        """The port it listens on (after ``start``)."""
        return int(self._server.server_address[1])

    def start(self) -> None:
        """Listen; ``RuntimeError`` when the address cannot be bound."""
        from prometheus_client import start_http_server
        from prometheus_client.registry import CollectorRegistry

        host, port = parse_listen(self.listen)
        registry = CollectorRegistry(auto_describe=False)
        registry.register(SapsamCollector(self.sources))
        try:
            self._server, _ = start_http_server(port, host, registry)
        except OSError as error:
            raise RuntimeError(f"cannot serve metrics on {self.listen}: {error}") from None
        _logger.info("metrics on http://%s/metrics", self.listen)

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

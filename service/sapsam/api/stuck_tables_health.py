"""The stuck tables as a health detail and a metric: a background check every server runs.

Every ``STUCK_CHECK_SECONDS`` the check counts the tables past their deadline by more than
``STUCK_AFTER_SECONDS`` with seats still awaited and, when the server is given a threshold
(``sapsam serve --waiting-longer-than SECONDS``), the tables whose last event is older than it,
whatever they wait for (a table without deadlines waiting for an absent player, a table nobody
starts the next deal of): the same as ``GetStuckTables`` with ``waiting_longer_than`` and
``sapsam tables stuck --waiting-longer-than`` (``sapsam.app.operator_queries``; a paused
tournament's tables are held, not stuck, and left out). Then it

- sets the gRPC health of the service name ``STUCK_HEALTH_NAME``: SERVING while no table is
  stuck, NOT_SERVING while some are (``grpc_health_probe -service sapsam.tables.stuck``);
  the server's own health (``""`` and the API services) is not touched: a stuck table is an
  operator's alert, not a reason to stop routing calls to this process;
- keeps the count as a gauge (``StuckTablesGauge.count``, with when it was taken), and logs it
  as a warning with the fields ``stuck_tables`` and ``tables`` whenever it is not zero (a log
  shipper turns the line into a metric; ``sapsam serve --metrics-listen`` serves the count as
  the gauge ``sapsam_stuck_tables``: ``sapsam.api.metrics_endpoint``).

The slack keeps a table the sweeper is about to time out (it runs every second) out of the
count.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final

from grpc_health.v1 import health_pb2

from sapsam.app.tables import TableService
from sapsam.store.background import BackgroundLoop

STUCK_HEALTH_NAME: Final = "sapsam.tables.stuck"
STUCK_CHECK_SECONDS: Final = 15.0
STUCK_AFTER_SECONDS: Final = 60
"""How long past its deadline a table counts as stuck (the sweeper acts within a second)."""

_logger = logging.getLogger("sapsam.api.stuck_tables")


@dataclass
class StuckTablesGauge:
    """The latest count (``None`` before the first check) and the health servicer to tell."""

    count: int | None = None
    checked_ms: int | None = None
    health: Any = None  # grpc_health's asyncio HealthServicer, attached when the server starts

    def attach(self, health_servicer: Any) -> None:
        """The server's health servicer (``Services.on_health``)."""
        self.health = health_servicer


def stuck_tables_check(
    tables: TableService,
    gauge: StuckTablesGauge,
    interval: float = STUCK_CHECK_SECONDS,
    waiting_longer_than_seconds: int | None = None,
) -> BackgroundLoop:
    """The background loop that keeps ``gauge`` and the health detail current; with
    ``waiting_longer_than_seconds``, a table waiting longer than that counts as stuck too."""
    waiting_ms = None if waiting_longer_than_seconds is None else waiting_longer_than_seconds * 1000
    waiting = (
        ""
        if waiting_longer_than_seconds is None
        else f", or waiting longer than {waiting_longer_than_seconds} s"
    )

    async def check(should_stop: object) -> None:
        now = tables.clock()
        # The held tables (a paused tournament's) wait on purpose: never an alert. The slack is
        # for deadlines only (the sweeper acts on them within a second).
        found = (
            await tables.stuck_tables(
                waiting_ms, at_ms=now, deadline_slack_ms=STUCK_AFTER_SECONDS * 1000
            )
        ).stuck
        gauge.count, gauge.checked_ms = len(found), now
        if found:
            _logger.warning(
                "stuck tables: %d past their deadline by more than %d s%s",
                len(found),
                STUCK_AFTER_SECONDS,
                waiting,
                extra={
                    "stuck_tables": len(found),
                    "tables": [str(table.table_id) for table in found[:20]],
                },
            )
        if gauge.health is not None:
            status = (
                health_pb2.HealthCheckResponse.NOT_SERVING
                if found
                else health_pb2.HealthCheckResponse.SERVING
            )
            await gauge.health.set(STUCK_HEALTH_NAME, status)

    return BackgroundLoop("sapsam-stuck-tables", check, interval, _logger)

"""The one way the API tests start the full service in process, on 127.0.0.1:<free port>."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import timedelta

import grpc
from api_client import OPERATOR_TOKEN, Api

from sapsam.api.live_feed import DEFAULT_BUFFER_EVENTS
from sapsam.api.server import RunningServer, ServerConfig, start_server
from sapsam.cli.bootstrap import build_services


@contextlib.contextmanager
def serving(
    database_url: str,
    *,
    pool_size: int = 8,
    grace_seconds: float = 2,
    token_ttl: timedelta | None = None,
    watch_buffer_events: int = DEFAULT_BUFFER_EVENTS,
) -> Iterator[RunningServer]:
    """The full service (store, auth, errors, sweeper) on ``database_url``, stopped on leaving;
    each WatchTable may have ``watch_buffer_events`` events waiting (``sapsam.api.watch``)."""
    running = start_server(
        ServerConfig(
            listen="127.0.0.1:0",
            operator_token=OPERATOR_TOKEN,
            token_ttl=token_ttl,
            grace_seconds=grace_seconds,
        ),
        build_services(database_url, pool_size=pool_size, watch_buffer_events=watch_buffer_events),
    )
    try:
        yield running
    finally:
        running.stop()


@contextlib.contextmanager
def serving_api(
    database_url: str,
    *,
    server_database_url: str | None = None,
    pool_size: int = 4,
    grace_seconds: float = 1,
    token_ttl: timedelta | None = None,
) -> Iterator[Api]:
    """``Api`` on a channel to ``serving``; the server may connect as another role
    (``server_database_url``) while the tests read the log on ``database_url``."""
    with (
        serving(
            server_database_url or database_url,
            pool_size=pool_size,
            grace_seconds=grace_seconds,
            token_ttl=token_ttl,
        ) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        yield Api(channel, database_url)

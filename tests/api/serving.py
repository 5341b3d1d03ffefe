"""The one way the API tests start the full service in process, on 127.0.0.1:<free port>."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import TypeVar, cast

import grpc
from api_client import OPERATOR_TOKEN, Api
from scenarios import World

from sapsam.api.live_feed import DEFAULT_BUFFER_EVENTS
from sapsam.api.server import RunningServer, ServerConfig, Services, start_server
from sapsam.api.table_servicer import TableServicer
from sapsam.app.tables import TableService
from sapsam.cli.bootstrap import build_services
from sapsam.keys import ServerKeys
from sapsam.log.signed_note import NoteSigner

TEST_SERVER_KEYS = ServerKeys(NoteSigner.from_seed("sapsam/test", bytes(32)), (), "tests")
"""A fixed, public key: the transparency log of a test server is signed with it."""

TablesT = TypeVar("TablesT", bound=TableService)


@contextlib.contextmanager
def serving(
    database_url: str,
    *,
    pool_size: int = 8,
    grace_seconds: float = 2,
    token_ttl: timedelta | None = None,
    watch_buffer_events: int = DEFAULT_BUFFER_EVENTS,
    services: Services | None = None,
    http_listen: str | None = None,
    http_allowed_origins: tuple[str, ...] = (),
) -> Iterator[RunningServer]:
    """The full service (store, auth, errors, sweeper) on ``database_url``, stopped on leaving;
    each WatchTable may have ``watch_buffer_events`` events waiting (``sapsam.api.watch``).
    ``services`` replaces the ones built here (then ``pool_size`` and the buffer are theirs);
    with ``http_listen`` it serves Connect there too (``RunningServer.served.http_port``)."""
    if services is None:
        services = build_services(
            database_url,
            pool_size=pool_size,
            watch_buffer_events=watch_buffer_events,
            server_keys=TEST_SERVER_KEYS,
            checkpoint_seconds=0.2,
        )
    running = start_server(
        ServerConfig(
            listen="127.0.0.1:0",
            operator_token=OPERATOR_TOKEN,
            token_ttl=token_ttl,
            grace_seconds=grace_seconds,
            http_listen=http_listen,
            http_allowed_origins=http_allowed_origins,
        ),
        services,
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


@contextlib.contextmanager
def serving_tables_through(
    database_url: str, wrap: Callable[[TableService], TablesT]
) -> Iterator[tuple[World, TablesT]]:
    """``serving`` whose table servicer reads through ``wrap(its TableService)`` (a test's
    counting or pausing subclass of the real service), with a ``World`` on a channel to it."""
    services = build_services(database_url)
    servicer = cast(TableServicer, services.table_service)
    tables = wrap(servicer._tables)
    services = dataclasses.replace(
        services, table_service=TableServicer(tables, servicer._players, servicer._feed)
    )
    with (
        serving(database_url, grace_seconds=1, services=services) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        yield World(channel, database_url), tables

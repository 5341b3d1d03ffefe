"""Tournament test fixtures: the table and tournament services over a fresh database."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tournament_play import OPERATOR_TOKEN, Services

from sapsam.api.server import RunningServer, ServerConfig, start_server
from sapsam.app.tables import TableService
from sapsam.app.tournament_control import TournamentControl
from sapsam.cli.bootstrap import build_services
from sapsam.store.event_store import EventStore
from sapsam.store.projections import registered_projectors
from sapsam.store.table_projections import projectors as table_projectors


@pytest.fixture
async def services(database_url: str) -> AsyncIterator[Services]:
    """The store with every read model, a table service and a tournament service."""
    store = await EventStore.connect(
        database_url, projectors=[*table_projectors(), *registered_projectors()]
    )
    store.prepare()
    tables = TableService(store)
    try:
        yield Services(store, tables, TournamentControl(store, tables), database_url)
    finally:
        await store.close()


@pytest.fixture
async def server(database_url: str) -> AsyncIterator[RunningServer]:
    """The full service (tournaments included) on 127.0.0.1:<free port>.

    The pool is sized for twelve bots: a table command holds two pooled connections at once
    (``TableService._execute`` reads on one and appends through the store on another), so a
    pool smaller than twice the concurrent commands can starve.
    """
    running = start_server(
        ServerConfig(listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=2),
        build_services(database_url, pool_size=40),
    )
    yield running
    running.stop()

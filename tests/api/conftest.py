"""API test fixtures: a real server on a real socket over a fresh PostgreSQL database.

``server`` and ``api`` are per test; ``module_database_url``, ``module_running_server`` and
``world`` start the service once for a module on its own fresh database (one server per module
keeps the tests of a table of cases fast) and wrap it in ``scenarios.World``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from api_client import Api
from scenarios import World
from serving import serving

from sapsam.api.server import RunningServer


@pytest.fixture
def server(database_url: str) -> Iterator[RunningServer]:
    """The full service (store-backed servicers, auth, errors) on 127.0.0.1:<free port>."""
    with serving(database_url) as running:
        yield running


@pytest.fixture
def api(server: RunningServer, database_url: str) -> Iterator[Api]:
    """Generated stubs on a channel to ``server``, recording every response."""
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield Api(channel, database_url)


@pytest.fixture(scope="module")
def module_database_url(database_factory: Any) -> Iterator[str]:
    """A fresh migrated database for the whole module, dropped after it."""
    name, url = database_factory.create(migrated=True)
    yield url
    database_factory.drop(name)


@pytest.fixture(scope="module")
def module_running_server(module_database_url: str) -> Iterator[RunningServer]:
    """The full service on ``module_database_url``, once for the module."""
    with serving(module_database_url) as running:
        yield running


@pytest.fixture(scope="module")
def world(module_running_server: RunningServer, module_database_url: str) -> Iterator[World]:
    """``scenarios.World`` on a channel to the module's server."""
    with grpc.insecure_channel(f"127.0.0.1:{module_running_server.port}") as channel:
        yield World(channel, module_database_url)

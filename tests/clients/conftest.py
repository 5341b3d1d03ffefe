"""Client test fixtures: a real server on a real socket over a fresh PostgreSQL database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sapsam.api.server import RunningServer, ServerConfig, start_server
from sapsam.cli.bootstrap import build_services

OPERATOR_TOKEN = "operator-token-for-client-tests-0123456789"


@pytest.fixture(autouse=True)
def user_state_folder(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bots run in these tests keep their state files in a folder of the test's own, never in
    the user's (``sapsam_client.bot_state``)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture
def server(database_url: str) -> Iterator[RunningServer]:
    """The full service (store-backed servicers, auth, errors) on 127.0.0.1:<free port>."""
    running = start_server(
        ServerConfig(listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=2),
        build_services(database_url, pool_size=8),
    )
    yield running
    running.stop()


@pytest.fixture
def address(server: RunningServer) -> str:
    """``host:port`` of the running server."""
    return f"127.0.0.1:{server.port}"


@pytest.fixture
def operator_metadata() -> tuple[tuple[str, str], ...]:
    """The metadata of an operator's call to ``server`` (its operator token)."""
    return (("authorization", f"Bearer {OPERATOR_TOKEN}"),)

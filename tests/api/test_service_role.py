"""The server runs as the least-privileged role of docs/store.md: it starts without migrating,
plays a whole series, and the log it wrote is intact."""

from __future__ import annotations

import logging
import time

import grpc
import psycopg
import pytest
from api_client import OPERATOR_TOKEN, Api
from database_roles import new_role
from serving import TEST_SERVER_KEYS

from sapsam.api.server import ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam.log.chain import verify_stream_chain
from sapsam.rules.presets import preset
from sapsam.store.embedded import open_database
from sapsam.store.offline_reads import read_stream
from sapsam.store.schema import grant_service_role


def test_the_server_plays_a_series_as_the_service_role(
    database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with new_role(database_url, grant_service_role) as (role, service_url):
        _play_a_series_as(role, service_url, database_url, caplog)


def _play_a_series_as(
    role: str, service_url: str, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Every connection of the server acts as the role (as if it had logged in as it).
    with psycopg.connect(service_url) as probe:
        assert probe.execute("SELECT current_user").fetchone() == (role,)

    caplog.set_level(logging.WARNING)
    with open_database(service_url, migrate=True) as handle:  # what `sapsam serve` does first
        running = start_server(
            ServerConfig(listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=2),
            # The checkpointer runs as the role too: it may append the tree, nothing more.
            build_services(
                handle.url, pool_size=4, server_keys=TEST_SERVER_KEYS, checkpoint_seconds=0.2
            ),
        )
        try:
            with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
                api = Api(channel, database_url)
                table, players = api.seated_table(4, "pagat", series_length=1)
                result = api.play_deal(table, players, preset("pagat"), deal_index=0)
                _wait_for_a_checkpoint_of_every_event(database_url)
        finally:
            running.stop()
    assert result.scored
    assert [
        record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR
    ] == []
    with psycopg.connect(database_url) as connection:
        stream = read_stream(connection, "table-" + table.removeprefix("tables/"))
        secrets_left = connection.execute("SELECT count(*) FROM deal_secrets").fetchone()
    assert stream[-1].type == "SeriesCompleted"
    assert verify_stream_chain(stream).intact
    assert secrets_left == (0,)


def _wait_for_a_checkpoint_of_every_event(database_url: str) -> None:
    deadline = time.monotonic() + 20
    with psycopg.connect(database_url, autocommit=True) as connection:
        while True:
            events = connection.execute("SELECT count(*) FROM events").fetchone()
            size = connection.execute("SELECT max(size) FROM log_checkpoints").fetchone()
            if events and size and size[0] == events[0]:
                return
            assert time.monotonic() < deadline, f"{size} leaves checkpointed of {events} events"
            time.sleep(0.1)

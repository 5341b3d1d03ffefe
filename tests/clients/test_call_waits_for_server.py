"""A call made while its server is down is sent again, unchanged, until the server is back (the
SDK's reconnect window, far past its attempts): it succeeds once, and only once, and the client's
``on_reachability`` hears of the outage and of the return; a call whose window runs out raises
UNAVAILABLE."""

from __future__ import annotations

import threading
import time

import pytest
from free_ports import free_port

from sapsam.api.server import ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam_client import connect
from sapsam_client.errors import SapsamError, UnavailableError
from sapsam_proto.v1 import table_pb2


def test_a_call_made_while_the_server_is_down_lands_once_it_is_back(database_url: str) -> None:
    # Outside the kernel's ephemeral range: no one else is given the port while it is down.
    address = f"127.0.0.1:{free_port()}"
    first = start_server(
        ServerConfig(listen=address, grace_seconds=1), build_services(database_url, 4)
    )
    client = connect(address, attempts=2, reconnect_seconds=60)
    client.register("ann")
    told: list[SapsamError | None] = []
    client.on_reachability = told.append
    first.stop()

    created: list[table_pb2.Table] = []
    failures: list[BaseException] = []

    def create() -> None:
        try:
            created.append(client.create_table(2, series_length=1))
        except BaseException as error:
            failures.append(error)

    calling = threading.Thread(target=create)
    started = time.monotonic()
    calling.start()
    # The first attempt has failed once the client says the server is out of reach; 2 s more is
    # far past 2 attempts' back-off (at most 0.2 s), and it still waits rather than fail.
    while not told:
        assert time.monotonic() - started < 30, "never told the server is out of reach"
        time.sleep(0.02)
    time.sleep(2)
    assert calling.is_alive() and not failures
    back = time.monotonic()
    second = start_server(
        ServerConfig(listen=address, grace_seconds=1), build_services(database_url, 4)
    )
    try:
        calling.join(30)
        assert failures == [] and len(created) == 1
        # Told once that the server is out of reach, and once that it answers again.
        assert [type(error) for error in told] == [UnavailableError, type(None)]
        assert time.monotonic() - back < 10  # back within a capped pause or two
        tables = list(client.list_tables())
        assert [table.name for table in tables] == [created[0].name]  # created once
    finally:
        second.stop()
        client.close()


def test_a_server_gone_for_longer_than_the_window_is_unavailable(database_url: str) -> None:
    # Outside the kernel's ephemeral range: no one else is given the port while it is down.
    address = f"127.0.0.1:{free_port()}"
    running = start_server(
        ServerConfig(listen=address, grace_seconds=1), build_services(database_url, 4)
    )
    running.stop()
    client = connect(address, attempts=2, reconnect_seconds=1.5)
    started = time.monotonic()
    with pytest.raises(UnavailableError):
        client.get_table("tables/00000000-0000-0000-0000-000000000000")
    assert 1.5 <= time.monotonic() - started < 1.5 + 6  # one last capped pause at most
    client.close()

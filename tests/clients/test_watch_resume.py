"""A watch survives its server stopping: the SDK resumes from the last version it received on
the server that comes back, and sees every event exactly once, in order."""

from __future__ import annotations

import threading
import time

from free_ports import free_port

from sapsam.api.server import ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam_client import connect, solver_arranger
from sapsam_proto.v1 import table_event_pb2


def test_a_watch_resumes_after_its_server_restarts(database_url: str) -> None:
    # Outside the kernel's ephemeral range: no one else is given the port while it is down.
    address = f"127.0.0.1:{free_port()}"
    first = start_server(
        ServerConfig(listen=address, grace_seconds=1), build_services(database_url, 4)
    )
    players = [connect(address, attempts=8) for _ in range(2)]
    for index, client in enumerate(players):
        client.register(f"p{index}")
    table = players[0].create_table(2, series_length=2).name
    seats = [client.join_table(table) for client in players]
    players[0].choose_dealer(table)

    spectator = connect(address, attempts=8)
    spectator.register("spectator")
    received: list[table_event_pb2.TableEvent] = []
    failures: list[BaseException] = []

    def watch() -> None:
        try:
            received.extend(spectator.watch(table))
        except BaseException as error:
            failures.append(error)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    deadline = time.monotonic() + 30
    while len(received) < 4 and time.monotonic() < deadline:  # created, 2 seated, dealer
        time.sleep(0.02)
    assert len(received) == 4

    first.stop()  # ends the open stream; the watcher must come back by itself
    second = start_server(
        ServerConfig(listen=address, grace_seconds=1), build_services(database_url, 4)
    )
    try:
        threads = [
            threading.Thread(target=seat.play_series, args=(solver_arranger,)) for seat in seats
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        watcher.join(60)
        assert failures == []
        versions = [event.version for event in received]
        assert versions == list(range(1, len(versions) + 1))
        assert received[-1].WhichOneof("payload") == "series_completed"
        assert players[0].get_table(table).version == versions[-1]
    finally:
        second.stop()

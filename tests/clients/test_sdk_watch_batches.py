"""The SDK's watch asks for batches (``batch_events``) and hands on their events one at a time:
a finished series' events, to a seat holder (its cards included) and to a spectator, are those
of the one-by-one stream, message for message."""

from __future__ import annotations

import threading

from sapsam.api.server import ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam_client import Client, connect, solver_arranger
from sapsam_proto.v1 import table_event_pb2, table_service_pb2


def _one_by_one(client: Client, table: str) -> list[table_event_pb2.TableEvent]:
    """The table's events as the stream sends them without batches, up to the series' end."""
    request = table_service_pb2.WatchTableRequest(table=table, after_version=0)
    events: list[table_event_pb2.TableEvent] = []
    for response in client.tables.WatchTable(request, metadata=client.metadata(), timeout=60):
        events.append(response.event)
        if response.event.WhichOneof("payload") == "series_completed":
            break
    return events


def test_the_sdk_watch_hands_on_batched_events_one_at_a_time(database_url: str) -> None:
    server = start_server(ServerConfig(listen="127.0.0.1:0"), build_services(database_url, 4))
    try:
        address = f"127.0.0.1:{server.port}"
        players = [connect(address) for _ in range(2)]
        for index, client in enumerate(players):
            client.register(f"p{index}")
        table = players[0].create_table(2, series_length=1).name
        seats = [client.join_table(table) for client in players]
        players[0].choose_dealer(table)
        threads = [
            threading.Thread(target=seat.play_series, args=(solver_arranger,)) for seat in seats
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        spectator = connect(address)
        spectator.register("spectator")
        for client in (players[0], spectator):
            watched = list(client.watch(table))  # ends with the series
            expected = _one_by_one(client, table)
            assert [event.SerializeToString() for event in watched] == [
                event.SerializeToString() for event in expected
            ]
            assert [event.version for event in watched] == list(range(1, len(watched) + 1))
        assert any(event.cards_dealt.my_cards for event in list(players[0].watch(table)))
    finally:
        server.stop()

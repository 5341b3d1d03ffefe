"""WatchTable at its edges: an after_version past the table's head, a table read that fails."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import grpc
import pytest
from api_client import Api, Watcher

from sapsam.api.server import RunningServer
from sapsam_proto.v1 import table_service_pb2


@pytest.fixture(scope="module")
def api(module_running_server: RunningServer, module_database_url: str) -> Iterator[Api]:
    with grpc.insecure_channel(f"127.0.0.1:{module_running_server.port}") as channel:
        yield Api(channel, module_database_url)


def _open_table(api: Api, seat_count: int) -> str:
    creator = api.register("creator")
    request = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()), rule_set_preset="pagat", seat_count=seat_count
    )
    name: str = api.call("CreateTable", request, creator.token).table.name
    return name


def _join(api: Api, table: str) -> None:
    request = table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table)
    api.call("JoinTable", request, api.register("joiner").token)


def test_a_watch_after_a_version_past_the_head_sends_only_later_events(api: Api) -> None:
    table = _open_table(api, 3)  # version 1: created
    watcher = Watcher(api, table, api.register("watcher").token, after_version=2)
    try:
        for _ in range(3):  # versions 2, 3, 4
            _join(api, table)
        watcher.wait_for(lambda: any(m.event.version == 4 for m in watcher.messages))
        assert [m.event.version for m in watcher.messages] == [3, 4]
    finally:
        watcher.cancel()

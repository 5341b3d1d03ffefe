"""What one call reads from the log is bounded by what it answers, not by the table's history:
a table's card (creator, creation time) on a cold cache reads the first event only, and an old
deal's result reads that deal, not every deal since."""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from collections.abc import Iterator
from typing import cast

import grpc
from api_client import OPERATOR_TOKEN
from scenarios import World

from sapsam.api.server import ServerConfig, start_server
from sapsam.api.table_servicer import _DEAL_PAGE_EVENTS, TableServicer
from sapsam.app.tables import TableService
from sapsam.cli.bootstrap import build_services
from sapsam.log.records import RecordedEvent
from sapsam_proto.v1 import table_service_pb2


class CountingTables(TableService):
    """The real table service, counting the events its ``events`` reads return."""

    def __init__(self, tables: TableService) -> None:
        super().__init__(tables.store)
        self.read = 0

    def events(
        self, table_id: uuid.UUID, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        recorded = super().events(table_id, from_version, to_version)
        self.read += len(recorded)
        return recorded


@contextlib.contextmanager
def counting_world(database_url: str) -> Iterator[tuple[World, CountingTables]]:
    """A server whose table servicer reads through :class:`CountingTables` (a cold cache)."""
    services = build_services(database_url)
    servicer = cast(TableServicer, services.table_service)
    tables = CountingTables(servicer._tables)
    services = dataclasses.replace(
        services, table_service=TableServicer(tables, servicer._players, servicer._feed)
    )
    config = ServerConfig(listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=1)
    running = start_server(config, services)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            yield World(channel, database_url), tables
    finally:
        running.stop()


def test_reads_are_bounded_by_the_answer_not_the_history(database_url: str) -> None:
    with counting_world(database_url) as (world, tables):
        seated = world.seated(seat_count=2, series_length=8)
        first_deal = world.played(seated)
        result = table_service_pb2.GetDealResultRequest(name=first_deal)
        world.table_call("GetDealResult", result, OPERATOR_TOKEN)  # where deal 1 starts: known
        for _ in range(6):
            world.played(seated)
        head = world.table_call(
            "GetTable", table_service_pb2.GetTableRequest(name=seated.table), OPERATOR_TOKEN
        ).table.version
        assert head > 2 * _DEAL_PAGE_EVENTS  # a history several pages long
        tables.read = 0
        world.table_call("GetDealResult", result, OPERATOR_TOKEN)
        assert tables.read <= _DEAL_PAGE_EVENTS  # deal 1 (and a little), not the 6 deals since
    with counting_world(database_url) as (world, tables):  # a new process: nothing cached
        world.table_call(
            "GetTable", table_service_pb2.GetTableRequest(name=seated.table), OPERATOR_TOKEN
        )
        assert tables.read == 1  # the creation event, for the creator and the creation time

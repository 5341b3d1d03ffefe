"""What one call reads from the log is bounded by what it answers, not by the table's history:
a table's card (creator, creation time) on a cold cache reads the first event only, and an old
deal's result reads that deal, not every deal since."""

from __future__ import annotations

import uuid

from api_client import OPERATOR_TOKEN
from serving import serving_tables_through

from sapsam.app.store_interface import StoreSession
from sapsam.app.table_reads import DEAL_PAGE_EVENTS as _DEAL_PAGE_EVENTS
from sapsam.app.tables import TableService
from sapsam.domain.events import Event
from sapsam.domain.table import TableState
from sapsam.log.records import RecordedEvent
from sapsam_proto.v1 import table_service_pb2


class CountingTables(TableService):
    """The real table service, counting the events its ``events`` reads return and the events
    it decodes."""

    def __init__(self, tables: TableService) -> None:
        super().__init__(tables.store)
        self.read = 0
        self.decoded = 0
        self.reads = 0  # statements reading the log: each events(), each load from the log

    async def load_from_log(
        self, table_id: uuid.UUID, session: StoreSession | None = None
    ) -> TableState:
        self.reads += session is not None  # without a session it calls itself with one
        return await super().load_from_log(table_id, session)

    def decode(self, recorded: RecordedEvent) -> Event:
        self.decoded += 1
        return super().decode(recorded)

    async def events(
        self, table_id: uuid.UUID, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        recorded = await super().events(table_id, from_version, to_version)
        self.read += len(recorded)
        self.reads += 1
        return recorded


def test_the_result_of_the_deal_just_played_is_read_from_memory(database_url: str) -> None:
    # The process played the deal: its copy of the table is current and holds the deal's events,
    # so the result needs no statement at all (before reads from memory: one statement, the
    # table's state and the deal's events from the same tail).
    with serving_tables_through(database_url, CountingTables) as (world, tables):
        seated = world.seated(seat_count=2, series_length=8)
        for _ in range(2):
            deal = world.played(seated)
            tables.reads = 0
            result = table_service_pb2.GetDealResultRequest(name=deal)
            answer = world.table_call("GetDealResult", result, OPERATOR_TOKEN)
            assert answer.result.scored
            assert tables.reads == 0


def test_reads_are_bounded_by_the_answer_not_the_history(database_url: str) -> None:
    with serving_tables_through(database_url, CountingTables) as (world, tables):
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
    # A new process: nothing cached.
    with serving_tables_through(database_url, CountingTables) as (world, tables):
        world.table_call(
            "GetTable", table_service_pb2.GetTableRequest(name=seated.table), OPERATOR_TOKEN
        )
        assert tables.read == 1  # the creation event, for the creator and the creation time


def test_an_old_deal_on_a_cold_cache_decodes_that_deal_only(database_url: str) -> None:
    with serving_tables_through(database_url, CountingTables) as (world, tables):
        seated = world.seated(seat_count=2, series_length=8)
        first_deal = world.played(seated)
        for _ in range(6):
            world.played(seated)
    # A new process: the whole tail is scanned for where deals start, but only deal 1 decoded.
    with serving_tables_through(database_url, CountingTables) as (world, tables):
        world.table_call(  # the table's state folded and cached first: not what is measured
            "GetTable", table_service_pb2.GetTableRequest(name=seated.table), OPERATOR_TOKEN
        )
        tables.read = tables.decoded = 0
        result = table_service_pb2.GetDealResultRequest(name=first_deal)
        answer = world.table_call("GetDealResult", result, OPERATOR_TOKEN)
        assert answer.result.name == first_deal
        assert tables.read > 2 * _DEAL_PAGE_EVENTS  # the history since, read to find the starts
        assert tables.decoded <= _DEAL_PAGE_EVENTS  # deal 1, not the 6 deals since

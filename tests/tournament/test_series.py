"""A table's series: after the last deal it closes, or (``after_series = new_series``) a new
series starts with totals reset, the deal numbers and the dealer rotation going on."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from tournament_play import OPERATOR_TOKEN, Services

from sapsam import fairness
from sapsam.api.server import RunningServer
from sapsam.audit.sample_play import play_deal
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import (
    DealScored,
    DealStarted,
    SeriesCompleted,
    SeriesStarted,
    TableCreated,
)
from sapsam.domain.table import TablePhase
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.scoring import standings
from sapsam_proto.v1 import table_service_pb2, table_service_pb2_grpc

RULES = DEFAULT_RULE_SET.with_changes(series_length=2)


async def seated(services: Services, after_series: str) -> object:
    created = await services.tables.create_table(
        RULES, 3, "operator", f"series-{after_series}", after_series
    )
    for player in ("ann", "bob", "cid"):
        await services.tables.join(created.table_id, player, None, f"join-{player}")
    await services.tables.choose_dealer(created.table_id, "operator", "dealer")
    return created.table_id


async def test_a_new_series_resets_the_totals_and_goes_on(services: Services) -> None:
    table_id = await seated(services, "new_series")
    for number in (1, 2, 3, 4):
        await play_deal(services.tables, table_id, number)  # type: ignore[arg-type]
    events = [services.tables.decode(r) for r in await services.tables.events(table_id)]  # type: ignore[arg-type]
    scored = [event for event in events if isinstance(event, DealScored)]
    completed = [event for event in events if isinstance(event, SeriesCompleted)]
    started = [event for event in events if isinstance(event, SeriesStarted)]
    dealers = [event.dealer for event in events if isinstance(event, DealStarted)]
    assert [event.deal_number for event in scored] == [1, 2, 3, 4]
    assert started[0] == SeriesStarted(series_number=2, first_deal_number=3)
    assert len(started) == 2  # the table plays on after the second series too
    # Series 2's running totals start from zero at deal 3.
    assert scored[2].series_totals == scored[2].totals
    second = tuple(a + b for a, b in zip(scored[2].totals, scored[3].totals, strict=True))
    assert scored[3].series_totals == second
    assert [c.deals_played for c in completed] == [2, 2]
    ranks = [(s.seat, s.total, s.place) for s in standings(second)]
    assert [(s.seat, s.total, s.place) for s in completed[1].standings] == ranks
    # The deal keeps passing left across the series boundary.
    assert dealers[1:] == [fairness.left_of(d, 3) for d in dealers[:-1]]
    state = await services.tables.load(table_id)  # type: ignore[arg-type]
    assert state.phase is TablePhase.BETWEEN_DEALS and state.series_number == 3
    async with services.store.connection() as connection:
        row = await (
            await connection.execute(
                "SELECT phase FROM table_state WHERE table_id = %s", [table_id]
            )
        ).fetchone()
    assert row == ("BETWEEN_DEALS",)


async def test_a_closing_table_refuses_another_deal(services: Services) -> None:
    table_id = await seated(services, "close")
    for number in (1, 2):
        await play_deal(services.tables, table_id, number)  # type: ignore[arg-type]
    with pytest.raises(DomainError) as refused:
        await services.tables.start_deal(table_id, "operator", "one-more")  # type: ignore[arg-type]
    assert refused.value.reason is Reason.SERIES_COMPLETE


def test_table_created_version_1_reads_as_closing() -> None:
    data = {
        "table_id": "00000000-0000-4000-8000-000000000009",
        "rule_set": RULES.to_dict(),
        "seat_count": 2,
        "lot_commitment": "00" * 32,
        "created_by": "operator",
    }
    event = DEFAULT_CODEC.decode("TableCreated", 1, data)
    assert isinstance(event, TableCreated) and event.after_series == "close"
    assert DEFAULT_CODEC.encode(event)[1] == 2


async def test_watching_a_table_that_plays_on_does_not_end_with_the_series(
    services: Services, server: RunningServer
) -> None:
    created = await services.tables.create_table(
        DEFAULT_RULE_SET.with_changes(series_length=1), 2, "operator", "watch-on", "new_series"
    )
    table_id = created.table_id
    for player in ("ann", "bob"):
        await services.tables.join(table_id, player, None, f"join-{player}")
    await services.tables.choose_dealer(table_id, "operator", "dealer")
    await play_deal(services.tables, table_id, 1)
    received: list[str] = []
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stream = table_service_pb2_grpc.TableServiceStub(channel).WatchTable(
            table_service_pb2.WatchTableRequest(table=f"tables/{table_id}"),
            metadata=(("authorization", f"Bearer {OPERATOR_TOKEN}"),),
        )
        # Read in a thread: this loop must stay free to send the test's own appends' wake-ups.
        responses = iter(stream)
        while (response := await asyncio.to_thread(next, responses, None)) is not None:
            received.append(response.event.type)
            if received.count("DealScored") == 1 and received[-1] == "SeriesStarted":
                await play_deal(services.tables, table_id, 2)  # the stream is still open: deal on
            if received.count("SeriesStarted") == 2:
                stream.cancel()
                break
    assert received.count("SeriesCompleted") == 2 and received.count("DealScored") == 2


async def test_create_table_over_grpc_with_a_new_series_after_each(
    services: Services, server: RunningServer
) -> None:
    import uuid

    metadata = (("authorization", f"Bearer {OPERATOR_TOKEN}"),)
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)
        table = stub.CreateTable(
            table_service_pb2.CreateTableRequest(
                request_id="plays-on",
                seat_count=2,
                after_series=table_service_pb2.AFTER_SERIES_NEW_SERIES,
            ),
            metadata=metadata,
        ).table
        with pytest.raises(grpc.RpcError) as refused:
            stub.CreateTable(
                table_service_pb2.CreateTableRequest(
                    request_id="odd",
                    seat_count=2,
                    after_series=7,  # type: ignore[arg-type]
                ),
                metadata=metadata,
            )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    table_id = uuid.UUID(table.name.removeprefix("tables/"))
    assert (await services.tables.load(table_id)).after_series == "new_series"

"""GetDealResult's answers from memory (``sapsam.api.deal_results``) are the ones the log gives.

A deal is played through one ``TableService`` (a server process, remembering the table and the
domain events it decided); after every step its answer, for every kind of viewer, must equal the
answer of a fresh ``TableService`` on the same database (a restarted process, reading the log),
and a seat's hidden information must stay hidden before the seed is revealed.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from sapsam import fairness
from sapsam.api.deal_results import DealResults
from sapsam.app.table_reads import TableReads
from sapsam.app.tables import TableService
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.solver import solve
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors
from sapsam_proto.v1 import table_pb2

PLAYERS = ("ann", "bob", "cid", "dee")
# Each seat's holder, the operator, and a player without a seat.
VIEWERS = (*((player, False) for player in PLAYERS), (None, True), ("zed", False))
NONCE = bytes(16)


@pytest.fixture
async def served_and_restarted(
    database_url: str,
) -> AsyncIterator[tuple[TableService, EventStore]]:
    stores = [await EventStore.connect(database_url, projectors=projectors()) for _ in range(2)]
    stores[0].prepare()
    try:
        yield TableService(stores[0]), stores[1]
    finally:
        for store in stores:
            await store.close()


def results_of(service: TableService) -> DealResults:
    return DealResults(service, TableReads(service))


async def answers(results: DealResults, table_id: uuid.UUID) -> list[table_pb2.DealResult | None]:
    return [await results.result(table_id, 1, player, operator) for player, operator in VIEWERS]


async def test_answers_from_memory_equal_the_logs_at_every_step_and_after_a_restart(
    served_and_restarted: tuple[TableService, EventStore],
) -> None:
    served, other_store = served_and_restarted
    results = results_of(served)
    table_id = (await served.create_table(DEFAULT_RULE_SET, 4, "operator", "create")).table_id
    for player in PLAYERS:
        await served.join(table_id, player, None, f"join-{player}")
    await served.choose_dealer(table_id, PLAYERS[0], "dealer")
    assert await answers(results, table_id) == [None] * len(VIEWERS)  # no deal yet

    steps = 0

    async def check() -> list[table_pb2.DealResult | None]:
        nonlocal steps
        steps += 1
        remembered = await answers(results, table_id)
        # A restarted process: nothing in memory, everything read from the log.
        restarted = await answers(results_of(TableService(other_store)), table_id)
        assert remembered == restarted
        # The served process decoded nothing: the deal's events are the ones it decided.
        _, recorded = await TableReads(served).deal_events(table_id, 1)
        assert all(served.memory.decoded(table_id, event) is not None for event in recorded)
        return remembered

    started = await served.start_deal(table_id, "operator", "start")
    await check()
    deal = started.state.deal
    assert deal is not None
    cutter = started.state.seats[fairness.cutter_for(deal.dealer, 4)]
    assert cutter is not None
    await served.cut(table_id, cutter, 9, "cut")
    await check()
    chosen = {}
    for player in PLAYERS:
        seat, hand = await served.hand_of(table_id, player)
        chosen[player] = solve(hand)
        commitment = fairness.arrangement_commitment(table_id, 1, seat, chosen[player], NONCE)
        await served.commit(table_id, player, commitment, f"commit-{player}")
        await check()
        await served.confirm(table_id, player, f"confirm-{player}")
        before_reveal = await check()
    for player in PLAYERS:
        await served.reveal(table_id, player, chosen[player], NONCE, f"reveal-{player}")
        hidden = await check()
        if player != PLAYERS[-1]:
            # Before the seed: no viewer, not even a seat's holder, sees a hand, rows or nonce.
            for result in (*before_reveal, *hidden):
                assert result is not None and not result.seed_revealed
                for seat in result.seats:
                    assert not seat.dealt_cards and not seat.nonce
                    assert not seat.HasField("arrangement")
    scored = await check()
    assert steps == 15
    for result in scored:
        assert result is not None and result.scored and result.seed_revealed
        assert all(len(seat.dealt_cards) == 13 for seat in result.seats)


async def test_an_answer_is_built_once_until_the_deal_changes(
    served_and_restarted: tuple[TableService, EventStore],
) -> None:
    served, _ = served_and_restarted
    results = results_of(served)
    table_id = (await served.create_table(DEFAULT_RULE_SET, 2, "operator", "create")).table_id
    for player in PLAYERS[:2]:
        await served.join(table_id, player, None, f"join-{player}")
    await served.choose_dealer(table_id, PLAYERS[0], "dealer")
    started = await served.start_deal(table_id, "operator", "start")
    first = await results.result(table_id, 1, "ann", False)
    assert await results.result(table_id, 1, "ann", False) is first
    # Another viewer has an answer of its own, whatever it shows.
    assert await results.result(table_id, 1, "bob", False) is not first
    deal = started.state.deal
    assert deal is not None
    cutter = started.state.seats[fairness.cutter_for(deal.dealer, 2)]
    assert cutter is not None
    await served.cut(table_id, cutter, 9, "cut")
    after_cut = await results.result(table_id, 1, "ann", False)
    assert after_cut is not first and after_cut is not None
    assert after_cut.HasField("cut_position") and not first.HasField("cut_position")

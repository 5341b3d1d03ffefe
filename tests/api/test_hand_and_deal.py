"""GetMyHand names the deal its cards belong to: the seat, the deal and the cards come from one
read, so a deal scored and the next one started while the call runs cannot pair deal 1's cards
with deal 2's name (nor, at a series' end, fail INTERNAL)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from scenarios import World
from serving import serving_tables_through

from sapsam.app.tables import OwnHand, TableService
from sapsam_proto.v1 import table_service_pb2


class PausingTables(TableService):
    """The real table service; once armed, the next hand read waits (after reading) until the
    test lets it go, so that the test can move the table on in between."""

    def __init__(self, tables: TableService) -> None:
        super().__init__(tables.store)
        self.armed = False
        self.paused = threading.Event()
        self.go = threading.Event()

    async def _pause(self) -> None:
        if self.armed:
            self.armed = False
            self.paused.set()
            # On the server's loop: wait without blocking it (the test moves the table on).
            for _ in range(6000):
                if self.go.is_set():
                    return
                await asyncio.sleep(0.01)
            raise AssertionError("the test never let the read go")

    async def hand_of(self, table_id: uuid.UUID, player_id: str) -> Any:
        read = await super().hand_of(table_id, player_id)
        await self._pause()
        return read

    async def own_hand(self, table_id: uuid.UUID, player_id: str) -> OwnHand:
        read = await super().own_hand(table_id, player_id)
        await self._pause()
        return read


@pytest.fixture
def paused_world(database_url: str) -> Iterator[tuple[World, PausingTables]]:
    with serving_tables_through(database_url, PausingTables) as (world, tables):
        try:
            yield world, tables
        finally:
            tables.go.set()  # a paused read must not hold the server's stop


def test_get_my_hand_names_the_deal_of_its_cards(
    paused_world: tuple[World, PausingTables],
) -> None:
    world, tables = paused_world
    seated = world.seated(seat_count=2, series_length=2)
    first_deal, chosen = world.revealing(seated)
    player = seated.players[0]
    first_hand = sorted(str(card) for card in world.hand(player))
    answered: list[Any] = []
    tables.armed = True
    asking = threading.Thread(
        target=lambda: answered.append(
            world.table_call(
                "GetMyHand", table_service_pb2.GetMyHandRequest(seat=player.seat), player.token
            )
        )
    )
    asking.start()
    assert tables.paused.wait(30)
    for each in seated.players:  # deal 1 is scored, deal 2 is dealt, while the call reads
        world.reveal(each, chosen[each.seat])
    second_deal = world.dealt(seated)
    tables.go.set()
    asking.join(30)
    assert second_deal != first_deal
    assert [(answer.deal, sorted(answer.cards)) for answer in answered] == [
        (first_deal, first_hand)
    ]

"""The SDK's play loop takes each hand from the seat's own stream (``CardsDealt.my_cards``) and
commits and confirms in one call: no GetMyHand, no ConfirmArrangement. Against a real server."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import grpc

from sapsam_client import Client, Seat, connect
from sapsam_client.keepalive import KEEPALIVE_OPTIONS
from sapsam_client.rules import solver_arranger
from sapsam_proto.v1 import table_pb2


class CallCounter(grpc.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    """Counts the unary calls a client makes, by method."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()

    def intercept_unary_unary(
        self, continuation: Callable[[Any, Any], Any], details: Any, request: Any
    ) -> Any:
        with self.lock:
            self.calls[details.method.rsplit("/", 1)[1]] += 1
        return continuation(details, request)


def counted_client(address: str, name: str) -> tuple[Client, CallCounter]:
    counter = CallCounter()
    channel = grpc.intercept_channel(
        grpc.insecure_channel(address, options=KEEPALIVE_OPTIONS), counter
    )
    client = Client(channel)
    client.server = address
    client.register(name)
    return client, counter


def test_play_series_needs_no_get_my_hand_and_no_confirm(address: str) -> None:
    deals = 2
    creator = connect(address)
    creator.register("creator")
    table = creator.create_table(2, series_length=deals)
    seats: list[Seat] = []
    counters: list[CallCounter] = []
    hands: list[list[tuple[str, ...]]] = [[], []]
    for index in range(2):
        client, counter = counted_client(address, f"seat {index}")
        seats.append(client.join_table(table.name))
        counters.append(counter)
    failures: list[BaseException] = []

    def run(index: int) -> None:
        seat = seats[index]

        def arranger(hand: Any, current: table_pb2.Table) -> Any:
            hands[index].append(hand.cards)
            # The stream's hand is exactly the server's GetMyHand (asked here, outside the loop).
            assert seat.client.get_my_hand(seat.name) == hand
            return solver_arranger(hand, current)

        try:
            seat.play_series(arranger)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    for index, counter in enumerate(counters):
        assert len(hands[index]) == deals
        # Only the arranger's own check asked for the hand; the loop never did.
        assert counter.calls["GetMyHand"] == deals
        assert counter.calls["ConfirmArrangement"] == 0
        assert counter.calls["CommitArrangement"] == deals
        assert counter.calls["RevealArrangement"] == deals
    final = creator.get_table(table.name)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE


def test_a_seat_without_its_stream_asks_the_server(address: str) -> None:
    clients = [connect(address) for _ in range(2)]
    for index, client in enumerate(clients):
        client.register(f"step {index}")
    table = clients[0].create_table(2, series_length=1)
    seats = [client.join_table(table.name) for client in clients]
    clients[0].choose_dealer(table.name)
    clients[0].start_deal(table.name)
    cutter = clients[0].get_table(table.name).cutter_seat
    next(seat for seat in seats if seat.name == cutter).client.cut_deck(cutter, 17)
    for seat in seats:
        hand = seat.hand(1)  # no stream: GetMyHand
        assert len(hand.cards) == 13
        seat.commit(1, solver_arranger(hand, table), confirm=True)
    assert clients[0].get_table(table.name).phase == table_pb2.TABLE_PHASE_REVEALING

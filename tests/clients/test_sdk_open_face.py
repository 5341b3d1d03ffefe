"""The SDK's open-face calls on a real server (issue #18): a street placed through
``Client.place_cards`` whose answer is lost is sent again, unchanged (one request id), and the
server records it once and answers the retry as it answered the first; ``get_open_face_hand``
shows a seat its own cards to place and no card of another seat's."""

from __future__ import annotations

from typing import Any

import grpc
from test_retry_set import RaisedError

from sapsam.rules.cards import parse_cards
from sapsam.rules.open_face.board import Board, legal_placements
from sapsam_client import connect
from sapsam_proto.v1 import table_pb2


class LosesFirstAnswer:
    """A stub method that sends each request but loses the first answer (UNAVAILABLE), as a
    dropped connection would: the server acted, the client does not know it."""

    def __init__(self, method: Any) -> None:
        self.method = method
        self.sent: list[Any] = []
        self.answers: list[Any] = []

    def __call__(self, request: Any, metadata: Any, timeout: float) -> Any:
        self.sent.append(request)
        answer = self.method(request, metadata=metadata, timeout=timeout)
        self.answers.append(answer)
        if len(self.sent) == 1:
            raise RaisedError(grpc.StatusCode.UNAVAILABLE)
        return answer


def test_a_placement_whose_answer_is_lost_is_sent_again_and_recorded_once(address: str) -> None:
    first, second = connect(address), connect(address)
    first.register("Ann")
    second.register("Bob")
    table = first.create_open_face_table(2, preset="ofc_turbo").name
    clients = {first.join_table(table, 0).name: first, second.join_table(table, 1).name: second}
    first.choose_dealer(table)
    first.start_deal(table)
    cutter = first.get_table(table).cutter_seat
    clients[cutter].cut_deck(cutter, 12)
    view = first.get_table(table)
    assert view.phase == table_pb2.TABLE_PHASE_PLAYING
    on_turn = view.open_face.turn_seat
    other = next(seat for seat in clients if seat != on_turn)
    client = clients[on_turn]

    hand = client.get_open_face_hand(on_turn)
    assert hand.my_turn and hand.street == 0 and len(hand.to_place()) == 5
    assert hand.rows == ((), (), ())
    watcher = clients[other].get_open_face_hand(other)
    assert not watcher.my_turn
    assert list(watcher.view.seats[hand.position].dealt_cards) == []  # not another seat's
    assert len(watcher.to_place()) == 5  # its own, dealt on the same street

    placement = legal_placements(Board(), parse_cards(list(hand.to_place())))[0]
    lossy = LosesFirstAnswer(client.tables.PlaceCards)
    client.tables.PlaceCards = lossy  # type: ignore[method-assign]
    version = client.place_cards(
        on_turn,
        hand.street,
        [str(card) for card in placement.front],
        [str(card) for card in placement.middle],
        [str(card) for card in placement.back],
        deal=hand.deal_number,
    )
    assert len(lossy.sent) == 2 and lossy.sent[0] is lossy.sent[1]  # the same request, resent
    assert lossy.answers[0].version == lossy.answers[1].version == version
    placed = []
    for event in clients[other].watch(table):  # the log so far (the stream stays open)
        if event.HasField("cards_placed") and event.cards_placed.seat == on_turn:
            placed.append(event.cards_placed)
        if event.version >= version:
            break
    assert len(placed) == 1  # recorded once
    rows = client.get_open_face_hand(on_turn).rows
    assert sorted(card for row in rows for card in row) == sorted(hand.to_place())
    assert first.get_table(table).open_face.turn_seat == other

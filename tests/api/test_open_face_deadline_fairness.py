"""An outage is never held against an open-face seat, over a real server: a server SIGKILLed
across a placement deadline and restarted after it passed extends the deadline (an event in the
log, with its reason) instead of placing for the seat that could not place while no server
served; the seat then places its cards itself (the closed game's test_deadline_fairness)."""

from __future__ import annotations

import time
import uuid

from api_client import Player
from open_face_game import rows_message, street_to_place
from test_deadline_fairness import GRACE_SECONDS, Server, request, servers, wait_for

from sapsam.domain.events import DeadlinesExtended
from sapsam.domain.open_face.events import CardsPlaced
from sapsam.rules.open_face.board import legal_placements
from sapsam_proto.v1 import table_service_pb2

__all__ = ["servers"]  # the fixture, shared with the closed game's test

MOVE_SECONDS = 1


def test_a_placement_deadline_that_fell_while_no_server_served_is_extended(
    database_url: str, servers: list[Server]
) -> None:
    first = Server(database_url)
    servers.append(first)
    api = first.api(database_url)
    creator = api.register("creator")
    create = table_service_pb2.CreateTableRequest(
        request_id=request(), rule_set_preset="ofc_turbo", seat_count=2, move_seconds=MOVE_SECONDS
    )
    table = api.call("CreateTable", create, creator.token).table.name
    players: list[Player] = []
    for name in ("ann", "bob"):
        player = api.register(name)
        join = table_service_pb2.JoinTableRequest(request_id=request(), table=table)
        player.seat = api.call("JoinTable", join, player.token).seat
        players.append(player)
    for method, message in (
        ("ChooseDealer", table_service_pb2.ChooseDealerRequest),
        ("StartDeal", table_service_pb2.StartDealRequest),
    ):
        api.call(method, message(request_id=request(), table=table), players[0].token)
    get = table_service_pb2.GetTableRequest(name=table)
    cutter_seat = api.call("GetTable", get, players[0].token).table.cutter_seat
    cutter = next(player for player in players if player.seat == cutter_seat)
    # The cut deals the first street at once: the seat on turn has MOVE_SECONDS to place. The
    # server dies before it can.
    cut = table_service_pb2.CutDeckRequest(request_id=request(), seat=cutter.seat, position=13)
    api.call("CutDeck", cut, cutter.token)
    shown = api.call("GetTable", get, players[0].token).table
    deadline = shown.deadline_time.ToMilliseconds()
    on_turn = next(player for player in players if player.seat == shown.open_face.turn_seat)
    first.kill()
    wait_for(lambda: time.time() * 1000 > deadline + 1_000)
    second = Server(database_url)
    servers.append(second)
    api = second.api(database_url)
    # The restarted server's sweeper extends the deadline instead of placing for the seat.
    wait_for(lambda: any(isinstance(e, DeadlinesExtended) for e in api.logged_events(table)))
    events = api.logged_events(table)
    assert not any(isinstance(event, CardsPlaced) for event in events)
    (extended,) = [event for event in events if isinstance(event, DeadlinesExtended)]
    assert extended.reason == "server_restart" and extended.stage == "placing"
    assert extended.seats == (on_turn.position,)
    assert extended.previous_deadline_ms == deadline
    assert extended.unserved_from_ms <= deadline < extended.unserved_until_ms
    assert extended.deadline_ms == extended.unserved_until_ms + GRACE_SECONDS * 1000
    shown = api.call("GetTable", get, players[0].token).table
    assert shown.deadline_time.ToMilliseconds() == extended.deadline_ms
    # The seat places its own cards within the grace.
    hand = api.call(
        "GetMyHand", table_service_pb2.GetMyHandRequest(seat=on_turn.seat), on_turn.token
    )
    board, cards = street_to_place(hand, on_turn)
    placement = legal_placements(board, cards)[0]
    place = table_service_pb2.PlaceCardsRequest(
        request_id=str(uuid.uuid4()),
        seat=on_turn.seat,
        street=0,
        placement=rows_message(placement.front, placement.middle, placement.back),
    )
    api.call("PlaceCards", place, on_turn.token)
    placed = [e for e in api.logged_events(table) if isinstance(e, CardsPlaced)]
    assert placed and placed[0].seat == on_turn.position and placed[0].automatic is None

"""GetSuggestion for a Fantasyland hand over gRPC: the seat that earned it (the first deal's
seed chosen, as tests/api/test_open_face_fantasyland_api.py does) is suggested its whole hand as
``solve_fantasyland`` sets it, the cards beyond 13 left off, recording nothing; the normal seat
meanwhile gets its street's placement; once the hand is set, ALREADY_CONFIRMED."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from api_client import error_reason
from open_face_game import Played, by_seat, my_hand, open_face_table, play_move, table_of
from scenarios import World
from test_open_face_fantasyland_api import (  # noqa: F401 - the fixtures are used by name
    _cut,
    _play_an_earning_deal,
    fl_world,
    seeded_server,
)

from sapsam.api.server import RunningServer
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.open_face.fantasyland_setting import solve_fantasyland
from sapsam.rules.open_face.presets import OPEN_FACE_PRESETS
from sapsam_proto.v1 import table_service_pb2


def _suggest(world: World, player: Any) -> Any:
    request = table_service_pb2.GetSuggestionRequest(seat=player.seat)
    return world.table_call("GetSuggestion", request, player.token)


def test_a_fantasyland_hand_is_suggested_whole(
    fl_world: World,  # noqa: F811 - the imported fixture
    seeded_server: tuple[RunningServer, Any],  # noqa: F811
) -> None:
    world = fl_world
    _, tables = seeded_server
    seated = open_face_table(world, 2, "ofc_classic")
    played = Played()
    _, earner = _play_an_earning_deal(world, tables, seated, played)
    _cut(world, seated)  # deal 2: the earner plays Fantasyland
    deal = table_of(world, seated).open_face
    fantasy = by_seat(seated, deal.seats[earner].seat)
    normal = by_seat(seated, deal.seats[1 - earner].seat)
    assert deal.seats[earner].fantasyland and deal.turn_seat == normal.seat
    dealt = parse_cards(list(my_hand(world, fantasy).cards))
    before = world.event_count()
    answer = _suggest(world, fantasy)
    assert world.event_count() == before
    assert answer.WhichOneof("suggestion") == "arrangement" and not answer.HasField("street")
    suggested = Arrangement.of_card_rows(
        parse_cards(list(answer.arrangement.front)),
        parse_cards(list(answer.arrangement.middle)),
        parse_cards(list(answer.arrangement.back)),
    )
    left_off = parse_cards(list(answer.discards))
    assert sorted([*suggested.cards, *left_off]) == sorted(dealt)
    assert (suggested, tuple(left_off)) == solve_fantasyland(
        OPEN_FACE_PRESETS["ofc_classic"], dealt
    )
    # The normal seat, on its turn meanwhile, is suggested its street.
    assert _suggest(world, normal).WhichOneof("suggestion") == "placement"
    while not table_of(world, seated).open_face.seats[earner].committed:
        assert play_move(world, seated, played)
    with pytest.raises(grpc.RpcError) as raised:
        _suggest(world, fantasy)
    code, reason, _, _ = error_reason(raised.value)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_CONFIRMED")

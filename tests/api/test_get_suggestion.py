"""GetSuggestion over gRPC: the solver's choice for the caller's own seat, recording nothing.

- closed game: the seat's 13 cards in the rows ``best_play`` sets (the natural it would declare
  at a table with naturals), for the current deal only, refused once the seat confirmed or timed
  out, before the cards are dealt, and for anyone but the seat's holder;
- open face: on the seat's turn, the street's cards placed (and at Pineapple the discard) as the
  seeded solver places them, the same answer twice, which PlaceCards accepts; another seat's
  turn is NOT_YOUR_TURN; a Fantasyland hand is suggested whole (tests in
  test_get_suggestion_fantasyland.py).

Every refusal carries its documented reason and writes no event; the calls per player are
limited (tests/api/test_limits.py).
"""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Player, error_reason
from open_face_game import (
    by_seat,
    my_hand,
    open_face_table,
    street_to_place,
    table_of,
)
from scenarios import Seated, World

from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.open_face.presets import PINEAPPLE_PRESETS
from sapsam.rules.presets import preset
from sapsam.rules.solver_play import best_play
from sapsam_proto.v1 import table_service_pb2

SUGGEST = "GetSuggestion"


def _suggest(world: World, player: Player, seat: str | None = None, **fields: Any) -> Any:
    request = table_service_pb2.GetSuggestionRequest(seat=seat or player.seat, **fields)
    return world.table_call(SUGGEST, request, player.token)


def _refused(world: World, call: Any) -> tuple[grpc.StatusCode, str]:
    """The call's status and reason; the log gains no event."""
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        call()
    assert world.event_count() == before
    code, reason, _, _ = error_reason(raised.value)
    return code, reason


def _rows(message: Any) -> Arrangement:
    return Arrangement.of_card_rows(
        parse_cards(list(message.front)),
        parse_cards(list(message.middle)),
        parse_cards(list(message.back)),
    )


def test_a_closed_seat_gets_the_solvers_rows_for_its_own_cards(world: World) -> None:
    seated = world.seated()
    deal = world.dealt(seated)
    player = seated.players[0]
    cards = world.hand(player)
    before = world.event_count()
    answer = _suggest(world, player, deal_number=int(deal.rsplit("/", 1)[1]))
    assert world.event_count() == before
    assert answer.deal == deal and answer.WhichOneof("suggestion") == "arrangement"
    assert answer.natural == "" and not answer.discards and not answer.HasField("street")
    rows = _rows(answer.arrangement)
    assert sorted(rows.cards) == sorted(cards)
    assert not check_arrangement(rows).foul
    assert rows == best_play(cards, preset("pagat")).arrangement
    assert _suggest(world, player) == answer  # the same question, the same answer


def test_at_a_table_with_naturals_the_natural_to_declare_comes_too(world: World) -> None:
    creator = world.player("creator")
    create = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()), rule_set_preset="capsa_susun", seat_count=2
    )
    table = world.table_call("CreateTable", create, creator.token).table.name
    players = []
    for index in range(2):
        player = world.player(f"capsa {index}")
        join = table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table)
        player.seat = world.table_call("JoinTable", join, player.token).seat
        players.append(player)
    world.table_call(
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=table),
        players[0].token,
    )
    world.dealt(Seated(table, players))
    for player in players:
        cards = world.hand(player)
        answer = _suggest(world, player)
        expected = best_play(cards, preset("capsa_susun"))
        assert answer.natural == str(expected.natural)  # "none" unless declaring pays
        assert _rows(answer.arrangement) == expected.arrangement


def test_each_refusal_has_its_reason_and_records_nothing(world: World) -> None:
    # At most 4 calls a player: the module's server limits suggestions (a burst of 5).
    seated = world.seated(seat_count=3)
    first, second, third = seated.players
    cases: list[tuple[str, Any, grpc.StatusCode, str]] = [
        (
            "no cards yet",
            lambda: _suggest(world, first),
            grpc.StatusCode.FAILED_PRECONDITION,
            "WRONG_PHASE",
        ),
    ]
    for name, call, code, reason in cases:
        assert _refused(world, call) == (code, reason), name
    world.dealt(seated)
    table = seated.table
    outsider = world.player("outsider")
    missing = "tables/00000000-0000-0000-0000-000000000000/seats/0"
    operator = table_service_pb2.GetSuggestionRequest(seat=first.seat)
    cases = [
        (
            "no seat",
            lambda: _suggest(world, third, seat=" "),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_RESOURCE_NAME",
        ),
        (
            "a seat misspelt",
            lambda: _suggest(world, third, seat=f"{table}/seat/0"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_RESOURCE_NAME",
        ),
        (
            "seat 9",
            lambda: _suggest(world, third, seat=f"{table}/seats/9"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "UNKNOWN_SEAT",
        ),
        (
            "no such table",
            lambda: _suggest(world, third, seat=missing),
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        ),
        (
            "another's seat",
            lambda: _suggest(world, second, seat=first.seat),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
        ),
        (
            "an outsider",
            lambda: _suggest(world, outsider, seat=first.seat),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
        ),
        (
            "the operator",
            lambda: world.table_call(SUGGEST, operator, OPERATOR_TOKEN),
            grpc.StatusCode.PERMISSION_DENIED,
            "PLAYERS_ONLY",
        ),
        (
            "no token",
            lambda: world.table_call(SUGGEST, operator, ""),
            grpc.StatusCode.UNAUTHENTICATED,
            "MISSING_TOKEN",
        ),
        (
            "a past deal",
            lambda: _suggest(world, first, deal_number=0),
            grpc.StatusCode.FAILED_PRECONDITION,
            "WRONG_DEAL",
        ),
        (
            "a later deal",
            lambda: _suggest(world, first, deal_number=2),
            grpc.StatusCode.FAILED_PRECONDITION,
            "WRONG_DEAL",
        ),
    ]
    for name, call, code, reason in cases:
        assert _refused(world, call) == (code, reason), name
    deal = f"{table}/deals/1"
    world.commit(seated, deal, first)
    world.confirm(first)
    confirmed = _refused(world, lambda: _suggest(world, first))
    assert confirmed == (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_CONFIRMED")
    # A seat still arranging is answered meanwhile.
    assert _suggest(world, second).WhichOneof("suggestion") == "arrangement"


def test_a_seat_timed_out_is_refused(world: World) -> None:
    seated, _deal, _chosen = world.timed_out_while_arranging()
    late = seated.players[1]
    reason = _refused(world, lambda: _suggest(world, late))
    assert reason == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_TIMED_OUT")
    on_time = _refused(world, lambda: _suggest(world, seated.players[0]))
    assert on_time == (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_CONFIRMED")


def _place_suggested(world: World, player: Player, answer: Any) -> None:
    world.table_call(
        "PlaceCards",
        table_service_pb2.PlaceCardsRequest(
            request_id=str(uuid.uuid4()),
            seat=player.seat,
            street=answer.street,
            placement=answer.placement,
        ),
        player.token,
    )


def _cards(rows: Any) -> list[Any]:
    return [
        *parse_cards(list(rows.front)),
        *parse_cards(list(rows.middle)),
        *parse_cards(list(rows.back)),
    ]


def test_an_open_face_seat_gets_its_streets_placement_on_its_turn(world: World) -> None:
    seated = open_face_table(world, 2, "pineapple")
    world.dealt(seated)
    discarding = PINEAPPLE_PRESETS["pineapple"].street_discards
    for street in (0, 0, 1):
        table = table_of(world, seated)
        assert table.open_face.street == street
        player = by_seat(seated, table.open_face.turn_seat)
        waiting = next(other for other in seated.players if other is not player)
        turn = _refused(world, lambda w=waiting: _suggest(world, w))
        assert turn == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
        board, cards = street_to_place(my_hand(world, player), player)
        before = world.event_count()
        answer = _suggest(world, player)
        assert world.event_count() == before
        assert answer.WhichOneof("suggestion") == "placement" and answer.street == street
        discards = parse_cards(list(answer.discards))
        assert sorted([*_cards(answer.placement), *discards]) == sorted(cards)
        assert len(discards) == (discarding if street else 0)
        after = (
            len(board.front) + len(answer.placement.front),
            len(board.middle) + len(answer.placement.middle),
            len(board.back) + len(answer.placement.back),
        )
        assert after[0] <= 3 and after[1] <= 5 and after[2] <= 5
        assert _suggest(world, player) == answer  # seeded: the same answer again
        if street == 0:  # a discarding street would need the discard's commitment as well
            _place_suggested(world, player, answer)

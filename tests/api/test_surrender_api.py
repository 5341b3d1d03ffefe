"""AnnounceSurrender over a real server (docs/rules.md §2.8, docs/api.md): in turn, clockwise from
the dealer's left; refused with a clear reason (and nothing written) when out of turn, twice, with
no choice, or at a table without surrender; each announcement public at once on WatchTable, no
card before the seed; a surrendered seat pays the price and still reveals."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Player, Watcher, error_reason, hidden_information_violations
from scenarios import Chosen, Seated, World

from sapsam_proto.v1 import rule_set_pb2, table_pb2, table_service_pb2


def surrender_table(world: World, seat_count: int = 3) -> Seated:
    """A table under ``pagat`` with surrender on (price 2), every seat taken, dealer drawn."""
    creator = world.player("creator")
    request = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()),
        seat_count=seat_count,
        series_length=2,
        rule_set_preset="pagat",
        rule_set_overrides=rule_set_pb2.RuleSet(surrender=rule_set_pb2.SURRENDER_RULE_PAY_PLAYERS),
    )
    table = world.table_call("CreateTable", request, creator.token).table
    assert table.rule_set.surrender == rule_set_pb2.SURRENDER_RULE_PAY_PLAYERS
    assert table.rule_set.surrender_price == 2 and table.rule_set.surrender_seconds == 20
    players = []
    for index in range(seat_count):
        player = world.player(f"player {index}")
        join = table_service_pb2.JoinTableRequest(request_id=str(uuid.uuid4()), table=table.name)
        player.seat = world.table_call("JoinTable", join, player.token).seat
        players.append(player)
    world.table_call(
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(request_id=str(uuid.uuid4()), table=table.name),
        players[0].token,
    )
    return Seated(table.name, players)


def announce(world: World, player: Player, choice: int, **fields: Any) -> Any:
    request = table_service_pb2.AnnounceSurrenderRequest(
        request_id=str(uuid.uuid4()),
        seat=player.seat,
        choice=choice,  # type: ignore[arg-type]
        **fields,
    )
    return world.table_call("AnnounceSurrender", request, player.token)


def refused(world: World, call: Any) -> tuple[grpc.StatusCode, str, Any]:
    """Make a call that must fail; it must write nothing. (code, reason, BadRequest)."""
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as caught:
        call()
    code, reason, _, bad_request = error_reason(caught.value)
    assert world.event_count() == before
    return code, reason, bad_request


def table_view(world: World, seated: Seated) -> Any:
    request = table_service_pb2.GetTableRequest(name=seated.table)
    return world.table_call("GetTable", request, OPERATOR_TOKEN).table


def in_turn(world: World, seated: Seated) -> list[Player]:
    """The seated players in the order they announce (clockwise from the dealer's left)."""
    view = table_view(world, seated)
    dealer = int(view.dealer_seat.rsplit("/", 1)[1])
    count = len(seated.players)
    by_position = {player.position: player for player in seated.players}
    return [by_position[(dealer + step) % count] for step in range(1, count + 1)]


def test_seats_announce_in_turn_and_a_surrender_pays_the_price(world: World) -> None:
    seated = surrender_table(world, 3)
    spectator = world.player("spectator")
    watcher = Watcher(world.api, seated.table, spectator.token)
    deal = world.dealt(seated)
    chosen: dict[str, Chosen] = {}
    for player in seated.players:
        chosen[player.seat] = world.commit(seated, deal, player)
        world.confirm(player)
    first, second, last = in_turn(world, seated)
    view = table_view(world, seated)
    assert view.phase == table_pb2.TABLE_PHASE_ANNOUNCING
    assert view.announcing_seat == first.seat and view.HasField("deadline_time")

    # Out of turn, no choice, a stale version: refused, nothing written.
    code, reason, _ = refused(
        world, lambda: announce(world, second, table_pb2.SURRENDER_CHOICE_PLAY)
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    code, reason, bad = refused(
        world, lambda: announce(world, first, table_pb2.SURRENDER_CHOICE_UNSPECIFIED)
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT")
    assert [violation.field for violation in bad.field_violations] == ["choice"]
    code, reason, _ = refused(
        world,
        lambda: announce(
            world, first, table_pb2.SURRENDER_CHOICE_PLAY, expected_version=view.version - 1
        ),
    )
    assert reason == "VERSION_MISMATCH"

    announce(world, first, table_pb2.SURRENDER_CHOICE_SURRENDER, expected_version=view.version)
    code, reason, _ = refused(
        world, lambda: announce(world, first, table_pb2.SURRENDER_CHOICE_PLAY)
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_ANNOUNCED")
    view = table_view(world, seated)
    shown = {seat.name: seat.announcement for seat in view.seats}
    assert shown[first.seat] == table_pb2.SURRENDER_CHOICE_SURRENDER
    assert shown[second.seat] == table_pb2.SURRENDER_CHOICE_UNSPECIFIED
    assert view.announcing_seat == second.seat
    # No reveal while seats announce.
    code, reason, _ = refused(world, lambda: world.reveal(first, chosen[first.seat]))
    assert reason == "WRONG_PHASE"

    announce(world, second, table_pb2.SURRENDER_CHOICE_PLAY)
    announce(world, last, table_pb2.SURRENDER_CHOICE_PLAY)
    assert table_view(world, seated).phase == table_pb2.TABLE_PHASE_REVEALING
    for player in seated.players:  # the surrendered seat reveals too
        world.reveal(player, chosen[player.seat])
    result = world.table_call(
        "GetDealResult", table_service_pb2.GetDealResultRequest(name=deal), OPERATOR_TOKEN
    ).result
    deltas = {seat.seat: seat.score_delta for seat in result.seats}
    assert deltas[first.seat] == -4 and sum(deltas.values()) == 0

    # WatchTable showed each announcement as it came, and no card before the seed.
    def announced() -> list[Any]:
        return [
            message.event.surrender_announced
            for message in watcher.messages
            if message.event.WhichOneof("payload") == "surrender_announced"
        ]

    watcher.wait_for(lambda: len(announced()) == 3)
    assert [(event.seat, event.choice, event.timed_out) for event in announced()] == [
        (first.seat, table_pb2.SURRENDER_CHOICE_SURRENDER, False),
        (second.seat, table_pb2.SURRENDER_CHOICE_PLAY, False),
        (last.seat, table_pb2.SURRENDER_CHOICE_PLAY, False),
    ]
    (opened,) = [
        message.event.announcements_opened
        for message in watcher.messages
        if message.event.WhichOneof("payload") == "announcements_opened"
    ]
    assert list(opened.seats) == [first.seat, second.seat, last.seat]
    watcher.cancel()
    assert hidden_information_violations(watcher.observations, {}) == []


def test_announcing_at_a_table_without_surrender_is_refused(world: World) -> None:
    seated = world.seated(2)
    deal = world.dealt(seated)
    for player in seated.players:
        world.commit(seated, deal, player)
        world.confirm(player)
    code, reason, _ = refused(
        world, lambda: announce(world, seated.players[0], table_pb2.SURRENDER_CHOICE_SURRENDER)
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SURRENDER_OFF")
    assert world.phase(seated) == table_pb2.TABLE_PHASE_REVEALING

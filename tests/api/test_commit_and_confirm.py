"""CommitArrangement with ``confirm``: the commit and the confirmation in one call and one append,
exactly the events the two separate calls log; a retry answers the same and writes nothing; a
refused call writes nothing. On a real server over a socket."""

from __future__ import annotations

import dataclasses
import os
import uuid
from typing import Any

import grpc
import pytest
from api_client import Player, error_reason
from scenarios import Seated, World

from sapsam import fairness
from sapsam.rules.presets import preset
from sapsam.rules.solver import solve
from sapsam_proto.v1 import table_pb2, table_service_pb2


def _commit_request(
    world: World, seated: Seated, deal: str, player: Player, confirm: bool
) -> table_service_pb2.CommitArrangementRequest:
    arrangement = solve(world.hand(player), preset("pagat"))
    commitment = fairness.arrangement_commitment(
        seated.table_id, int(deal.rsplit("/", 1)[1]), player.position, arrangement, os.urandom(16)
    )
    return table_service_pb2.CommitArrangementRequest(
        request_id=str(uuid.uuid4()), seat=player.seat, commitment=commitment, confirm=confirm
    )


def _shape(events: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each event's type and fields, without what differs between two tables' deals (the
    commitment hashes and deadlines)."""
    shaped = []
    for event in events:
        fields = dataclasses.asdict(event)
        for varying in ("commitment", "reveal_deadline_ms"):
            fields.pop(varying, None)
        shaped.append((type(event).__name__, fields))
    return shaped


def _deal_tail(world: World, seated: Seated, after: int) -> list[Any]:
    return world.api.logged_events(seated.table)[after:]


def test_commit_with_confirm_logs_what_two_calls_log(world: World) -> None:
    # Table one: each seat commits and confirms with two calls.
    two_calls = world.seated()
    deal = world.dealt(two_calls)
    before = len(world.api.logged_events(two_calls.table))
    for player in two_calls.players:
        world.table_call(
            "CommitArrangement",
            _commit_request(world, two_calls, deal, player, confirm=False),
            player.token,
        )
        world.confirm(player)
    expected = _shape(_deal_tail(world, two_calls, before))

    # Table two: each seat commits with confirm; the last one opens the reveals.
    one_call = world.seated()
    deal = world.dealt(one_call)
    before = len(world.api.logged_events(one_call.table))
    versions = []
    for player in one_call.players:
        events_before = world.event_count()
        response = world.table_call(
            "CommitArrangement",
            _commit_request(world, one_call, deal, player, confirm=True),
            player.token,
        )
        assert response.confirmed
        versions.append(response.version)
        appended = world.event_count() - events_before
        assert appended == (2 if player is not one_call.players[-1] else 3)  # one append each
    assert _shape(_deal_tail(world, one_call, before)) == expected
    assert [type(event).__name__ for event in _deal_tail(world, one_call, before)][-1] == (
        "RevealsOpened"
    )
    assert world.phase(one_call) == table_pb2.TABLE_PHASE_REVEALING
    assert versions[-1] == len(world.api.logged_events(one_call.table))


def test_commit_without_confirm_says_not_confirmed(world: World) -> None:
    seated = world.seated()
    deal = world.dealt(seated)
    player = seated.players[0]
    response = world.table_call(
        "CommitArrangement", _commit_request(world, seated, deal, player, False), player.token
    )
    assert not response.confirmed
    assert world.phase(seated) == table_pb2.TABLE_PHASE_ARRANGING


def test_a_retry_answers_the_same_and_writes_nothing(world: World) -> None:
    seated = world.seated()
    deal = world.dealt(seated)
    player = seated.players[0]
    request = _commit_request(world, seated, deal, player, confirm=True)
    first = world.table_call("CommitArrangement", request, player.token)
    count = world.event_count()
    again = world.table_call("CommitArrangement", request, player.token)
    assert again == first
    assert again.confirmed
    assert world.event_count() == count
    # The same request id with confirm changed is another request.
    changed = table_service_pb2.CommitArrangementRequest()
    changed.CopyFrom(request)
    changed.confirm = False
    with pytest.raises(grpc.RpcError) as raised:
        world.table_call("CommitArrangement", changed, player.token)
    assert error_reason(raised.value)[1] == "REQUEST_ID_REUSED"
    assert world.event_count() == count


def _refused(world: World, request: Any, player: Player) -> tuple[grpc.StatusCode, str]:
    count = world.event_count()
    with pytest.raises(grpc.RpcError) as raised:
        world.table_call("CommitArrangement", request, player.token)
    assert world.event_count() == count  # a refused call writes nothing
    code, reason, _, _ = error_reason(raised.value)
    return code, reason


def test_confirm_outside_arranging_writes_nothing(world: World) -> None:
    seated = world.seated()
    world.started(seated)  # a deal not cut yet: nothing to arrange
    player = seated.players[0]
    request = table_service_pb2.CommitArrangementRequest(
        request_id=str(uuid.uuid4()), seat=player.seat, commitment=bytes(32), confirm=True
    )
    assert _refused(world, request, player) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "WRONG_PHASE",
    )


def test_a_bad_commitment_with_confirm_writes_nothing(world: World) -> None:
    seated = world.seated()
    deal = world.dealt(seated)
    player = seated.players[0]
    request = _commit_request(world, seated, deal, player, confirm=True)
    request.commitment = request.commitment[:31]
    assert _refused(world, request, player) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_COMMITMENT",
    )
    request.commitment = bytes(32)
    request.commitment_scheme = 9
    request.request_id = str(uuid.uuid4())
    assert _refused(world, request, player) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_COMMITMENT",
    )


def test_commit_with_confirm_after_confirming_writes_nothing(world: World) -> None:
    seated = world.seated()
    deal = world.dealt(seated)
    player = seated.players[0]
    world.table_call(
        "CommitArrangement", _commit_request(world, seated, deal, player, True), player.token
    )
    again = _commit_request(world, seated, deal, player, confirm=True)
    assert _refused(world, again, player) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "ALREADY_CONFIRMED",
    )

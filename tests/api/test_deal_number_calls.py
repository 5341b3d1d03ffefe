"""`deal_number` on the in-deal calls: a call for another deal is refused and records nothing.

The bug it closes: rows chosen for deal 1 that arrive after deal 2 was dealt used to be taken as
deal 2's commitment, which the client (holding them as deal 1's) could never reveal.
"""

from __future__ import annotations

import uuid

import grpc
import pytest
from api_client import error_reason
from scenarios import World

from sapsam_proto.v1 import table_pb2, table_service_pb2


def test_a_commit_for_a_past_deal_is_refused_and_records_nothing(world: World) -> None:
    seated = world.seated(series_length=3)
    world.played(seated)
    deal = world.dealt(seated)
    assert deal.endswith("/2")
    late = seated.players[1]
    before = world.event_count()
    with pytest.raises(grpc.RpcError) as refused:
        world.commit(seated, deal, late, deal_number=1)
    code, reason, info, _ = error_reason(refused.value)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "WRONG_DEAL")
    assert info is not None and info.domain == "sapsam.dev"
    assert "deal 1" in refused.value.details() and "current deal is 2" in refused.value.details()
    assert world.event_count() == before
    for call, request in (
        (
            "ConfirmArrangement",
            table_service_pb2.ConfirmArrangementRequest(
                request_id=str(uuid.uuid4()), seat=late.seat, deal_number=1
            ),
        ),
        (
            "RevealArrangement",
            table_service_pb2.RevealArrangementRequest(
                request_id=str(uuid.uuid4()),
                seat=late.seat,
                arrangement=table_pb2.Arrangement(),
                nonce=bytes(16),
                deal_number=1,
            ),
        ),
    ):
        with pytest.raises(grpc.RpcError) as other:
            world.table_call(call, request, late.token)
        assert error_reason(other.value)[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "WRONG_DEAL")
    assert world.event_count() == before


def test_the_current_deal_number_or_none_is_accepted(world: World) -> None:
    seated = world.seated(series_length=3)
    world.played(seated)
    deal = world.dealt(seated)
    first, second = seated.players[:2]
    before = world.event_count()
    world.commit(seated, deal, first, deal_number=2)
    world.commit(seated, deal, second)  # an older client that sends no deal number
    assert world.event_count() == before + 2

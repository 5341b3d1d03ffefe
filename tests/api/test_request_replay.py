"""A mutating call repeated with the same request_id is applied once and answered identically,
even after the table has moved on; the same id on another table is refused."""

from __future__ import annotations

import os
import uuid

import grpc
from api_client import Api, error_reason
from google.protobuf.message import Message

from sapsam import fairness
from sapsam.rules.cards import parse_cards
from sapsam.rules.solver import solve
from sapsam_proto.v1 import table_pb2, table_service_pb2


class Replayer:
    """Sends each request twice and keeps both answers, to compare at the end."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.sent: list[tuple[str, Message, str, bytes]] = []

    def twice(self, method: str, request: Message, token: str) -> object:
        before = self.api.event_count()
        first = self.api.call(method, request, token)
        after_first = self.api.event_count()
        again = self.api.call(method, request, token)
        assert again.SerializeToString() == first.SerializeToString(), method
        assert self.api.event_count() == after_first > before, method
        self.sent.append((method, request, token, first.SerializeToString()))
        return first

    def replay_all_later(self) -> None:
        """Every request once more, after the whole deal: still the original answers."""
        count = self.api.event_count()
        for method, request, token, original in self.sent:
            assert self.api.call(method, request, token).SerializeToString() == original, method
        assert self.api.event_count() == count


def rid() -> str:
    return str(uuid.uuid4())


def test_every_mutating_call_is_idempotent(api: Api) -> None:
    replay = Replayer(api)
    creator, ann, bob = (api.register(name) for name in ("creator", "ann", "bob"))
    table = replay.twice(
        "CreateTable",
        table_service_pb2.CreateTableRequest(request_id=rid(), seat_count=2, series_length=1),
        creator.token,
    ).table  # type: ignore[attr-defined]
    seats = {}
    for player in (ann, bob):
        joined = replay.twice(
            "JoinTable",
            table_service_pb2.JoinTableRequest(request_id=rid(), table=table.name),
            player.token,
        )
        seats[joined.seat] = player  # type: ignore[attr-defined]
    replay.twice(
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(request_id=rid(), table=table.name),
        bob.token,
    )
    started = replay.twice(
        "StartDeal",
        table_service_pb2.StartDealRequest(request_id=rid(), table=table.name),
        ann.token,
    )
    for seat, player in seats.items():
        replay.twice(
            "ContributeEntropy",
            table_service_pb2.ContributeEntropyRequest(
                request_id=rid(), seat=seat, entropy=os.urandom(8)
            ),
            player.token,
        )
    view = api.call("GetTable", table_service_pb2.GetTableRequest(name=table.name), ann.token)
    cutter = view.table.cutter_seat
    replay.twice(
        "CutDeck",
        table_service_pb2.CutDeckRequest(request_id=rid(), seat=cutter, position=33),
        seats[cutter].token,
    )
    table_id = uuid.UUID(table.name.removeprefix("tables/"))
    deal_number = int(started.deal.rsplit("/", 1)[1])  # type: ignore[attr-defined]
    reveals = {}
    for seat, player in seats.items():
        hand = api.call("GetMyHand", table_service_pb2.GetMyHandRequest(seat=seat), player.token)
        arrangement = solve(parse_cards(list(hand.cards)))
        nonce = os.urandom(16)
        position = int(seat.rsplit("/", 1)[1])
        commitment = fairness.arrangement_commitment(
            table_id, deal_number, position, arrangement, nonce
        )
        replay.twice(
            "CommitArrangement",
            table_service_pb2.CommitArrangementRequest(
                request_id=rid(), seat=seat, commitment=commitment
            ),
            player.token,
        )
        replay.twice(
            "ConfirmArrangement",
            table_service_pb2.ConfirmArrangementRequest(request_id=rid(), seat=seat),
            player.token,
        )
        reveals[seat] = (
            table_pb2.Arrangement(
                front=[str(c) for c in arrangement.front],
                middle=[str(c) for c in arrangement.middle],
                back=[str(c) for c in arrangement.back],
            ),
            nonce,
        )
    for seat, (rows, nonce) in reveals.items():
        replay.twice(
            "RevealArrangement",
            table_service_pb2.RevealArrangementRequest(
                request_id=rid(), seat=seat, arrangement=rows, nonce=nonce
            ),
            seats[seat].token,
        )
    final = api.call("GetTable", table_service_pb2.GetTableRequest(name=table.name), ann.token)
    assert final.table.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    replay.replay_all_later()


def test_a_request_id_reused_on_another_table_is_refused(api: Api) -> None:
    creator, ann = api.register("creator"), api.register("ann")
    tables = [
        api.call(
            "CreateTable", table_service_pb2.CreateTableRequest(seat_count=2), creator.token
        ).table.name
        for _ in range(2)
    ]
    api.call(
        "JoinTable",
        table_service_pb2.JoinTableRequest(request_id="join", table=tables[0]),
        ann.token,
    )
    before = api.event_count()
    try:
        api.call(
            "JoinTable",
            table_service_pb2.JoinTableRequest(request_id="join", table=tables[1]),
            ann.token,
        )
    except grpc.RpcError as error:
        code, reason, _, bad_request = error_reason(error)
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
        assert [v.field for v in bad_request.field_violations] == ["request_id"]
    else:
        raise AssertionError("a reused request id was accepted for another table")
    assert api.event_count() == before

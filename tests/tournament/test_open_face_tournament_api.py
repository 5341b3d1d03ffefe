"""CreateTournament with an open-face preset over a real server (issue #18): the tournament
carries its rule set in ``open_face_rule_set`` (``rule_set`` unset), a round is one set a
table, and a bad request is refused with a clear reason, writing nothing."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import psycopg
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status
from tournament_play import OPERATOR_TOKEN

from sapsam.api.server import RunningServer
from sapsam_proto.v1 import tournament_service_pb2, tournament_service_pb2_grpc

OPERATOR = (("authorization", f"Bearer {OPERATOR_TOKEN}"),)
FAR_FUTURE = Timestamp(seconds=4_102_444_800)


def _event_count(database_url: str) -> int:
    with psycopg.connect(database_url) as connection:
        row = connection.execute("SELECT count(*) FROM events").fetchone()
    assert row is not None
    return int(row[0])


def _request(**changes: Any) -> tournament_service_pb2.CreateTournamentRequest:
    values: dict[str, Any] = {
        "request_id": str(uuid.uuid4()),
        "display_name": "OFC cup",
        "rule_set_preset": "ofc_classic",
        "seats_per_table": 3,
        "rounds": 2,
        "deals_per_round": 3,
        "registration_close_time": FAR_FUTURE,
        "max_entrants": 9,
    }
    values.update(changes)
    return tournament_service_pb2.CreateTournamentRequest(**values)


def test_create_tournament_takes_an_open_face_preset(
    server: RunningServer, database_url: str
) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        tournament = stub.CreateTournament(_request(), metadata=OPERATOR).tournament
        assert tournament.HasField("open_face_rule_set")
        assert not tournament.HasField("rule_set")
        assert tournament.open_face_rule_set.name == "ofc_classic"
        assert tournament.deals_per_round == 3
        got = stub.GetTournament(
            tournament_service_pb2.GetTournamentRequest(name=tournament.name), metadata=OPERATOR
        )
        assert got.tournament.open_face_rule_set == tournament.open_face_rule_set
        closed = stub.CreateTournament(
            _request(rule_set_preset="pagat", seats_per_table=4), metadata=OPERATOR
        ).tournament
        assert closed.HasField("rule_set") and not closed.HasField("open_face_rule_set")

        def refused(request: Any) -> tuple[grpc.StatusCode, str, str]:
            before = _event_count(database_url)
            with pytest.raises(grpc.RpcError) as caught:
                stub.CreateTournament(request, metadata=OPERATOR)
            assert _event_count(database_url) == before
            status = rpc_status.from_call(caught.value)
            assert status is not None
            for detail in status.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    return caught.value.code(), info.reason, caught.value.details() or ""
            raise AssertionError("no ErrorInfo")

        code, reason, message = refused(_request(deals_per_round=5))
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT")
        assert "one set a table" in message and "must be 3" in message
        code, reason, _ = refused(_request(seats_per_table=5, deals_per_round=5))
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEAT_COUNT")
        code, reason, message = refused(_request(rule_set_preset="ofc_nonesuch"))
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RULE_SET")

"""AuditService on a real server: export, verify and replay deals played through the API.

Deals are played through the TableService stubs (fouls included); exports come back over gRPC and
verify offline with the package alone; a player may not export a running deal or another table's
deal (PERMISSION_DENIED), and the operator's export of a running deal holds no secret.
"""

from __future__ import annotations

import json
import uuid

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Api, Player, bearer, error_reason

from sapsam.audit import verify_export
from sapsam.rules.presets import preset
from sapsam_proto.v1 import (
    audit_pb2,
    audit_service_pb2,
    audit_service_pb2_grpc,
    table_service_pb2,
)


def _stub(api: Api) -> audit_service_pb2_grpc.AuditServiceStub:
    return audit_service_pb2_grpc.AuditServiceStub(api.channel)


def _played(api: Api, deals: int) -> tuple[str, list[Player]]:
    table, players = api.seated_table(2, "pagat", series_length=8)
    for deal_index in range(deals):
        api.play_deal(table, players, preset("pagat"), deal_index)
    return table, players


def _export(api: Api, name: str, token: str) -> audit_service_pb2.ExportDealResponse:
    request = audit_service_pb2.ExportDealRequest(request_id=str(uuid.uuid4()), name=name)
    response: audit_service_pb2.ExportDealResponse = _stub(api).ExportDeal(
        request, metadata=bearer(token)
    )
    return response


def test_a_player_exports_verifies_and_replays_a_finished_deal(api: Api) -> None:
    table, players = _played(api, 2)
    deal = f"{table}/deals/2"
    exported = _export(api, deal, players[1].token)
    assert exported.finished and exported.event_count == len(exported.export.splitlines()) - 1
    assert len(exported.segments) == 2 and exported.segments[0].first_version == 1
    assert exported.segments[0].anchor_hash == bytes(32)
    # The file verifies offline with the package alone.
    offline = verify_export(exported.export.splitlines())
    assert offline.ok and offline.deals_verified == 1
    header = json.loads(exported.export.splitlines()[0])
    assert header["deals"] == [2] and header["table_id"] == table.removeprefix("tables/")

    stub = _stub(api)
    online = stub.VerifyDeal(
        audit_service_pb2.VerifyDealRequest(name=deal), metadata=bearer(players[0].token)
    )
    assert online.ok and online.deals_verified == 1
    names = [check.name for check in online.checks]
    assert {"chain", "anchor", "seed_commitment", "scores", "stored_chain"} <= set(names)
    assert all(
        check.status == audit_pb2.CHECK_STATUS_PASSED
        for check in online.checks
        if check.name != "series_totals"
    )
    assert "✓ deal 2 · scores" in online.report_text
    assert not online.HasField("first_divergence")
    sent = stub.VerifyDeal(
        audit_service_pb2.VerifyDealRequest(export=exported.export),
        metadata=bearer(players[0].token),
    )
    assert sent.ok
    # Each text tells the deal as `sapsam audit verify` prints it: the players before the
    # checks, the deal's account row by row after them, the verdict last.
    for text in (online.report_text, sent.report_text):
        assert "front: " in text and "running totals after deal 2" in text
        assert text.index("✓ deal 2 · scores") < text.index("running totals after deal 2")

    frames = [
        response.frame
        for response in stub.ReplayDeal(
            audit_service_pb2.ReplayDealRequest(name=deal), metadata=bearer(players[0].token)
        )
    ]
    assert len(frames) == exported.event_count
    assert [frame.version for frame in frames] == sorted(frame.version for frame in frames)
    dealt = next(frame for frame in frames if frame.event_type == "CardsDealt")
    assert dealt.deal_number == 2 and dealt.HasField("dealer")
    for seat in dealt.seats:
        assert len(seat.cards) == 13 and seat.seen_by == f"seat {seat.seat} only"
        assert seat.player.startswith("players/")
    one = list(
        stub.ReplayDeal(
            audit_service_pb2.ReplayDealRequest(name=deal, at_version=dealt.version),
            metadata=bearer(OPERATOR_TOKEN),
        )
    )
    assert [response.frame for response in one] == [dealt]


def test_a_tampered_export_sent_to_verify_is_named(api: Api) -> None:
    table, players = _played(api, 1)
    exported = _export(api, f"{table}/deals/1", players[0].token)
    lines = exported.export.splitlines()
    index = next(i for i, line in enumerate(lines) if '"type":"SeedRevealed"' in line)
    event = json.loads(lines[index])
    event["data"]["seed"] = "00" * 32
    lines[index] = json.dumps(event)
    report = _stub(api).VerifyDeal(
        audit_service_pb2.VerifyDealRequest(export="\n".join(lines)),
        metadata=bearer(players[0].token),
    )
    assert not report.ok
    assert report.first_divergence.name == "chain"
    assert report.first_divergence.status == audit_pb2.CHECK_STATUS_FAILED
    failed = {
        (c.name, c.deal_number) for c in report.checks if c.status == audit_pb2.CHECK_STATUS_FAILED
    }
    assert ("seed_commitment", 1) in failed
    assert "✗ chain" in report.report_text
    assert "no account of the deals: a check failed" in report.report_text


def _denied(api: Api, call: str, request: object, token: str) -> tuple[grpc.StatusCode, str]:
    stub = _stub(api)
    with pytest.raises(grpc.RpcError) as caught:
        response = getattr(stub, call)(request, metadata=bearer(token))
        if call == "ReplayDeal":
            list(response)
    code, reason, _, _ = error_reason(caught.value)
    return code, reason


def test_a_player_cannot_export_a_running_deal_or_another_tables_deal(api: Api) -> None:
    table, players = _played(api, 1)
    api.call(
        "StartDeal",
        table_service_pb2.StartDealRequest(request_id=str(uuid.uuid4()), table=table),
        players[0].token,
    )
    running = f"{table}/deals/2"
    finished = f"{table}/deals/1"
    stranger = api.register("stranger")
    denied = grpc.StatusCode.PERMISSION_DENIED
    for call, request_type in (
        ("ExportDeal", audit_service_pb2.ExportDealRequest),
        ("VerifyDeal", audit_service_pb2.VerifyDealRequest),
        ("ReplayDeal", audit_service_pb2.ReplayDealRequest),
    ):
        assert _denied(api, call, request_type(name=running), players[0].token) == (
            denied,
            "DEAL_NOT_FINISHED",
        )
        assert _denied(api, call, request_type(name=finished), stranger.token) == (
            denied,
            "NOT_SEATED",
        )
    # Missing and malformed names, and no token at all.
    assert _denied(
        api,
        "ExportDeal",
        audit_service_pb2.ExportDealRequest(name=f"{table}/deals/9"),
        OPERATOR_TOKEN,
    ) == (grpc.StatusCode.NOT_FOUND, "DEAL_NOT_FOUND")
    assert _denied(
        api,
        "ExportDeal",
        audit_service_pb2.ExportDealRequest(name="tables/x/deals/1"),
        OPERATOR_TOKEN,
    ) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RESOURCE_NAME")
    with pytest.raises(grpc.RpcError) as anonymous:
        _stub(api).ExportDeal(audit_service_pb2.ExportDealRequest(name=finished))
    assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED
    # The operator may export the running deal: what the log holds, no seed, checks pending.
    exported = _export(api, running, OPERATOR_TOKEN)
    assert not exported.finished
    types = [json.loads(line)["type"] for line in exported.export.splitlines()[1:]]
    assert "SeedRevealed" not in types[types.index("DealStarted") :]
    report = verify_export(exported.export.splitlines())
    assert report.ok and report.named("fair_dealing", 2).status == "pending"

"""Exports carry the players' display names as labels, and the audit names players by them,
beside the ids, which stay what the checks bind.

Deals are played through a real server by registered players ("player 0", "player 1"); the
export comes back over gRPC (``ExportDeal``) and from ``sapsam audit export --player
players/<id>``; ``sapsam audit verify`` and ``replay`` name the seats by display name, and a
forged label changes no check: it is shown as the export's label, with the id beside it.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from api_client import Api, bearer

from sapsam.cli import main
from sapsam.rules.presets import preset
from sapsam_proto.v1 import audit_service_pb2, audit_service_pb2_grpc


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_audit_names_players_by_display_name_beside_their_ids(
    api: Api, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table, players = api.seated_table(2, "pagat", series_length=8)
    for deal_index in range(2):
        api.play_deal(table, players, preset("pagat"), deal_index)
    ids = [player.name.removeprefix("players/") for player in players]
    stub = audit_service_pb2_grpc.AuditServiceStub(api.channel)
    exported = stub.ExportDeal(
        audit_service_pb2.ExportDealRequest(request_id=str(uuid.uuid4()), name=f"{table}/deals/2"),
        metadata=bearer(players[0].token),
    )
    header = json.loads(exported.export.splitlines()[0])
    assert header["display_names"] == {ids[0]: "player 0", ids[1]: "player 1"}

    deal_file = tmp_path / "deal.jsonl"
    code, _, _ = _run(
        capsys, "audit", "export", "--table", table, "--deal", "2", "--player", players[1].name,
        "-o", str(deal_file), "--database-url", api.database_url,
    )  # fmt: skip
    assert code == 0
    assert json.loads(deal_file.read_text(encoding="utf-8").splitlines()[0])["display_names"] == {
        ids[0]: "player 0",
        ids[1]: "player 1",
    }
    code, out, _ = _run(capsys, "audit", "verify", str(deal_file), "--plain")
    assert code == 4, out
    assert "Players (the names are labels the export carries, not checked; the checks bind" in out
    for seat, player_id in enumerate(ids):
        assert f"  seat {seat}: player {seat} = player {player_id}\n" in out
    assert "player 0 v player 1: player 0 " in out and "running totals after deal 2" in out
    assert "✓ deal 2 · contributions — the deck came from the committed seed" in out
    code, out, _ = _run(capsys, "audit", "replay", str(deal_file), "--plain")
    assert code == 0 and "  seat 0 player 0: " in out and "  seat 1 player 1: " in out

    # A label is not identity: a forged one changes no check and is shown beside the real id.
    lines = deal_file.read_text(encoding="utf-8").splitlines()
    forged = json.loads(lines[0])
    forged["display_names"][ids[0]] = "player 1"
    forged_file = tmp_path / "forged.jsonl"
    forged_file.write_text("\n".join([json.dumps(forged), *lines[1:]]) + "\n", encoding="utf-8")
    code, forged_out, _ = _run(capsys, "audit", "verify", str(forged_file), "--plain", "--json")
    code_before, before_out, _ = _run(capsys, "audit", "verify", str(deal_file), "--json")
    assert (code, json.loads(forged_out)["checks"]) == (
        code_before,
        json.loads(before_out)["checks"],
    )
    code, out, _ = _run(capsys, "audit", "verify", str(forged_file), "--plain")
    assert f"  seat 0: player 1 = player {ids[0]}\n" in out
    assert "player 1 (seat 0) v player 1 (seat 1)" in out  # two seats, one label: told apart

    # A label beyond the limits is a format error, named.
    forged["display_names"][ids[0]] = "x" * 65
    forged_file.write_text("\n".join([json.dumps(forged), *lines[1:]]) + "\n", encoding="utf-8")
    code, out, _ = _run(capsys, "audit", "verify", str(forged_file))
    assert code == 1 and "display_names" in out

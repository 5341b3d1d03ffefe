"""Exports that carry their proof, made by every exporter from a real database whose server signs
the transparency log (docs/audit.md §2.5 and §4.5): ``ExportDeal`` over gRPC and ``sapsam audit
export`` from the database both carry a checkpoint signed by the server's key and each event's
inclusion proof, and verify ANCHORED against that pinned key offline; ``VerifyDeal`` gives the
same three verdicts; a deal rewritten in the database by its owner and re-chained (triggers off,
every hash recomputed) is exported again and FAILS, its leaf hashes no longer the signed tree's.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import grpc
import psycopg
import pytest
from api_client import OPERATOR_TOKEN, Api, bearer, error_reason
from serving import TEST_SERVER_KEYS

from sapsam.audit import verify_export
from sapsam.audit.anchoring import Trust
from sapsam.audit.report import Verdict
from sapsam.cli import main
from sapsam.log.chain import canonical_event_bytes, chain_hash
from sapsam.rules.presets import preset
from sapsam_proto.v1 import audit_pb2, audit_service_pb2, audit_service_pb2_grpc

VKEY = TEST_SERVER_KEYS.signer.verifier.vkey()
PINNED = Trust(server_keys=(TEST_SERVER_KEYS.signer.verifier,))


def _stub(api: Api) -> audit_service_pb2_grpc.AuditServiceStub:
    return audit_service_pb2_grpc.AuditServiceStub(api.channel)


def _export(api: Api, name: str, **fields: int) -> audit_service_pb2.ExportDealResponse:
    request = audit_service_pb2.ExportDealRequest(request_id=str(uuid.uuid4()), name=name, **fields)
    response: audit_service_pb2.ExportDealResponse = _stub(api).ExportDeal(
        request, metadata=bearer(OPERATOR_TOKEN)
    )
    return response


def _verify(api: Api, **fields: object) -> audit_service_pb2.VerifyDealResponse:
    request = audit_service_pb2.VerifyDealRequest(request_id=str(uuid.uuid4()), **fields)
    response: audit_service_pb2.VerifyDealResponse = _stub(api).VerifyDeal(
        request, metadata=bearer(OPERATOR_TOKEN)
    )
    return response


def _played(api: Api) -> str:
    table, players = api.seated_table(2, "pagat", series_length=8)
    for deal_index in range(2):
        api.play_deal(table, players, preset("pagat"), deal_index)
    return table


def test_export_deal_carries_its_proof_and_verifies_anchored(api: Api) -> None:
    table = _played(api)
    exported = _export(api, f"{table}/deals/2")
    assert not exported.unanchored_versions and exported.checkpoint_tree_size > 0
    lines = exported.export.split("\n")
    header = json.loads(lines[0])
    assert header["transparency"]["checkpoint"].startswith("sapsam/test\n")
    assert all("inclusion" in json.loads(line) for line in lines[1:] if line)
    report = verify_export(lines, trust=PINNED)
    assert report.verdict is Verdict.ANCHORED, report.failed_names()
    assert verify_export(lines, trust=Trust()).verdict is Verdict.INTERNALLY_CONSISTENT_ONLY
    # A consistency proof from a tree size the caller holds.
    later = _export(api, f"{table}/deals/2", known_tree_size=3)
    consistency = json.loads(later.export.split("\n")[0])["transparency"]["consistency"]
    assert [(c["old_size"], c["new_size"]) for c in consistency] == [
        (3, later.checkpoint_tree_size)
    ]


def test_verify_deal_gives_the_three_verdicts(api: Api) -> None:
    table = _played(api)
    by_name = _verify(api, name=f"{table}/deals/1")
    assert by_name.verdict == audit_pb2.VERIFY_VERDICT_ANCHORED
    assert by_name.anchor.signed_by == TEST_SERVER_KEYS.signer.verifier.label
    assert by_name.anchor.origin == "sapsam/test" and not by_name.anchor.caller_checkpoint
    assert "ANCHORED: every event is in" in by_name.report_text
    text = _export(api, f"{table}/deals/1").export
    sent = _verify(api, export=text, server_keys=[VKEY])
    assert sent.verdict == audit_pb2.VERIFY_VERDICT_ANCHORED and sent.ok
    unpinned = _verify(api, export=text)
    assert unpinned.verdict == audit_pb2.VERIFY_VERDICT_INTERNALLY_CONSISTENT_ONLY
    assert not unpinned.HasField("anchor") and unpinned.ok
    forged = text.replace('"actor":"', '"actor":"x', 1)
    failed = _verify(api, export=forged, server_keys=[VKEY])
    assert failed.verdict == audit_pb2.VERIFY_VERDICT_FAILED and not failed.ok
    for bad in ({"server_keys": ["not a key"]}, {"server_keys": [VKEY] * 17}):
        with pytest.raises(grpc.RpcError) as error:
            _verify(api, export=text, **bad)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error_reason(error.value)[1] == "INVALID_ARGUMENT"
    with pytest.raises(grpc.RpcError) as error:
        _verify(api, name=f"{table}/deals/1", server_keys=[VKEY])
    assert error_reason(error.value)[1] == "INVALID_ARGUMENT"


def _cli_export(database_url: str, table: str, deal: int, path: Path) -> None:
    code = main(
        [
            "audit",
            "export",
            "--table",
            table,
            "--deal",
            str(deal),
            "-o",
            str(path),
            "--database-url",
            database_url,
        ]
    )
    assert code == 0


def test_the_command_line_export_carries_the_proof_and_a_rewrite_fails(
    api: Api, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _played(api)
    deal_file = tmp_path / "deal.jsonl"
    _cli_export(database_url, table, 2, deal_file)
    assert "not yet under a checkpoint" not in capsys.readouterr().err
    assert main(["audit", "verify", str(deal_file), "--server-key", VKEY]) == 0
    assert "ANCHORED: every event is in" in capsys.readouterr().out
    assert main(["audit", "verify", str(deal_file)]) == 4
    # The owner rewrites deal 2's cut in the database and re-chains the stream from there: the
    # stored chain holds again, but the signed tree still has the old leaves.
    stream = f"table-{table.removeprefix('tables/')}"
    _rewrite_cut(database_url, stream)
    forged_file = tmp_path / "forged.jsonl"
    _cli_export(database_url, table, 2, forged_file)
    capsys.readouterr()
    assert main(["audit", "verify", str(forged_file), "--server-key", VKEY]) == 1
    out = capsys.readouterr().out
    assert "✗ inclusion" in out and out.splitlines()[-1].startswith("FAILED")


def _rewrite_cut(database_url: str, stream: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT version, type, schema_version, data, metadata, hash FROM events"
            " WHERE stream_id = %s ORDER BY version",
            [stream],
        ).fetchall()
        cut = max(version for version, kind, *_ in rows if kind == "DeckCut")
        connection.execute("ALTER TABLE events DISABLE TRIGGER ALL")
        try:
            previous = bytes(next(row[5] for row in rows if row[0] == cut - 1))
            for version, kind, schema, data, metadata, _ in rows:
                if version < cut:
                    continue
                if version == cut:
                    data = {**data, "position": data["position"] % 51 + 1}
                previous = chain_hash(
                    previous, canonical_event_bytes(stream, version, kind, schema, data, metadata)
                )
                connection.execute(
                    "UPDATE events SET data = %s, hash = %s WHERE stream_id = %s AND version = %s",
                    [json.dumps(data), previous, stream, version],
                )
        finally:
            connection.execute("ALTER TABLE events ENABLE TRIGGER ALL")

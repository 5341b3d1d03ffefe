"""Issue #15's round trip, end to end on one database: SDK players play a series keeping their
receipts while a monitor follows the log; the table's export carries its proof and verifies
ANCHORED against the pinned server key, receipts included. Then the database's owner forges
the history (a seat's reveal becomes a reveal timeout, triggers off, the chain recomputed and
the tree rebuilt and re-signed by the server's own key): the export's hash chain holds and its
new checkpoint carries the server's good signature, yet the monitor raises its alarm, the receipts
name the rewritten event, and against the checkpoint a reader kept from the honest export the
forged one is a fork. (That the rules' checks catch this forgery too is beside the point here:
tests/audit/test_anchored_exports.py forges whole rescored histories that pass them.)
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
from scenarios import World
from serving import TEST_SERVER_KEYS, serving
from test_audit_monitor import SERVER_VKEY, WITNESS, Setup, _drop_tree_from, _tamper

from sapsam.cli import main
from sapsam.cli.bootstrap import build_services
from sapsam.log.chain import GENESIS_HASH, canonical_event_bytes, chain_hash
from sapsam_client import connect, table_id
from sapsam_client.receipts import ReceiptFolder
from sapsam_client.rules import solver_arranger
from sapsam_proto.v1 import transparency_service_pb2_grpc


@pytest.fixture
def signing(database_url: str, tmp_path: Path) -> Iterator[Setup]:
    """A server signing its log (checkpoints every 0.2 s) and a monitor's state folder."""
    keys = dataclasses.replace(TEST_SERVER_KEYS, witnesses=(WITNESS.verifier,))
    services = build_services(database_url, pool_size=8, server_keys=keys, checkpoint_seconds=0.2)
    with (
        serving(database_url, services=services) as running,
        grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        stub = transparency_service_pb2_grpc.TransparencyServiceStub(channel)
        world = World(channel, database_url)
        yield Setup(world, stub, f"127.0.0.1:{running.port}", tmp_path / "monitor")


def _play_series(address: str, receipts: Path) -> str:
    """A 2-seat, 2-deal series by SDK players, each keeping its receipts under ``receipts``."""
    clients = [connect(address, receipts=ReceiptFolder(receipts / f"seat{i}")) for i in range(2)]
    for index, client in enumerate(clients):
        client.register(f"round trip {index}")
    table = clients[0].create_table(2, preset="pagat", series_length=2).name
    seats = [client.join_table(table) for client in clients]
    failures: list[BaseException] = []

    def play(index: int) -> None:
        try:
            seats[index].play_series(solver_arranger)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=play, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    for client in clients:
        client.close()
    return table


def _export_and_verify(
    setup: Setup, table: str, receipts: Path, path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, Any]]:
    database = ["--database-url", setup.world.database_url]
    assert main(["audit", "export", "--table", table, "-o", str(path), *database]) == 0
    capsys.readouterr()
    arguments = ["--json", "--receipts", str(receipts), "--server-key", SERVER_VKEY]
    code = main(["audit", "verify", str(path), *arguments])
    report: dict[str, Any] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return code, report


def _status(report: dict[str, Any], name: str) -> list[str]:
    return [check["status"] for check in report["checks"] if check["name"] == name]


def _forge_last_reveal(setup: Setup, stream: str) -> int:
    """As the owner: the stream's last reveal becomes a reveal timeout, the chain after it is
    recomputed, and the tree from its leaf on is dropped for the server to rebuild and re-sign.
    The forged event's version."""
    with psycopg.connect(setup.world.database_url) as connection:
        row = connection.execute(
            "SELECT e.version, e.data, l.leaf_index FROM events e JOIN merkle_leaves l"
            " USING (position) WHERE e.stream_id = %s AND e.type = 'ArrangementRevealed'"
            " ORDER BY e.version DESC LIMIT 1",
            [stream],
        ).fetchone()
        assert row is not None
        version, revealed, leaf = row
        timeout = {
            "deal_number": revealed["deal_number"],
            "seat": revealed["seat"],
            "stage": "revealing",
            "consequence": "foul",
        }
        events = connection.execute(
            "SELECT version, type, schema_version, data, metadata FROM events"
            " WHERE stream_id = %s ORDER BY version",
            [stream],
        ).fetchall()
    statements: list[tuple[str, list[object]]] = [
        (
            "UPDATE events SET type = 'SeatTimedOut', schema_version = 1, data = %s"
            " WHERE stream_id = %s AND version = %s",
            [json.dumps(timeout), stream, version],
        )
    ]
    previous = GENESIS_HASH
    for number, kind, schema, data, metadata in events:
        if number == version:
            kind, schema, data = "SeatTimedOut", 1, timeout
        previous = chain_hash(
            previous, canonical_event_bytes(stream, number, kind, schema, data, metadata)
        )
        statements.append(
            (
                "UPDATE events SET hash = %s WHERE stream_id = %s AND version = %s",
                [previous, stream, number],
            )
        )
    _tamper(setup.world, [*statements, *_drop_tree_from(int(leaf))])
    return int(version)


def test_receipts_monitor_and_anchor_all_catch_an_owners_rechained_forgery(
    signing: Setup, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = signing
    receipts = tmp_path / "receipts"
    table = _play_series(setup.address, receipts)
    setup.checkpointed()
    assert setup.monitor() == 0
    honest = tmp_path / "honest.jsonl"
    code, report = _export_and_verify(setup, table, receipts, honest, capsys)
    assert (code, report["verdict"]) == (0, "anchored"), report
    assert _status(report, "receipts") == ["passed"]
    held = setup.held()

    stream = f"table-{table_id(table)}"
    version = _forge_last_reveal(setup, stream)
    rebuilt = setup.checkpointed()  # the server re-signs the rebuilt tree with its own key
    assert rebuilt.tree_size >= held

    # The monitor: the signed history it holds is not the one served now (a fork at the same
    # size, or a rewrite once the log grew past it).
    assert setup.monitor() in (5, 6)
    # The receipts: the forged export's chain holds, its receipts do not.
    forged = tmp_path / "forged.jsonl"
    code, report = _export_and_verify(setup, table, receipts, forged, capsys)
    assert code == 1 and report["verdict"] == "failed", report
    assert _status(report, "chain") == ["passed"]
    failures = [
        check["detail"]
        for check in report["checks"]
        if check["name"] == "receipts" and check["status"] == "failed"
    ]
    assert any(f"version {version} was ArrangementRevealed" in d for d in failures), failures
    # The anchor: against the checkpoint a reader kept from the honest export, the forged export
    # (which carries the server's new signature over the forged tree) does not link up.
    kept = tmp_path / "kept.checkpoint"
    header = json.loads(honest.read_text(encoding="utf-8").split("\n")[0])
    kept.write_text(header["transparency"]["checkpoint"], encoding="utf-8")
    pinned = ["--server-key", SERVER_VKEY, "--checkpoint", str(kept)]
    code = main(["audit", "verify", str(forged), "--json", *pinned])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 1 and report["verdict"] == "failed", report
    consistency = [check for check in report["checks"] if check["name"] == "consistency"]
    assert [check["status"] for check in consistency] == ["failed"], report
    assert "fork" in consistency[0]["detail"]

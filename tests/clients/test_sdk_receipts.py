"""The SDK keeps every signed receipt on disk, and those receipts catch a forged log (issue #15's
round trip): play a series with SDK clients keeping receipts, export the table, verify it with
``sapsam audit verify EXPORT --receipts DIR --server-key KEY``; then tamper the database as its
owner (triggers off, the chain recomputed, so the export's own checks cannot tell) — a reveal
replaced by a reveal timeout, or the last deal deleted — and the receipts name the forgery."""

from __future__ import annotations

import json
import stat
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from sapsam.api.server import RunningServer, ServerConfig, start_server
from sapsam.audit import Requester, write_lines
from sapsam.audit import database as audit_database
from sapsam.cli import main
from sapsam.cli.bootstrap import build_services
from sapsam.keys import ServerKeys
from sapsam.log.chain import GENESIS_HASH, canonical_event_bytes, chain_hash
from sapsam.log.receipt import open_receipt
from sapsam.log.signed_note import NoteSigner
from sapsam_client import connect, table_id
from sapsam_client.receipts import ReceiptFolder
from sapsam_client.rules import solver_arranger

KEYS = ServerKeys(NoteSigner.from_seed("sapsam/receipts-test", bytes(range(32))), (), "tests")
SEATS = 2
DEALS = 2


@pytest.fixture
def address(database_url: str) -> Iterator[str]:
    running: RunningServer = start_server(
        ServerConfig(listen="127.0.0.1:0", grace_seconds=2),
        build_services(database_url, pool_size=8, server_keys=KEYS, checkpoint_seconds=0.5),
    )
    try:
        yield f"127.0.0.1:{running.port}"
    finally:
        running.stop()


def _play(address: str, folder: Path) -> str:
    """A 2-seat, 2-deal series, every client keeping its receipts in its own folder."""
    creator = connect(address, receipts=ReceiptFolder(folder / "creator"))
    creator.register("creator")
    table = creator.create_table(SEATS, preset="pagat", series_length=DEALS).name
    seats = []
    for index in range(SEATS):
        client = connect(address, receipts=ReceiptFolder(folder / f"seat{index}"))
        client.register(f"seat {index}")
        seats.append(client.join_table(table))
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            seats[index].play_series(solver_arranger)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(SEATS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    return table


def _verify(tmp_path: Path, database_url: str, table: str, receipts: Path) -> tuple[int, Any]:
    with psycopg.connect(database_url, autocommit=True) as connection:
        export = audit_database.export_table(connection, table_id(table), Requester.operator())
    path = tmp_path / f"export-{uuid.uuid4()}.jsonl"
    path.write_text("".join(line + "\n" for line in write_lines(export)), encoding="utf-8")
    key = KEYS.signer.verifier.vkey()
    code = main(
        ["audit", "verify", str(path), "--json", "--receipts", str(receipts), "--server-key", key]
    )
    return code, path


def _report(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    output = capsys.readouterr().out.strip().splitlines()[-1]
    report: dict[str, Any] = json.loads(output)
    return report


def _rewrite(database_url: str, stream: str, version: int, event_type: str, data: Any) -> None:
    """As the database's owner: replace one event and recompute the stream's chain after it."""
    with psycopg.connect(database_url, autocommit=True) as connection, connection.transaction():
        connection.execute("ALTER TABLE events DISABLE TRIGGER ALL")
        connection.execute(
            "UPDATE events SET type = %s, data = %s WHERE stream_id = %s AND version = %s",
            [event_type, json.dumps(data), stream, version],
        )
        rows = connection.execute(
            "SELECT version, type, schema_version, data, metadata FROM events"
            " WHERE stream_id = %s ORDER BY version",
            [stream],
        ).fetchall()
        previous = GENESIS_HASH
        for number, kind, schema, body, metadata in rows:
            previous = chain_hash(
                previous, canonical_event_bytes(stream, number, kind, schema, body, metadata)
            )
            connection.execute(
                "UPDATE events SET hash = %s WHERE stream_id = %s AND version = %s",
                [previous, stream, number],
            )
        connection.execute("ALTER TABLE events ENABLE TRIGGER ALL")


def _receipt_failures(report: dict[str, Any]) -> list[str]:
    return [
        check["detail"]
        for check in report["checks"]
        if check["name"] == "receipts" and check["status"] == "failed"
    ]


def test_the_sdk_keeps_receipts_and_they_catch_a_rechained_forgery(
    address: str, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "receipts"
    table = _play(address, folder)
    stream = f"table-{table_id(table)}"
    seat_file = folder / "seat0" / f"{stream}.jsonl"
    assert stat.S_IMODE(seat_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(seat_file.parent.stat().st_mode) == 0o700
    kept = list(ReceiptFolder(folder / "seat0").read())
    methods = {line["request_id"].split("/")[1] for line in kept}
    assert {"JoinTable", "CommitArrangement", "RevealArrangement"} <= methods
    assert "ConfirmArrangement" not in methods  # the SDK commits and confirms in one call
    for line in kept:
        receipt = open_receipt(line["signed_note"], [KEYS.signer.verifier]).receipt
        assert (receipt.stream, receipt.last_version) == (line["stream"], line["last_version"])

    code, _ = _verify(tmp_path, database_url, table, folder)
    report = _report(capsys)
    # Every check and receipt holds; the export (made without its proof here) is INTERNALLY
    # CONSISTENT ONLY: exit 4 (docs/audit.md §4.5).
    assert code == 4 and report["verdict"] == "internally_consistent_only", report
    assert [c["status"] for c in report["checks"] if c["name"] == "receipts"] == ["passed"]

    # The forgery: seat 1's last reveal becomes a reveal timeout, the chain recomputed.
    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT version, data FROM events WHERE stream_id = %s"
            " AND type = 'ArrangementRevealed' ORDER BY version DESC LIMIT 1",
            [stream],
        ).fetchone()
    assert row is not None
    version, revealed = row
    timeout = {
        "deal_number": revealed["deal_number"],
        "seat": revealed["seat"],
        "stage": "revealing",
        "consequence": "foul",
    }
    _rewrite(database_url, stream, version, "SeatTimedOut", timeout)
    code, _ = _verify(tmp_path, database_url, table, folder)
    report = _report(capsys)
    assert code == 1
    # The export's own chain holds (recomputed): only the receipts prove the rewrite.
    assert [c["status"] for c in report["checks"] if c["name"] == "chain"] == ["passed"]
    failures = _receipt_failures(report)
    assert any(
        f"version {version} was ArrangementRevealed" in detail and "SeatTimedOut" in detail
        for detail in failures
    ), failures
    assert all(detail.startswith("receipt ") for detail in failures)


def test_receipts_catch_a_deleted_last_deal(
    address: str, database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "receipts"
    table = _play(address, folder)
    stream = f"table-{table_id(table)}"
    with psycopg.connect(database_url, autocommit=True) as connection, connection.transaction():
        connection.execute("ALTER TABLE events DISABLE TRIGGER ALL")
        deleted = connection.execute(
            "DELETE FROM events WHERE stream_id = %s AND version >= (SELECT max(version)"
            " FROM events WHERE stream_id = %s AND type = 'DealStarted')",
            [stream, stream],
        ).rowcount
        connection.execute("ALTER TABLE events ENABLE TRIGGER ALL")
    assert deleted > 10
    code, _ = _verify(tmp_path, database_url, table, folder)
    report = _report(capsys)
    assert code == 1
    failures = _receipt_failures(report)
    assert any("is missing from the export" in detail for detail in failures), failures
    # A tampered receipt is refused, naming its file and line.
    seat_file = next((folder / "seat1").glob("*.jsonl"))
    lines = seat_file.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["signed_note"] = first["signed_note"].replace("\nevent ", "\nevent 9", 1)
    seat_file.write_text(json.dumps(first) + "\n", encoding="utf-8")
    code, _ = _verify(tmp_path, database_url, table, folder / "seat1")
    report = _report(capsys)
    assert code == 1
    assert any(f"{seat_file}:1" in detail for detail in _receipt_failures(report))


def test_a_repeated_receipt_is_kept_once_and_the_memory_of_notes_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sapsam_client import receipts
    from sapsam_proto.v1 import receipt_pb2

    monkeypatch.setattr(receipts, "RECENT_NOTES", 2)
    folder = ReceiptFolder(tmp_path / "r")
    notes = [receipt_pb2.Receipt(stream="t", signed_note=f"note {i}") for i in range(3)]
    for note in [notes[0], notes[0], notes[1], notes[2], notes[2]]:
        folder.keep(note)
    assert [kept["signed_note"] for kept in folder.read()] == ["note 0", "note 1", "note 2"]
    assert list(folder._written[str(folder.path_for("t"))]) == ["note 1", "note 2"]

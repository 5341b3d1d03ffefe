"""The SDK checks each receipt's server signature as it keeps it (``sapsam_client.receipt_check``,
``ReceiptFolder``): held to the published vectors (docs/transparency.md §9.3), and on a real
server: a folder that pinned the server's key on first use keeps every receipt; one that pinned
another key refuses every receipt (not kept, written aside with the reason, listed, logged) while
the calls themselves succeed; a receipt whose response fields disagree with its note is refused;
a pinned key is never replaced by the server's."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sapsam.api.server import RunningServer, ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam.keys import ServerKeys
from sapsam.log.signed_note import NoteSigner
from sapsam_client import connect
from sapsam_client.receipt_check import ReceiptCheckError, ServerKey, check_receipt
from sapsam_client.receipts import PINNED_KEYS_FILE, ReceiptFolder
from sapsam_proto.v1 import receipt_pb2

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "transparency-vectors.json").read_text()
)["receipts"]
KEYS = ServerKeys(NoteSigner.from_seed("sapsam/receipt-check", bytes(range(32))), (), "tests")
STRANGER = NoteSigner.from_seed("sapsam/receipt-check", bytes(range(1, 33))).verifier.vkey()


@pytest.fixture
def address(database_url: str) -> Iterator[str]:
    running: RunningServer = start_server(
        ServerConfig(listen="127.0.0.1:0", grace_seconds=2),
        build_services(database_url, pool_size=4, server_keys=KEYS, checkpoint_seconds=5),
    )
    try:
        yield f"127.0.0.1:{running.port}"
    finally:
        running.stop()


def test_the_published_receipt_opens_and_every_refused_one_is_refused() -> None:
    key = ServerKey.parse(VECTORS["server_vkey"])
    assert key.key_id.hex() == VECTORS["server_key_id"]
    stated = check_receipt(VECTORS["signed_note"], [key], VECTORS["stream"])
    assert (stated.log, stated.stream) == (VECTORS["log"], VECTORS["stream"])
    events = VECTORS["events"]
    assert (stated.first_version, stated.last_version) == (
        events[0]["version"],
        events[-1]["version"],
    )
    for refused in VECTORS["refused"]:
        with pytest.raises(ReceiptCheckError):
            check_receipt(refused["note"], [key])
    with pytest.raises(ReceiptCheckError, match="the response says stream"):
        check_receipt(VECTORS["signed_note"], [key], "table-another")


def _play(address: str, folder: ReceiptFolder) -> None:
    """Register, create a table and take a seat: receipts of CreateTable and JoinTable."""
    client = connect(address, receipts=folder)
    try:
        folder.pin_from(client.channel)
        client.register("keeper")
        client.join_table(client.create_table(2, preset="pagat").name)
    finally:
        client.close()


def test_a_folder_pinning_the_key_on_first_use_keeps_every_receipt(
    address: str, tmp_path: Path
) -> None:
    folder = ReceiptFolder(tmp_path / "r")
    _play(address, folder)
    pinned = (tmp_path / "r" / PINNED_KEYS_FILE).read_text().splitlines()
    assert [line for line in pinned if not line.startswith("#")] == [KEYS.signer.verifier.vkey()]
    kept = list(folder.read())
    assert len(kept) >= 2 and not folder.rejected
    assert not list((tmp_path / "r").glob(".rejected-*"))
    # A later session reads the pinned key and asks the server for nothing.
    again = ReceiptFolder(tmp_path / "r")
    assert again.server_keys == folder.server_keys


def test_a_folder_pinning_another_key_refuses_every_receipt(
    address: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="sapsam_client.receipts")
    folder = ReceiptFolder(tmp_path / "r", server_keys=[STRANGER])
    _play(address, folder)  # every call succeeds: the refusal is the keeper's
    assert list(folder.read()) == []
    assert len(folder.rejected) >= 2
    assert all("no signature by a pinned key" in why for _, why in folder.rejected)
    rejected = [
        json.loads(line)
        for path in (tmp_path / "r").glob(".rejected-*.jsonl")
        for line in path.read_text().splitlines()
    ]
    assert len(rejected) == len(folder.rejected)
    assert all(entry["problem"] and entry["signed_note"] for entry in rejected)
    assert "refused" in caplog.text
    # pin_from never replaces a pinned key with the server's, nor adds one beside it.
    (tmp_path / "file").mkdir()
    (tmp_path / "file" / PINNED_KEYS_FILE).write_text(f"# pinned by hand\n{STRANGER}\n")
    client = connect(address)
    try:
        for kept in (folder, ReceiptFolder(tmp_path / "file")):
            assert kept.pin_from(client.channel) is True
            assert list(kept.server_keys) == [ServerKey.parse(STRANGER)]
    finally:
        client.close()


def test_one_folder_pins_each_servers_key_on_first_use(address: str, tmp_path: Path) -> None:
    """A folder used with two servers (the default one beside the token file is) pins each
    log's key the first time it meets it, and checks each server's receipts with its own."""
    elsewhere = NoteSigner.from_seed("sapsam/elsewhere", bytes(32)).verifier.vkey()
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / PINNED_KEYS_FILE).write_text(f"{elsewhere}\n")
    folder = ReceiptFolder(tmp_path / "r")
    _play(address, folder)
    assert set(folder.server_keys) == {
        ServerKey.parse(elsewhere),
        ServerKey.parse(KEYS.signer.verifier.vkey()),
    }
    assert not folder.rejected and len(list(folder.read())) >= 2
    assert set(ReceiptFolder(tmp_path / "r").server_keys) == set(folder.server_keys)


def test_a_receipt_whose_response_disagrees_with_its_note_is_refused(
    address: str, tmp_path: Path
) -> None:
    honest = ReceiptFolder(tmp_path / "honest")
    _play(address, honest)
    kept: dict[str, Any] = next(iter(honest.read()))
    folder = ReceiptFolder(tmp_path / "r", server_keys=[KEYS.signer.verifier.vkey()])
    forged = receipt_pb2.Receipt(
        stream=kept["stream"],
        first_version=kept["first_version"] + 1,
        last_version=kept["last_version"] + 1,
        request_id=kept["request_id"],
        signed_note=kept["signed_note"],
    )
    folder.keep(forged)
    assert list(folder.read()) == []
    assert "the response says first_version" in folder.rejected[0][1]
    tampered = receipt_pb2.Receipt(
        stream=kept["stream"],
        first_version=kept["first_version"],
        last_version=kept["last_version"],
        signed_note=kept["signed_note"].replace("\nevent ", "\nevent 9", 1),
    )
    folder.keep(tampered)
    assert len(folder.rejected) == 2 and list(folder.read()) == []


def test_a_receipt_of_another_call_is_refused(address: str, tmp_path: Path) -> None:
    honest = ReceiptFolder(tmp_path / "honest")
    _play(address, honest)
    kept: dict[str, Any] = next(iter(honest.read()))
    folder = ReceiptFolder(tmp_path / "r", server_keys=[KEYS.signer.verifier.vkey()])
    whole = receipt_pb2.Receipt(
        stream=kept["stream"],
        first_version=kept["first_version"],
        last_version=kept["last_version"],
        request_id=kept["request_id"],
        signed_note=kept["signed_note"],
    )
    # A validly signed receipt handed back for a call it is not of.
    folder.keep(whole, sent_request_id="another-call")
    assert list(folder.read()) == []
    assert "not this call's" in folder.rejected[0][1]
    # The message's request id must be the one the note signs.
    relabelled = receipt_pb2.Receipt()
    relabelled.CopyFrom(whole)
    relabelled.request_id = "players/x/CutDeck/another-call"
    folder.keep(relabelled, sent_request_id="another-call")
    assert "the response says request" in folder.rejected[1][1]
    # Of this very call: kept.
    folder.keep(whole, sent_request_id=kept["request_id"].rsplit("/", 1)[1])
    assert len(list(folder.read())) == 1

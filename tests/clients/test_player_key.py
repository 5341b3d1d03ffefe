"""The SDK's player key (sapsam_client.player_key, docs/fairness.md §19).

Its messages are the spec's (the published vectors); the key is created on first use in an
owner-only file and found there again; and an SDK player signs every commit and reveal by
default: the log records its key and signatures, and the deal's export verifies them.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam_client import Rows, connect, table_id
from sapsam_client.discards import KeptDiscard, discards_reveal_message
from sapsam_client.player_key import (
    TAG_FANTASYLAND_COMMIT,
    TAG_FANTASYLAND_REVEAL,
    TAG_REVEAL,
    PlayerKey,
    announce_message,
    commit_message,
    load_or_create,
    place_message,
    registration_message,
    reveal_message,
)
from sapsam_client.rules import solver_arranger

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "fairness-vectors.json").read_text()
)["player_signatures"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["kind"])
def test_the_sdk_signs_the_published_vectors(vector: dict[str, Any]) -> None:
    given = vector["input"]
    key = PlayerKey.from_private_bytes(bytes.fromhex(given["private_key"]))
    assert key.public_key.hex() == given["public_key"]
    if vector["kind"] == "registration":
        message = registration_message(given["player_id"], key.public_key)
        assert key.proof(given["player_id"]).hex() == vector["expected"]["signature"]
    elif vector["kind"] == "commit":
        message = commit_message(
            given["table_id"],
            given["deal_number"],
            given["seat"],
            given["player_id"],
            given["scheme"],
            bytes.fromhex(given["commitment"]),
        )
    elif vector["kind"] == "announce":
        message = announce_message(
            given["table_id"],
            given["deal_number"],
            given["seat"],
            given["player_id"],
            given["surrender"],
        )
    elif vector["kind"] == "fantasyland-commit":
        message = commit_message(
            given["table_id"],
            given["deal_number"],
            given["seat"],
            given["player_id"],
            given["scheme"],
            bytes.fromhex(given["commitment"]),
            tag=TAG_FANTASYLAND_COMMIT,
        )
    elif vector["kind"] == "discards-reveal":
        message = discards_reveal_message(
            given["table_id"],
            given["deal_number"],
            given["seat"],
            given["player_id"],
            [
                KeptDiscard(
                    given["deal_number"],
                    o["street"],
                    tuple(o["cards"].split()),
                    bytes.fromhex(o["nonce"]),
                    b"",
                )
                for o in given["openings"]
            ],
        )
    elif vector["kind"] == "place":
        rows = Rows.of(given["front"].split(), given["middle"].split(), given["back"].split())
        message = place_message(
            given["table_id"],
            given["deal_number"],
            given["seat"],
            given["player_id"],
            given["street"],
            rows,
            bytes.fromhex(given["discard_commitment"]),
        )
    else:
        rows = Rows.of(given["front"].split(), given["middle"].split(), given["back"].split())
        message = reveal_message(
            given["table_id"],
            given["deal_number"],
            given["seat"],
            given["player_id"],
            rows,
            bytes.fromhex(given["nonce"]),
            tag=TAG_FANTASYLAND_REVEAL if vector["kind"] == "fantasyland-reveal" else TAG_REVEAL,
        )
    assert message.hex() == vector["expected"]["message"]
    assert key.sign(message).hex() == vector["expected"]["signature"]


def test_a_key_is_created_once_owner_only_and_found_again(tmp_path: Path) -> None:
    path = tmp_path / "config" / "player-keys.json"
    first = load_or_create(path, "server:1", "players/a")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create(path, "server:1", "players/a").public_key == first.public_key
    other = load_or_create(path, "server:1", "players/b")
    assert other.public_key != first.public_key
    assert load_or_create(path, "server:1", "players/a").public_key == first.public_key


def test_sdk_players_sign_every_move_by_default(
    address: str, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAPSAM_PLAYER_KEY_FILE", str(tmp_path / "player-keys.json"))
    clients = [connect(address) for _ in range(2)]
    players = [client.register(f"signer {index}") for index, client in enumerate(clients)]
    table = clients[0].create_table(seat_count=2, series_length=1)
    seats = [client.join_table(table.name) for client in clients]
    threads = [threading.Thread(target=seat.play_series, args=(solver_arranger,)) for seat in seats]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    keys = {client.player_key.public_key.hex() for client in clients if client.player_key}
    assert len(keys) == 2
    # Anyone may fetch a player's registered keys to pin them (GetPlayer's public_keys).
    for client, player in zip(clients, players, strict=True):
        assert client.player_key is not None
        assert clients[1].player_keys(player.player) == [client.player_key.public_key]
    kept = json.loads((tmp_path / "player-keys.json").read_text())
    assert {entry["public_key"] for entry in kept.values()} == keys
    with psycopg.connect(database_url, autocommit=True) as connection:
        moves = connection.execute(
            "SELECT data->>'player_key', data->>'signature' FROM events"
            " WHERE stream_id = %s AND type IN ('ArrangementCommitted', 'ArrangementRevealed')",
            (f"table-{table_id(table.name)}",),
        ).fetchall()
        export = audit_database.export_deal(
            connection, uuid.UUID(str(table_id(table.name))), 1, Requester.operator()
        )
    assert len(moves) == 4 and {key for key, _ in moves} == keys
    assert all(signature and len(signature) == 128 for _, signature in moves)
    report = verify_export(list(write_lines(export)))
    assert report.ok, report.failed_names()
    assert {"player_signature[0]", "player_signature[1]"} <= {c.name for c in report.checks}
    for client in clients:
        client.close()


_CREATE_KEYS = """
import sys
from pathlib import Path
from sapsam_client.player_key import load_or_create
for number in range(25):
    load_or_create(Path(sys.argv[1]), "server", f"players/{sys.argv[2]}-{number}")
"""


def test_processes_sharing_the_key_file_lose_no_key(tmp_path: Path) -> None:
    """Bots of one machine share the key file: every key each process made is kept, and no
    process finds its temporary file gone (the file was rewritten by whoever came last)."""
    path = tmp_path / "player-keys.json"
    children = [
        subprocess.Popen([sys.executable, "-c", _CREATE_KEYS, str(path), name], env=os.environ)
        for name in "abcd"
    ]
    assert [child.wait(timeout=120) for child in children] == [0, 0, 0, 0]
    assert len(json.loads(path.read_text(encoding="utf-8"))) == 100

"""``sapsam audit verify FILE --player-key PLAYER=KEY``: a reader pins players' public keys
(docs/audit.md §4.2, ``pinned_player_key[<player>]``).

The signatures alone cannot show whose keys they are: a forger who rewrites a player's moves and
signs them with a key of its own, every hash re-chained, passes ``player_signature[s]``. Pinning
the player's real key fails it; pinning the right keys passes; a pin as a file of keys works; a
bad pin cannot run (exit 2).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from test_audit_tampering import _parse

from sapsam.app.tables import TableService
from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.audit.export_reading import read_export
from sapsam.audit.pinned_player_keys import pinned_key_checks
from sapsam.audit.report import Status
from sapsam.audit.sample_play import PLAYERS, play_deal, play_series, seated_table
from sapsam.cli import main
from sapsam.fairness import player_keys
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors

KEYS = {player: Ed25519PrivateKey.generate() for player in PLAYERS[:2]}
ANN, BOB = PLAYERS[0], PLAYERS[1]


def _hex(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


@pytest.fixture(scope="module")
def signed_export(database_factory: Any) -> Iterator[list[str]]:
    """Deal 1 of a 2-seat table whose two players sign every move, exported whole."""
    name, url = database_factory.create()
    try:
        table_id = asyncio.run(_played(url))
        with psycopg.connect(url, autocommit=True) as connection:
            export = audit_database.export_deal(connection, table_id, 1, Requester.operator())
        yield list(write_lines(export))
    finally:
        database_factory.drop(name)


async def _played(url: str) -> uuid.UUID:
    store = await EventStore.connect(url, projectors=projectors())
    store.prepare()
    try:
        return await play_series(TableService(store), 2, deals=1, signing_keys=KEYS)
    finally:
        await store.close()


def _resigned_by(
    lines: list[str],
    player: str,
    forger: Ed25519PrivateKey,
    seat: int | None = None,
    deal: int | None = None,
) -> list[str]:
    """``player``'s moves (at ``seat``, else at the seat PlayerSeated gave it; in ``deal``, else
    in every deal) signed by ``forger`` instead, every hash of the first segment re-chained."""
    export = _parse(lines)
    table_id = uuid.UUID(export.header["table_id"])
    if seat is None:
        seat = next(
            event["data"]["seat"]
            for event in export.events
            if event["type"] == "PlayerSeated" and event["data"]["player_id"] == player
        )
    for event in export.events:
        data = event["data"]
        if event["type"] not in ("ArrangementCommitted", "ArrangementRevealed"):
            continue
        if data["seat"] != seat or deal not in (None, data["deal_number"]):
            continue
        if event["type"] == "ArrangementCommitted":
            message = player_keys.commit_message(
                table_id,
                data["deal_number"],
                data["seat"],
                player,
                data["scheme"],
                bytes.fromhex(data["commitment"]),
            )
        else:
            rows = Arrangement.of_card_rows(
                parse_cards(data["front"]), parse_cards(data["middle"]), parse_cards(data["back"])
            )
            message = player_keys.reveal_message(
                table_id,
                data["deal_number"],
                data["seat"],
                player,
                rows,
                bytes.fromhex(data["nonce"]),
            )
        data["player_key"], data["signature"] = _hex(forger), forger.sign(message).hex()
    export.rechain(0)
    return export.lines()


def _verify(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lines: list[str], *pins: str
) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "deal.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    arguments = ["audit", "verify", str(path), "--json"]
    for pin in pins:
        arguments += ["--player-key", pin]
    code = main(arguments)
    out = capsys.readouterr().out
    return code, json.loads(out)


def _check(report: dict[str, Any], player: str) -> dict[str, Any]:
    name = f"pinned_player_key[{player}]"
    return next(check for check in report["checks"] if check["name"] == name)


def test_the_players_own_keys_pinned_pass(
    signed_export: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key_file = tmp_path / "bob.keys"
    other = Ed25519PrivateKey.generate()  # a rotated-out key beside the real one
    key_file.write_text(
        f"# bob's keys, as GetPlayer lists them\n{_hex(other)}\n{_hex(KEYS[BOB])}\n"
    )
    code, report = _verify(
        capsys, tmp_path, signed_export, f"{ANN}={_hex(KEYS[ANN])}", f"players/{BOB}={key_file}"
    )
    assert code == 4 and report["ok"]  # nothing anchors it: no server key pinned
    assert _check(report, ANN)["status"] == "passed"
    assert _check(report, BOB)["status"] == "passed"


def test_moves_re_signed_by_a_forgers_key_fail_only_with_the_players_key_pinned(
    signed_export: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = _resigned_by(signed_export, ANN, Ed25519PrivateKey.generate())
    assert verify_export(forged).ok  # the forger's own signatures verify
    code, report = _verify(capsys, tmp_path, forged, f"{ANN}={_hex(KEYS[ANN])}")
    assert code == 1 and report["verdict"] == "failed"
    check = _check(report, ANN)
    assert check["status"] == "failed"
    assert "not pinned" in check["detail"] and "the commit of deal 1, seat" in check["detail"]
    # Pinning only the other player leaves the forgery unseen by this check.
    code, report = _verify(capsys, tmp_path, forged, f"{BOB}={_hex(KEYS[BOB])}")
    assert code == 4 and _check(report, BOB)["status"] == "passed"


async def test_a_replaced_seat_holds_each_of_its_players_to_their_own_keys(
    service: TableService, database_url: str
) -> None:
    # Seat 1 is bob's in deal 1, then SeatReplaced gives it to zed, who signs deal 2's moves.
    zed, zed_key = "zed", Ed25519PrivateKey.generate()
    table_id = await seated_table(service, 2)
    await play_deal(service, table_id, 1, signing_keys=KEYS)
    await service.replace_seat(table_id, 1, zed, "replace-1")
    await play_deal(service, table_id, 2, signing_keys={ANN: KEYS[ANN], zed: zed_key})
    with psycopg.connect(database_url, autocommit=True) as connection:
        table = list(
            write_lines(audit_database.export_table(connection, table_id, Requester.operator()))
        )
        deal = list(
            write_lines(audit_database.export_deal(connection, table_id, 2, Requester.operator()))
        )
    pins = {
        BOB: frozenset({bytes.fromhex(_hex(KEYS[BOB]))}),
        zed: frozenset({bytes.fromhex(_hex(zed_key))}),
    }

    def statuses(lines: list[str]) -> dict[str, Status]:
        checks = pinned_key_checks(read_export(lines), pins)
        return {check.name.removeprefix("pinned_player_key"): check.status for check in checks}

    assert statuses(table) == {f"[{BOB}]": Status.PASSED, f"[{zed}]": Status.PASSED}
    # Deal 2's own export seats bob at the opening, but he made none of its moves.
    assert statuses(deal) == {f"[{BOB}]": Status.NOT_COVERED, f"[{zed}]": Status.PASSED}
    # zed's moves re-signed by a forger pass every other check, and fail zed's pin.
    forged = _resigned_by(table, zed, Ed25519PrivateKey.generate(), seat=1, deal=2)
    assert verify_export(forged).ok
    assert statuses(forged) == {f"[{BOB}]": Status.PASSED, f"[{zed}]": Status.FAILED}


def test_a_pinned_player_not_at_the_table_is_not_covered(
    signed_export: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stranger = str(uuid.uuid4())
    code, report = _verify(capsys, tmp_path, signed_export, f"{stranger}={_hex(KEYS[ANN])}")
    assert code == 4 and _check(report, stranger)["status"] == "not_covered"


@pytest.mark.parametrize(
    "pin",
    ["no-equals-sign", "=00", f"{ANN}=abc", f"{ANN}=/no/such/file", f"{ANN}={'zz' * 32}"],
)
def test_a_pin_that_cannot_be_read_cannot_run(
    signed_export: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], pin: str
) -> None:
    path = tmp_path / "deal.jsonl"
    path.write_text("\n".join(signed_export) + "\n", encoding="utf-8")
    assert main(["audit", "verify", str(path), "--player-key", pin]) == 2
    assert capsys.readouterr().err.startswith("sapsam audit: --player-key:")


def test_a_pin_goes_with_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "verify", "--all", "--player-key", f"{ANN}={'00' * 32}"]) == 2
    assert "go with FILE" in capsys.readouterr().err

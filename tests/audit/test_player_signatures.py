"""The players' signatures in an export, checked offline (``player_signature[s]``).

A careful forger who swaps two players' ids also recomputes every scheme 2 commitment (the reveals
hold rows and nonce), so ``reveal_commitment[s]`` passes again; the players' signatures still
bind the original players, and the verifier names each swapped seat. Stripping a player's later
signatures is named too; an honest signed export verifies, and an unsigned one gets no signature
check at all.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_audit_tampering import _parse

from sapsam import fairness
from sapsam.app.tables import TableService
from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.audit.sample_play import PLAYERS, play_series
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors


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
        keys = {player: Ed25519PrivateKey.generate() for player in PLAYERS[:2]}
        return await play_series(TableService(store), 2, deals=1, signing_keys=keys)
    finally:
        await store.close()


def test_an_honest_signed_export_verifies_with_each_seats_signatures(
    signed_export: list[str],
) -> None:
    report = verify_export(signed_export)
    assert report.ok, report.failed_names()
    passed = {check.name for check in report.checks if not check.failed}
    assert {"player_signature[0]", "player_signature[1]"} <= passed


def test_swapped_players_with_recomputed_commitments_fail_the_signatures(
    signed_export: list[str],
) -> None:
    export = _parse(signed_export)
    table_id = uuid.UUID(export.header["table_id"])
    seated = [event for event in export.events if event["type"] == "PlayerSeated"]
    first, second = seated[0]["data"], seated[1]["data"]
    first["player_id"], second["player_id"] = second["player_id"], first["player_id"]
    players = {event["data"]["seat"]: event["data"]["player_id"] for event in seated}
    reveals = {
        event["data"]["seat"]: event["data"]
        for event in export.events
        if event["type"] == "ArrangementRevealed"
    }
    for event in export.events:
        if event["type"] in ("ArrangementCommitted", "SeatConfirmed"):
            data = event["data"]
            reveal = reveals[data["seat"]]
            rows = Arrangement.of_card_rows(
                parse_cards(reveal["front"]),
                parse_cards(reveal["middle"]),
                parse_cards(reveal["back"]),
            )
            data["commitment"] = fairness.arrangement_commitment(
                table_id,
                data["deal_number"],
                data["seat"],
                rows,
                bytes.fromhex(reveal["nonce"]),
                scheme=2,
                player_id=players[data["seat"]],
            ).hex()
    export.rechain(0)
    report = verify_export(export.lines())
    failed = report.failed_names()
    assert "chain" not in failed and "reveal_commitment[0]" not in failed, failed
    assert {"player_signature[0]", "player_signature[1]"} <= set(failed), failed
    detail = next(c.detail for c in report.checks if c.name == "player_signature[0]")
    assert "does not verify for player" in detail


def test_stripping_a_players_later_signature_is_named(signed_export: list[str]) -> None:
    export = _parse(signed_export)
    for event in export.events:
        if event["type"] == "ArrangementRevealed" and event["data"]["seat"] == 1:
            event["data"]["player_key"] = None
            event["data"]["signature"] = None
    export.rechain(0)
    report = verify_export(export.lines())
    failed = report.failed_names()
    assert "chain" not in failed and failed == ("player_signature[1]",), failed
    detail = next(c.detail for c in report.checks if c.name == "player_signature[1]")
    assert "unsigned" in detail


def test_a_rewritten_signed_reveal_fails_its_signature_too(signed_export: list[str]) -> None:
    export = _parse(signed_export)
    for event in export.events:
        if event["type"] == "ArrangementRevealed" and event["data"]["seat"] == 0:
            signature = bytearray.fromhex(event["data"]["signature"])
            signature[0] ^= 1
            event["data"]["signature"] = signature.hex()
    export.rechain(0)
    assert verify_export(export.lines()).failed_names() == ("player_signature[0]",)

"""Commitment scheme 2 binds each seat's commitment to its player (docs/fairness.md §12.1).

The issue's forgery: take an honest export, swap two players' ids in ``PlayerSeated`` and re-chain
every hash, so that the chain holds. Under scheme 1 nothing in the export ties a seat's actions to
its player, and the forgery passes; under scheme 2 each seat's reveal no longer hashes to its
commitment for the player the forged export seats there, and the verifier names the seat. Deals
committed under scheme 1 keep verifying under scheme 1 (the scheme is recorded in the events).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from test_audit_tampering import _parse

from sapsam.app.tables import TableService
from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.audit.sample_play import play_series
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors


@pytest.fixture(scope="module")
def exports(database_factory: Any) -> Iterator[dict[int, list[str]]]:
    """Deal 1 of a 2-seat table played under each scheme, exported whole (one segment)."""
    name, url = database_factory.create()
    try:
        tables = asyncio.run(_played(url))
        found = {}
        with psycopg.connect(url, autocommit=True) as connection:
            for scheme, table_id in tables.items():
                export = audit_database.export_deal(connection, table_id, 1, Requester.operator())
                found[scheme] = list(write_lines(export))
        yield found
    finally:
        database_factory.drop(name)


async def _played(url: str) -> dict[int, uuid.UUID]:
    store = await EventStore.connect(url, projectors=projectors())
    store.prepare()
    try:
        service = TableService(store)
        return {scheme: await play_series(service, 2, deals=1, scheme=scheme) for scheme in (1, 2)}
    finally:
        await store.close()


def _swap_players(lines: list[str]) -> list[str]:
    export = _parse(lines)
    seated = [event for event in export.events if event["type"] == "PlayerSeated"]
    first, second = seated[0]["data"], seated[1]["data"]
    first["player_id"], second["player_id"] = second["player_id"], first["player_id"]
    export.rechain(0)
    return export.lines()


@pytest.mark.parametrize("scheme", [1, 2])
def test_an_honest_export_verifies_under_its_scheme(
    exports: dict[int, list[str]], scheme: int
) -> None:
    lines = exports[scheme]
    report = verify_export(lines)
    assert report.ok, report.failed_names()
    committed = [json.loads(line) for line in lines[1:]]
    schemes = {
        event["data"]["scheme"]
        for event in committed
        if event["type"] in ("ArrangementCommitted", "SeatConfirmed")
    }
    assert schemes == {scheme}  # recorded in the event


def test_swapping_two_players_passes_under_scheme_1(exports: dict[int, list[str]]) -> None:
    # What issue #15 found: nothing binds a scheme 1 seat to its player.
    forged = _swap_players(exports[1])
    assert verify_export(forged).ok


def test_swapping_two_players_is_named_under_scheme_2(exports: dict[int, list[str]]) -> None:
    forged = _swap_players(exports[2])
    report = verify_export(forged)
    assert not report.ok
    failed = report.failed_names()
    assert "chain" not in failed  # the forgery holds together as a chain ...
    assert {"reveal_commitment[0]", "reveal_commitment[1]"} <= set(failed), failed
    detail = next(check.detail for check in report.checks if check.name == "reveal_commitment[0]")
    assert "under scheme 2 for player" in detail


def test_downgrading_the_recorded_scheme_is_named(exports: dict[int, list[str]]) -> None:
    # A forger who marks the seats' commitments as scheme 1 breaks them: they were computed
    # under scheme 2, so the reveals no longer match.
    export = _parse(exports[2])
    for event in export.events:
        if event["type"] in ("ArrangementCommitted", "SeatConfirmed"):
            event["data"]["scheme"] = 1
    export.rechain(0)
    failed = verify_export(export.lines()).failed_names()
    assert "chain" not in failed and "reveal_commitment[0]" in failed, failed

"""Issue 13, defect 14: until a deal is scored, no export shows a revealed row or a nonce, not even
the operator's (ExportDeal and ``sapsam audit export`` build theirs with the same code)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import psycopg
import pytest

from sapsam import fairness
from sapsam.app.tables import TableService
from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.audit.sample_play import seated_table
from sapsam.cli import main
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.solver import solve

SECRET_FIELDS = ("front", "middle", "back", "nonce")


async def _commit_and_confirm(
    service: TableService, table_id: uuid.UUID
) -> dict[str, tuple[Arrangement, bytes]]:
    """Deal 1 started, cut and dealt; every seat committed and confirmed (reveals are open)."""
    state = (await service.start_deal(table_id, "operator", f"{table_id}/start-1")).state
    assert state.deal is not None
    cutter = state.seats[fairness.cutter_for(state.deal.dealer, state.seat_count)]
    assert cutter is not None
    await service.cut(table_id, cutter, 17, f"{table_id}/cut-1")
    chosen: dict[str, tuple[Arrangement, bytes]] = {}
    for player in (seat for seat in state.seats if seat is not None):
        seat, hand = await service.hand_of(table_id, player)
        arrangement = solve(hand, (await service.load(table_id)).rule_set)
        nonce = fairness.new_seed()[:16]
        commitment = fairness.arrangement_commitment(table_id, 1, seat, arrangement, nonce)
        await service.commit(table_id, player, commitment, f"{table_id}/commit-{player}")
        await service.confirm(table_id, player, f"{table_id}/confirm-{player}")
        chosen[player] = (arrangement, nonce)
    return chosen


def _exports(
    database_url: str, table_id: uuid.UUID, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> list[list[str]]:
    """The operator's deal and table exports, from the library and from the command line."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        deal = audit_database.export_deal(connection, table_id, 1, Requester.operator())
        table = audit_database.export_table(connection, table_id, Requester.operator())
    file = tmp_path / "deal.jsonl"
    command = ["audit", "export", "--table", str(table_id), "--database-url", database_url]
    assert main([*command, "--deal", "1", "-o", str(file)]) == 0
    capsys.readouterr()
    assert main(command) == 0
    printed = capsys.readouterr().out.splitlines()
    return [
        list(write_lines(deal)),
        list(write_lines(table)),
        file.read_text().splitlines(),
        printed,
    ]


async def _revealed_anything(lines: list[str], nonces: list[bytes]) -> bool:
    events = [json.loads(line) for line in lines[1:]]
    if any(event["type"] == "ArrangementRevealed" for event in events):
        return True
    text = "\n".join(lines)
    return any(nonce.hex() in text for nonce in nonces) or any(
        field in event["data"] for event in events for field in SECRET_FIELDS
    )


async def test_the_operator_exports_no_reveal_of_a_deal_until_it_is_scored(
    service: TableService,
    database_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    table_id = await seated_table(service, 3)
    chosen = await _commit_and_confirm(service, table_id)
    nonces = [nonce for _, nonce in chosen.values()]
    players = list(chosen)
    for player in players[:2]:  # two of three seats reveal: the deal is still in play
        arrangement, nonce = chosen[player]
        await service.reveal(table_id, player, arrangement, nonce, f"{table_id}/reveal-{player}")
    assert [e.type for e in await service.events(table_id)].count("ArrangementRevealed") == 2

    for lines in _exports(database_url, table_id, tmp_path, capsys):
        assert not await _revealed_anything(lines, nonces)
        # The export stops at the last event before the first reveal: its chain is whole, the deal
        # reads as pending (exit 3 from the command line), and nothing fails.
        assert json.loads(lines[-1])["type"] == "RevealsOpened"
        report = verify_export(lines)
        assert report.ok, report.failed_names()
        assert not report.complete
        assert report.pending_deals == (1,)

    arrangement, nonce = chosen[players[2]]
    await service.reveal(
        table_id, players[2], arrangement, nonce, f"{table_id}/reveal-{players[2]}"
    )
    for lines in _exports(database_url, table_id, tmp_path, capsys):
        # Scored: every reveal, every row and every nonce, and the deal verifies.
        events = [json.loads(line) for line in lines[1:]]
        revealed = [event for event in events if event["type"] == "ArrangementRevealed"]
        assert len(revealed) == 3
        assert {event["data"]["nonce"] for event in revealed} == {n.hex() for n in nonces}
        assert verify_export(lines).holds

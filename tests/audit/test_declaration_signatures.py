"""The players' signatures of their natural declarations, checked offline (docs/fairness.md §19,
§21): ``NaturalDeclared`` is signed like a commit, so an operator who rewrites a declaration's
commitment, or records one a player never made, breaks the seat's ``player_signature`` check even
with every hash re-chained. Deals from tests/unit/data/rules_v6_log.json, which ``sapsam demo``
recorded with signing players."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from test_audit_surrender_signatures import _chained

from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit.export_selection import select_deal, select_table

OPERATOR = Requester.operator()
LOG = json.loads((Path(__file__).parents[1] / "unit" / "data" / "rules_v6_log.json").read_text())


def _signed_declaration_deal() -> tuple[str, list[dict[str, Any]], int]:
    """A stored table with a signed declaration, and that deal's number."""
    for table in LOG["tables"]:
        for event in table["events"]:
            if event["type"] == "NaturalDeclared" and event["data"]["signature"]:
                return table["stream"], table["events"], event["data"]["deal_number"]
    raise AssertionError("no signed declaration in the stored log")


def _report_of(stream: str, events: list[dict[str, Any]], deal: int) -> Any:
    return verify_export(
        list(write_lines(select_deal(_chained(stream, events), deal, Requester.operator())))
    )


def test_signed_declarations_verify() -> None:
    stream, events, deal = _signed_declaration_deal()
    report = _report_of(stream, events, deal)
    assert report.ok, report.failed_names()
    assert any(check.name.startswith("player_signature") for check in report.checks)


def test_a_rewritten_declaration_fails_its_seats_signature() -> None:
    stream, events, deal = _signed_declaration_deal()
    forged = copy.deepcopy(events)
    declaration = next(
        event["data"]
        for event in forged
        if event["type"] == "NaturalDeclared" and event["data"]["deal_number"] == deal
    )
    declaration["commitment"] = "00" * 32
    failed = _report_of(stream, forged, deal).failed_names()
    assert f"player_signature[{declaration['seat']}]" in failed


def test_an_unsigned_declaration_after_signed_moves_is_named() -> None:
    """In the table's export a player who signed in an earlier deal must sign its later
    declarations too: one stripped of its signature is named."""
    stream, events, deal = _signed_declaration_deal()
    forged = copy.deepcopy(events)
    stripped = [
        event["data"]
        for event in forged
        if event["type"] == "NaturalDeclared" and event["data"]["deal_number"] > deal
    ][-1]
    stripped["signature"] = stripped["player_key"] = None
    report = verify_export(list(write_lines(select_table(_chained(stream, forged), OPERATOR))))
    assert f"player_signature[{stripped['seat']}]" in report.failed_names()

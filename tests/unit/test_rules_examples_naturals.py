"""docs/rules-examples.json's ``special_deals``: naturals and surrender worked by hand
(docs/rules.md §7.8), recomputed with ``sapsam.rules`` and through the real ``sapsam score``
command, which takes each seat's declaration (``natural``) and surrender (docs/rules.md §2.8,
§2.9)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.naturals import Natural, NaturalHand, judge_seat
from sapsam.rules.presets import resolve_rule_set
from sapsam.rules.surrender import score_with_surrender

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLES: dict[str, Any] = json.loads((DOCS / "rules-examples.json").read_text(encoding="utf-8"))
SPECIAL = EXAMPLES["special_deals"]
PAGE = (DOCS / "rules.md").read_text(encoding="utf-8")


def run_score(stdin: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sapsam.cli", "score", *options],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def deal_input(deal: dict[str, Any]) -> dict[str, Any]:
    return {"rules": deal["rules"], "seats": deal["seats"]}


@pytest.mark.parametrize("deal", SPECIAL, ids=lambda d: d["id"])
def test_each_special_deal_is_what_the_rules_score(deal: dict[str, Any]) -> None:
    rule_set = resolve_rule_set(deal["rules"])
    checks = []
    held: list[NaturalHand | None] = []
    cards = [
        card
        for seat in deal["seats"]
        for name in ("front", "middle", "back")
        for card in parse_cards(seat[name])
    ]
    assert len(set(cards)) == len(cards) == 13 * len(deal["seats"]), "one deck"
    for seat in deal["seats"]:
        arrangement = Arrangement(
            *(parse_cards(seat[name]) for name in ("front", "middle", "back"))
        )
        check, natural = judge_seat(
            rule_set, arrangement, arrangement.cards, Natural(seat.get("natural", "none"))
        )
        checks.append(check)
        held.append(natural)
    assert [check.foul for check in checks] == deal["fouls"]
    assert [None if c.reason is None else c.reason.value for c in checks] == deal["foul_reasons"]
    surrendered = [bool(seat.get("surrender", False)) for seat in deal["seats"]]
    score = score_with_surrender(rule_set, checks, surrendered, held)
    assert [[pair.seat_a, pair.seat_b] for pair in score.pairs] == [
        p["seats"] for p in deal["pairs"]
    ]
    assert [list(pair.rows) for pair in score.pairs] == [p["rows"] for p in deal["pairs"]]
    assert [pair.delta for pair in score.pairs] == [p["delta"] for p in deal["pairs"]]
    assert list(score.totals) == deal["totals"] and sum(deal["totals"]) == 0


def test_sapsam_score_takes_declarations_and_surrenders() -> None:
    lines = "\n".join(json.dumps(deal_input(deal)) for deal in SPECIAL)
    completed = run_score(lines, "--jsonl")
    assert completed.returncode == 0, completed.stderr
    results = [json.loads(line) for line in completed.stdout.splitlines()]
    assert len(results) == len(SPECIAL)
    for deal, result in zip(SPECIAL, results, strict=True):
        assert [seat["total"] for seat in result["seats"]] == deal["totals"], deal["id"]
        assert [pair["delta"] for pair in result["pairs"]] == [p["delta"] for p in deal["pairs"]]
        assert [pair["rows"] for pair in result["pairs"]] == [p["rows"] for p in deal["pairs"]]
        assert [seat["foul"] for seat in result["seats"]] == deal["fouls"]
        for given, seat in zip(deal["seats"], result["seats"], strict=True):
            assert seat.get("natural", "none") == given.get("natural", "none")
            assert seat.get("surrendered", False) == given.get("surrender", False)
            if seat["foul"]:
                assert seat["foul_reason"] in ("ROWS_OUT_OF_ORDER", "FALSE_NATURAL")


def test_a_declaration_changes_the_score() -> None:
    """The rows of six pairs are a foul when not declared (the page's two deals differ only in
    seat 0's declaration)."""
    declared, undeclared = (d for d in SPECIAL if d["rules"] == "capsa_susun")
    assert [seat.get("natural") for seat in declared["seats"]] == ["six_pairs", None, None]
    assert [{k: v for k, v in s.items() if k != "natural"} for s in declared["seats"]] == (
        undeclared["seats"]
    )
    assert declared["totals"] != undeclared["totals"]


SIX_PAIRS = {k: v for k, v in SPECIAL[0]["seats"][0].items() if k != "natural"}
PLAIN = SPECIAL[0]["seats"][1]


@pytest.mark.parametrize(
    ("rules", "seat", "message"),
    [
        (
            "pagat",
            {**SIX_PAIRS, "natural": "six_pairs"},
            "declares a natural, but rule set 'pagat' plays none",
        ),
        ("capsa_susun", {**SIX_PAIRS, "natural": "six pair"}, "'six pair' is not one of none,"),
        ("capsa_susun", {**SIX_PAIRS, "natural": "three_quads"}, "is not one of none, six_pairs"),
        ("capsa_susun", {**SIX_PAIRS, "natural": 3}, "a number is not one of"),
        ("pagat", {**SIX_PAIRS, "natural": "none", "surrender": True}, "surrender off"),
        ("capsa_susun", {**SIX_PAIRS, "surrender": "yes"}, "expected true or false, got a string"),
        ("capsa_susun", {**SIX_PAIRS, "declare": "six_pairs"}, "unknown key 'declare'"),
    ],
)
def test_a_bad_declaration_or_surrender_is_bad_input(
    rules: str, seat: dict[str, Any], message: str
) -> None:
    completed = run_score(json.dumps({"rules": rules, "seats": [seat, PLAIN]}))
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert message in completed.stderr and completed.stderr.count("\n") == 1, completed.stderr


@pytest.mark.parametrize("deal", SPECIAL, ids=lambda d: d["id"])
def test_the_page_shows_each_special_deal(deal: dict[str, Any]) -> None:
    """§7.8 lists every special deal with its totals as the file holds them."""
    start = PAGE.index("### 7.8")
    text = PAGE[start : PAGE.index("\n## ", start)]
    block = text[text.index(f"`{deal['id']}`") :]
    following = block.find("\n**`", 1)
    block = (block if following < 0 else block[:following]).replace("−", "-").replace("\n", " ")
    shown = "totals " + ", ".join(f"{total:+d}" if total else "0" for total in deal["totals"])
    assert shown in block, (deal["id"], shown)


def test_the_docs_do_not_say_naturals_or_surrender_are_not_played() -> None:
    """docs/rules.md §6 lists only what no rule set plays: naturals and surrender are options
    (§2.8, §2.9), so its list names neither; the README names both."""
    start = PAGE.index("## 6. ")
    listed = [
        line.lower()
        for line in PAGE[start : PAGE.index("\n## 7. ", start)].splitlines()
        if line.startswith("* ")
    ]
    assert listed, "§6 lists what sapsam does not play"
    for option in ("natural", "surrender", "royalt", "stake"):
        assert not any(option in line for line in listed), option
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    assert "naturals (declared before committing" in readme and "surrender" in readme

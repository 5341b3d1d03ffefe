"""docs/rules-examples.json's ``open_face_moves``: the moves the service makes for a seat
(docs/rules.md §8.6, §8.7, §8.12), a timed-out Fantasyland hand's rows (§8.5, §8.7) and 2-7's
middle (§8.12), recomputed with ``sapsam.rules.open_face``: the vectors an outside verifier (the
browser page among them, web/test/openface_rules.test.ts) reproduces are what sapsam decides."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sapsam.rules.cards import format_cards, parse_cards
from sapsam.rules.open_face.automatic import automatic_move, timeout_move
from sapsam.rules.open_face.board import Board, Placement
from sapsam.rules.open_face.fantasyland import verify_fantasyland_arrangement
from sapsam.rules.open_face.fantasyland_setting import fantasyland_timeout_setting
from sapsam.rules.open_face.lowball import deuce_to_seven_key
from sapsam.rules.open_face.parameters import OpenFaceRules, OpenFaceTimeoutPolicy
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.scoring import score_open_face_deal

DOCS = Path(__file__).resolve().parents[3] / "docs"
MOVES: dict[str, Any] = json.loads((DOCS / "rules-examples.json").read_text(encoding="utf-8"))[
    "open_face_moves"
]


def _rules(example: dict[str, Any]) -> OpenFaceRules:
    rules = open_face_preset(example["preset"])
    policy = example.get("timeout_policy")
    return rules if policy is None else replace(rules, timeout_policy=OpenFaceTimeoutPolicy(policy))


def _rows(rows: Board | Placement) -> dict[str, str]:
    return {
        "front": format_cards(rows.front),
        "middle": format_cards(rows.middle),
        "back": format_cards(rows.back),
    }


@pytest.mark.parametrize("example", MOVES["moves"], ids=lambda e: e["id"])
def test_each_move_is_what_the_rules_make(example: dict[str, Any]) -> None:
    rules = _rules(example)
    rows = example["board"]
    board = Board(
        parse_cards(rows["front"]), parse_cards(rows["middle"]), parse_cards(rows["back"])
    )
    dealt = parse_cards(example["dealt"])
    if example["move"] == "timeout":
        move = timeout_move(rules, board, dealt)
    else:
        move = automatic_move(
            rules, board, dealt, declared_dead=example.get("declared_dead", False)
        )
    found = None
    if move is not None:
        found = {
            "reason": move.reason.value,
            "placement": _rows(move.placement),
            "discards": format_cards(move.discards),
        }
    assert found == example["expected"]


@pytest.mark.parametrize("example", MOVES["fantasyland_timeouts"], ids=lambda e: e["id"])
def test_each_timed_out_fantasyland_hand_is_set_as_the_policy_sets_it(
    example: dict[str, Any],
) -> None:
    rules = _rules(example)
    dealt = parse_cards(example["dealt"])
    setting = fantasyland_timeout_setting(rules, dealt)
    checked = verify_fantasyland_arrangement(dealt, setting.arrangement, rules)
    found = {
        **_rows(setting.arrangement),
        "discards": format_cards(checked.discards),
        "dead": checked.dead or setting.declared_dead,
    }
    assert found == example["expected"]


def test_deuce_to_seven_keys_and_a_scored_deal() -> None:
    for example in MOVES["deuce_to_seven"]:
        assert list(deuce_to_seven_key(parse_cards(example["cards"]))) == example["key"]
    deal = MOVES["deuce_to_seven_deal"]
    boards = [
        Board(parse_cards(s["front"]), parse_cards(s["middle"]), parse_cards(s["back"]))
        for s in deal["seats"]
    ]
    score = score_open_face_deal(open_face_preset(deal["preset"]), boards)
    assert [hand.dead for hand in score.hands] == deal["fouls"]
    assert [
        {"seat_a": p.seat_a, "seat_b": p.seat_b, "rows": list(p.rows), "delta": p.delta}
        for p in score.pairs
    ] == deal["pairs"]
    assert list(score.totals) == deal["totals"]

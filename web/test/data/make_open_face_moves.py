"""Random boards and streets, and the moves sapsam's rules make for a seat on each
(docs/rules.md §8.2, §8.6, §8.7, §8.12: ``automatic_move`` and ``timeout_move``), which
web/test/openface_rules.test.ts holds the page's own rules to case by case (open_face_moves.json):
the dead-hand test behind them is a heuristic only exact near the end, so the page must decide
it exactly as sapsam does. Seeded, so the file only changes with the rules:

    python web/test/data/make_open_face_moves.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from sapsam.rules.cards import Card, format_cards
from sapsam.rules.open_face.automatic import automatic_move, timeout_move
from sapsam.rules.open_face.board import Board, Placement
from sapsam.rules.open_face.presets import open_face_preset

HERE = Path(__file__).resolve().parent
PRESETS = ("ofc_classic", "ofc_russian", "pineapple", "pineapple_2_7")
CASES_PER_PRESET = 150


def _rows(rows: Board | Placement) -> dict[str, str]:
    return {
        "front": format_cards(rows.front),
        "middle": format_cards(rows.middle),
        "back": format_cards(rows.back),
    }


def _case(rng: random.Random, preset: str) -> dict[str, Any]:
    rules = open_face_preset(preset)
    deck = [Card(card) for card in rng.sample(range(52), 52)]
    starts = [0]
    for cards in rules.street_cards[:-1]:
        starts.append(starts[-1] + cards)
    placed = rng.choice(starts)
    rows: list[list[Card]] = [[], [], []]
    for card in deck[:placed]:
        rows[rng.choice([r for r, size in enumerate((3, 5, 5)) if len(rows[r]) < size])].append(
            card
        )
    board = Board(tuple(rows[0]), tuple(rows[1]), tuple(rows[2]))
    street = starts.index(placed)
    count = rules.street_cards[street] + (rules.street_discards if street else 0)
    dealt = tuple(deck[placed : placed + count])
    made = automatic_move(rules, board, dealt)
    timed_out = timeout_move(rules, board, dealt)
    return {
        "preset": preset,
        "board": _rows(board),
        "dealt": format_cards(dealt),
        "automatic": None
        if made is None
        else {"reason": made.reason.value, "placement": _rows(made.placement)},
        "timeout": _rows(timed_out.placement),
    }


def main() -> None:
    rng = random.Random(21)
    cases = [_case(rng, preset) for preset in PRESETS for _ in range(CASES_PER_PRESET)]
    (HERE / "open_face_moves.json").write_text(json.dumps(cases, indent=0) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""Writes broken_hands.json: deals scored by sapsam's own scorer (`sapsam.rules.scoring`) under
rule sets that claim broken hands (docs/rules.md §2.7, `royalty_broken_hands` `claimed`), for the
page's test/royalties.test.ts. Hands are dealt with planted quads and straight flushes (the royal,
the wheel, two at once) and set at random (fouls included) or by the solver. Regenerate:

    python web/test/data/make_broken_hands.py
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.cards import format_cards
from sapsam.rules.presets import preset
from sapsam.rules.royalties import RoyaltyLimit, RoyaltyPayment
from sapsam.rules.scoring import score_deal
from sapsam.rules.solver import solve

HERE = Path(__file__).parent


def _rule_sets() -> dict[str, Any]:
    broken = preset("capsa_susun_broken")
    american = dataclasses.replace(
        preset("closed_american"), royalty_broken_hands=broken.royalty_broken_hands
    )
    return {
        "capsa_susun_broken": broken,
        "broken_held_largest": dataclasses.replace(
            broken, royalties=RoyaltyPayment.HELD_ROW, royalty_limit=RoyaltyLimit.LARGEST_ONLY
        ),
        "american_broken": american,
    }


def _planted(rng: random.Random, taken: set[int]) -> list[int]:
    """13 cards not taken, holding some of: a four of a kind, a straight flush (royal, wheel)."""
    cards: set[int] = set()
    for _ in range(rng.choice([1, 2, 2, 3])):
        if rng.random() < 0.5:
            rank = rng.randrange(13)
            planted = {rank * 4 + suit for suit in range(4)}
        else:
            top, suit = rng.choice([12, 3, *range(4, 12)]), rng.randrange(4)
            planted = {((top - k) if top - k >= 0 else 12) * 4 + suit for k in range(5)}
        if len(cards | planted) <= 13 and not planted & taken:
            cards |= planted
    while len(cards) < 13:
        card = rng.randrange(52)
        if card not in taken:
            cards.add(card)
    return sorted(cards)


def main() -> None:
    rng = random.Random(21)
    cases = []
    for name, rule_set in _rule_sets().items():
        for _ in range(25):
            seats = rng.choice([2, 3])
            hands = []
            used: set[int] = set()
            for _seat in range(seats):
                hand = _planted(rng, used)
                used |= set(hand)
                hands.append(hand)
            arrangements = []
            for hand in hands:
                if rng.random() < 0.5:
                    arrangements.append(solve(hand, rule_set))
                else:
                    shuffled = rng.sample(hand, 13)
                    arrangements.append(
                        Arrangement(tuple(shuffled[:3]), tuple(shuffled[3:8]), tuple(shuffled[8:]))
                    )
            checks = [check_arrangement(a, h) for a, h in zip(arrangements, hands, strict=True)]
            score = score_deal(rule_set, checks)
            cases.append(
                {
                    "rule_set": rule_set.to_dict(),
                    "preset": name,
                    "hands": [
                        {
                            "front": format_cards(a.front),
                            "middle": format_cards(a.middle),
                            "back": format_cards(a.back),
                            "foul": c.foul,
                        }
                        for a, c in zip(arrangements, checks, strict=True)
                    ],
                    "totals": list(score.totals),
                    "deltas": [p.delta for p in score.pairs],
                }
            )
    (HERE / "broken_hands.json").write_text(json.dumps(cases, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

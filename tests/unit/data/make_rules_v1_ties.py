"""How ``rules_v1_ties.json`` was made: run once, on 2026-12-02, with the code of the commit
before rules version 2 (``git worktree add --detach OLD 0980ceb^``), which scored every rule set
as version 1 did.

``rules_v1_log.json`` (real tables) has no pair with one row won and two tied, the one outcome
whose majority version 2 reads otherwise; these deals are made for it. Two seats, one holding
13 cards of two suits, the other the same ranks in the other two suits for its front and middle
(so those rows tie) and five more cards in its back; under each scoring method of version 1 with
every amount other than its default. The file is what that code scored and must never be
regenerated with later code: ``tests/unit/test_rules_versions.py`` holds today's code to it.

    cd OLD && PYTHONPATH=service python PATH/make_rules_v1_ties.py > PATH/rules_v1_ties.json
"""

from __future__ import annotations

import json
import random
import sys

from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.cards import DECK
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.scoring import score_deal


def main() -> None:
    generator = random.Random(7)
    deals = []
    for method in ("per_row", "two_four", "one_six", "per_row_scoop_bonus"):
        recorded = {
            "scoring": method,
            "rules_version": 1,
            "row_unit": 3,
            "scoop_bonus": 2,
            "one_six_two_of_three": 2,
            "one_six_scoop": 5,
        }
        rule_set = RuleSet.from_dict(recorded)
        for _ in range(60):
            low = [rank * 4 + suit for rank in range(13) for suit in (0, 1)]
            generator.shuffle(low)
            first = sorted(low[:13]) if generator.random() < 0.7 else low[:13]
            mirror = [card + 2 for card in first[:8]]
            rest = [rank * 4 + suit for rank in range(13) for suit in (2, 3)]
            rest = [card for card in rest if card not in mirror]
            generator.shuffle(rest)
            seats = [
                (first[:3], first[3:8], first[8:]),
                (mirror[:3], mirror[3:8], sorted(rest[:5])),
            ]
            if generator.random() < 0.5:
                seats.reverse()
            checks = [check_arrangement(Arrangement.of(*rows)) for rows in seats]
            score = score_deal(rule_set, checks)
            deals.append(
                {
                    "rule_set": recorded,
                    "seats": [
                        [" ".join(str(DECK[c]) for c in row) for row in rows] for rows in seats
                    ],
                    "pairs": [{"rows": list(p.rows), "delta": p.delta} for p in score.pairs],
                    "totals": list(score.totals),
                }
            )
    sys.stdout.write('{"made_with_rules_version": 1, "deals": [\n')
    sys.stdout.write(",\n".join(json.dumps(deal, separators=(",", ":")) for deal in deals))
    sys.stdout.write("\n]}\n")


if __name__ == "__main__":
    main()

"""Play or surrender (docs/rules.md §2.8), decided for a bot: keep it simple and explainable.

A bot surrenders when the rows it committed are expected to lose more than the surrender costs.
The expectation is a small Monte Carlo estimate: the 39 cards the seat does not hold are dealt at
random to its opponents ``samples`` times, each opponent's hand is set by the solver, and the
seat's rows are settled against each under the table's scoring method (royalties left out). The
cost of surrendering is the price times the row unit for each opponent, as if all of them play
(a later seat's announcement is not known yet; under ``pay_players`` that is the most it costs).
So: surrender when ``expected < -price x row_unit x opponents``.

Needs the rules extra (``sapsam_client.rules``); without it, or without the rows, the bot plays.
"""

from __future__ import annotations

import random
from typing import Final

from sapsam_client.commitment import card_index
from sapsam_client.rules import rows_check, rules_available, rules_module, rules_rule_set
from sapsam_client.seat_types import Announcer, Commitment
from sapsam_proto.v1 import table_pb2

SAMPLES: Final = 16
"""Random deals of the unseen cards per decision: about 16 x 3 solver runs at four seats."""


def expected_amount(
    committed: Commitment, table: table_pb2.Table, samples: int, generator: random.Random
) -> float:
    """The seat's expected result with its committed rows against solver-set random hands of the
    cards it does not hold, summed over its opponents (the table's scoring, without royalties)."""
    arrangement = rules_module("arrangement")
    scoring = rules_module("scoring")
    solver = rules_module("solver")
    rule_set = rules_rule_set(table.rule_set)
    mine = rows_check(committed.rows)
    held = {
        card_index(card)
        for row in (committed.rows.front, committed.rows.middle, committed.rows.back)
        for card in row
    }
    unseen = [card for card in range(52) if card not in held]
    opponents = table.seat_count - 1
    total = 0
    for _ in range(samples):
        generator.shuffle(unseen)
        for opponent in range(opponents):
            hand = unseen[13 * opponent : 13 * opponent + 13]
            theirs = arrangement.check_arrangement(solver.solve(hand, rule_set))
            total += scoring.settle(rule_set, scoring.compare_rows(mine, theirs))
    return total / samples


def surrender_cost(table: table_pb2.Table) -> int:
    """What surrendering costs at most: the price, times the row unit, to every opponent."""
    rules = table.rule_set
    return rules.surrender_price * max(rules.row_unit, 1) * (table.seat_count - 1)


def expected_value_announcer(samples: int = SAMPLES, seed: int | None = None) -> Announcer:
    """An announcer that surrenders when the committed rows are expected to lose more than the
    surrender costs (module docstring); seeded for repeatable runs."""
    generator = random.Random(seed)

    def announce(committed: Commitment | None, table: table_pb2.Table) -> bool:
        if committed is None or not rules_available():
            return False
        expected = expected_amount(committed, table, samples, generator)
        return expected < -surrender_cost(table)

    return announce

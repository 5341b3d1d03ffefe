"""What a seat should play: the solver's rows, or a natural it holds when declaring pays more.

A seat at a table with naturals declares before it commits (docs/rules.md §2.9): a natural
collects its amount from every opponent without a stronger one, whatever they hold, instead of
the rows being scored. Declaring is nearly always better, but not always: a rule set may set a
natural's amount low (a table's overrides), and a hand holding a natural may also make strong
rows, a straight flush with royalties say. :func:`best_play` compares the two under the rule set:

* the natural: its amount, per opponent, certain (an opponent's stronger natural, which would
  beat both choices, is left out); among several held, the one paying most (then the stronger);
* the rows: the solver's arrangement (``DEFAULT_OBJECTIVE``), valued at its expected units per
  opponent against the rows the solver plays (``played_row_chances``; the three rows taken as
  independent): the scoring method's expected settlement, with its majority and scoop, plus the
  royalties as the rule set pays them (:func:`sapsam.rules.solver_royalties.royalty_value`).

It declares when the natural pays at least as much. This is the choice of ``sapsam arrange``, the
SDK's declarer (every bot) and ``sapsam-play``'s hint; a seat timed out while arranging declared
nothing (docs/rules.md §2.9.1), so no replay depends on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import product

from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.naturals import Natural, natural_amount, naturals_held
from sapsam.rules.royalties import broken_royalties
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.scoring import settle
from sapsam.rules.solver import DEFAULT_OBJECTIVE, Objective, solve
from sapsam.rules.solver_royalties import royalty_value
from sapsam.rules.solver_tables import played_row_chances


@dataclass(frozen=True)
class Play:
    """A seat's choice: the natural to declare (``none``: play the rows) and its rows (committed
    either way: a seat always commits an arrangement), with what each choice is worth per
    opponent in units."""

    natural: Natural
    arrangement: Arrangement
    natural_units: int
    """The declared natural's amount (0 when none is held)."""
    rows_units: Fraction
    """The rows' expected units per opponent."""


def rows_value(rule_set: RuleSet, arrangement: Arrangement) -> Fraction:
    """The expected units per opponent of playing ``arrangement`` (a legal one) under
    ``rule_set``, against the rows the solver plays, the three rows taken as independent: the
    method's settlement of every won / tied / lost combination, plus the royalties."""
    check = check_arrangement(arrangement, strict_order=rule_set.strict_row_order)
    if check.values is None or check.foul:
        raise ValueError(f"not a legal arrangement: {check.detail}")
    front, middle, back, deals = played_row_chances()
    per_row = []
    for table, value in zip((front, middle, back), check.values, strict=True):
        beaten, tied = table[value.strength]
        per_row.append(((1, beaten), (0, tied), (-1, deals - beaten - tied)))
    per_unit = rule_set.with_changes(row_unit=1, pair_units={})
    settled = Fraction(0)
    for (f, f_count), (m, m_count), (b, b_count) in product(*per_row):
        if f_count and m_count and b_count:
            settled += f_count * m_count * b_count * settle(per_unit, (f, m, b))
    settled /= deals**3
    # royalty_value counts the rows as row units; the method's settlement replaces that part.
    chance_units = royalty_value(rule_set.with_changes(royalties="none"), check.values)
    royalties = royalty_value(rule_set, check.values, broken_royalties(rule_set, check))
    return settled + royalties - chance_units


def best_play(cards: Sequence[int], rule_set: RuleSet, goal: Objective = DEFAULT_OBJECTIVE) -> Play:
    """The solver's rows for 13 distinct cards and, at a table with naturals, the natural to
    declare when it pays at least what the rows are expected to (module documentation)."""
    return choose_natural(cards, rule_set, solve(cards, rule_set, goal))


def choose_natural(cards: Sequence[int], rule_set: RuleSet, arrangement: Arrangement) -> Play:
    """:func:`best_play` for rows already chosen (``arrangement``, of these ``cards``)."""
    held = naturals_held(rule_set, cards)  # strongest first
    if not held:
        return Play(Natural.NONE, arrangement, 0, Fraction(0))
    natural = max(held, key=lambda hand: natural_amount(rule_set, hand.natural)).natural
    amount = natural_amount(rule_set, natural)
    rows = rows_value(rule_set, arrangement)
    return Play(natural if amount >= rows else Natural.NONE, arrangement, amount, rows)


__all__ = ["Play", "best_play", "choose_natural", "rows_value"]

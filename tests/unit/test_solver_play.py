"""The solver's choice of what to play (issue #17, "a stronger solver"): declare a natural only
when it pays at least what the rows are expected to (``sapsam.rules.solver_play``), and the
default objective ``played_royalties`` valuing ``largest_only`` and broken hands' claims."""

from __future__ import annotations

import random

from sapsam.rules.arrangement import check_arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.naturals import Natural
from sapsam.rules.presets import PRESETS
from sapsam.rules.royalties import broken_royalties
from sapsam.rules.ruleset import RULES_VERSION, RuleSet
from sapsam.rules.solver import (
    DEFAULT_OBJECTIVE,
    OBJECTIVE_BY_RULES_VERSION,
    Objective,
    solve,
    solver_inputs,
)
from sapsam.rules.solver_play import best_play, rows_value
from sapsam.rules.solver_royalties import royalty_value

# Six pairs that are also two straight flushes (clubs and diamonds, eight to queen) and a pair
# of kings: rows worth more than the natural's 3 units under capsa_susun.
SIX_PAIRS_OF_FLUSHES = parse_cards("Kc Kd Qc Qd Jc Jd Tc Td 9c 9d 8c 8d 2s")
# Six pairs without such rows (suits mixed).
SIX_PAIRS = parse_cards("Kc Kd Qh Qs Jc Jd Th Ts 9c 9d 8h 8s 2s")
DRAGON = parse_cards("Ac 2d 3h 4s 5c 6d 7h 8s 9c Td Jh Qs Kc")


def test_a_natural_is_declared_when_it_pays_more_than_the_rows() -> None:
    rules = PRESETS["capsa_susun"]
    play = best_play(SIX_PAIRS, rules)
    assert play.natural is Natural.SIX_PAIRS and play.natural_units == 3
    assert play.rows_units < 3
    dragon = best_play(DRAGON, rules)
    assert dragon.natural is Natural.DRAGON and dragon.natural_units == 13


def test_rows_worth_more_than_the_natural_are_played() -> None:
    rules = PRESETS["capsa_susun"]
    play = best_play(SIX_PAIRS_OF_FLUSHES, rules)
    assert play.natural is Natural.NONE  # two straight flushes: ~5.5 units a opponent
    assert play.rows_units > 3 and play.natural_units == 3
    assert [value.category.name for value in check_arrangement(play.arrangement).values or ()] == [
        "PAIR",
        "STRAIGHT_FLUSH",
        "STRAIGHT_FLUSH",
    ]
    assert play.rows_units == rows_value(rules, play.arrangement)
    # Worth more, declared: six pairs at 6 units pays more than those rows.
    richer = rules.with_changes(natural_six_pairs=6)
    assert best_play(SIX_PAIRS_OF_FLUSHES, richer).natural is Natural.SIX_PAIRS


def test_of_several_naturals_the_one_paying_most_is_declared() -> None:
    # A dragon is also three straights; with the dragon's amount set to 1, three straights pay 3.
    rules = PRESETS["capsa_susun"].with_changes(natural_dragon=1)
    assert best_play(DRAGON, rules).natural is Natural.THREE_STRAIGHTS
    assert best_play(DRAGON, PRESETS["capsa_susun"]).natural is Natural.DRAGON


def test_without_naturals_nothing_is_declared_and_the_rows_are_the_solvers() -> None:
    rules = PRESETS["pagat"]
    play = best_play(DRAGON, rules)
    assert play.natural is Natural.NONE
    assert play.arrangement == solve(DRAGON, rules, DEFAULT_OBJECTIVE)


def test_the_default_objective_is_the_latest_rules_versions_only() -> None:
    """A timed-out seat's rows follow its rules version's objective (a replay recomputes them):
    the stronger default became rules version 7's, and changed no recorded deal of before."""
    assert DEFAULT_OBJECTIVE is Objective.PLAYED_ROYALTIES
    assert OBJECTIVE_BY_RULES_VERSION[RULES_VERSION] is DEFAULT_OBJECTIVE
    earlier = [OBJECTIVE_BY_RULES_VERSION[version] for version in range(1, 7)]
    assert DEFAULT_OBJECTIVE not in earlier
    # Without largest_only or claims it sets exactly played_units' rows.
    rng = random.Random(11)
    for name in ("capsa_susun", "closed_american", "four_player_bonus", "pagat_one_six"):
        rules = PRESETS[name]
        for _ in range(40):
            cards = rng.sample(range(52), 13)
            assert solve(cards, rules, Objective.PLAYED_ROYALTIES) == solve(
                cards, rules, Objective.PLAYED_UNITS
            )
    assert solver_inputs(PRESETS["capsa_susun_one_royalty"], DEFAULT_OBJECTIVE) != solver_inputs(
        PRESETS["capsa_susun"], DEFAULT_OBJECTIVE
    )


def _value(rules: RuleSet, cards: list[int], goal: Objective) -> float:
    check = check_arrangement(solve(cards, rules, goal))
    assert check.values is not None and not check.foul
    return float(royalty_value(rules, check.values, broken_royalties(rules, check)))


def test_largest_only_does_not_stack_royalties_it_cannot_collect() -> None:
    # Quad twos and trip sevens under one royalty per hand: played_units puts a full house in the
    # middle beside the back quads (a royalty largest_only never adds); played_royalties makes the
    # front stronger instead.
    rules = RuleSet(royalties="won_row", royalty_limit="largest_only")
    cards = list(parse_cards("2c 2d 2h 2s 4h 6s 7d 7h 7s 8c 8h Jc As"))
    units = solve(cards, rules, Objective.PLAYED_UNITS)
    royalties = solve(cards, rules, Objective.PLAYED_ROYALTIES)
    assert check_arrangement(units).values[1].category.name == "FULL_HOUSE"  # type: ignore[index]
    assert check_arrangement(royalties).values[1].category.name != "FULL_HOUSE"  # type: ignore[index]
    assert _value(rules, cards, Objective.PLAYED_ROYALTIES) > _value(
        rules, cards, Objective.PLAYED_UNITS
    )


def test_a_claimed_broken_hand_is_broken_when_that_pays() -> None:
    # Four jacks under claimed broken hands: played_units keeps them in the back (4 units if the
    # back wins); played_royalties breaks them (4 units whatever the rows) into middle trips and
    # a back straight.
    rules = RuleSet(royalties="won_row", royalty_broken_hands="claimed")
    cards = list(parse_cards("2h 3d 4h 7d 8c 8s 9c Ts Jc Jd Jh Js Qs"))
    kept = check_arrangement(solve(cards, rules, Objective.PLAYED_UNITS))
    broken = check_arrangement(solve(cards, rules, Objective.PLAYED_ROYALTIES))
    assert kept.values[2].category.name == "FOUR_OF_A_KIND"  # type: ignore[index]
    assert broken_royalties(rules, broken) == (4,)
    assert _value(rules, cards, Objective.PLAYED_ROYALTIES) > _value(
        rules, cards, Objective.PLAYED_UNITS
    )

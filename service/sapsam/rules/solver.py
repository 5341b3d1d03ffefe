"""The arrangement solver: the best legal split of 13 cards under a documented objective.

Objective ``random_rows``: maximise the summed chance that each row beats a uniformly random row
of the same size drawn from a full deck, ties counting half::

    objective = P(front beats a random front) + P(middle beats a random 5-card hand)
              + P(back beats a random 5-card hand)

The chances come from exact counts over all 22,100 fronts and 2,598,960 five-card hands
(:mod:`sapsam.rules.solver_tables`, shipped as package data), held as integers over one common
denominator so that comparisons are exact and the result is deterministic.

Objective ``played_rows``: the same sum, but each row against the rows that the ``random_rows``
solver actually sets in that position (a shipped table of 10,000 seeded deals). Summed win chances,
ties half, are exactly the expected per-row score against such an opponent, so this aims at the
game rather than at random hands.

Objective ``played_score``: the expected score under the rule set's scoring method (``settle``:
2-4's majority unit, 1-6's points, the scoop bonus, each with the rule set's amounts and
``majority``) against those played rows, taking the three rows' results as independent. Under
per-row scoring that is ``played_rows`` exactly. Found by keeping the ``PLAYED_SCORE_CANDIDATES``
arrangements best under ``played_rows`` and choosing among them by the method's expected score
(held exactly, as integers over ``deals ** 3``); ties keep ``played_rows``' order.

Objective ``played_units`` (rules version 6's): ``played_rows`` plus each row's expected royalty
units under the rule set's royalties and amounts, against the same played rows
(:mod:`sapsam.rules.solver_royalties`); without royalties it is ``played_rows`` exactly.

Objective ``played_royalties`` (the default, :data:`DEFAULT_OBJECTIVE`; rules version 7's):
``played_units`` that also reads ``royalty_limit`` ``largest_only`` and broken hands' claims
(``royalty_broken_hands`` ``claimed``): a row that keeps quads or a straight flush gives up the
claim breaking it earns, and under either option the ``ROYALTY_CANDIDATES`` best arrangements are
ranked by their expected units (:func:`sapsam.rules.solver_royalties.royalty_value`). Without
either option it is ``played_units`` exactly. Whether to declare a natural instead of playing
rows is :func:`sapsam.rules.solver_play.best_play`'s choice.

**The objective is part of the rules.** A seat that times out under the ``solver`` policy gets
``solve(cards, rule_set)``, which a replay recomputes, so the objective a rule set gets
(:func:`objective_for`) is fixed by its ``rules_version``: ``random_rows`` under version 1,
``played_rows`` from version 2, ``played_units`` in version 6 and ``played_royalties`` from
version 7 (``OBJECTIVE_BY_RULES_VERSION``; docs/rules.md §2.5). Royalties
(rules version 4) and naturals change what an arrangement is worth: an objective that counts them
belongs to a new rules version (see :func:`objective_for`), never to an existing one.

The search evaluates each of the C(13,5) = 1,287 five-card subsets and C(13,3) = 286 three-card
subsets once, then walks the backs from the strongest down; for each back it tries the 56 ways to
split the other eight cards into middle and front. The middle is never stronger than the back nor
the front than the middle, so ``the best back score no stronger than it + the best (middle + front
no stronger than that middle) no stronger than it`` bounds everything a back and the weaker backs
can still achieve (running maxima, so it holds even for royalty amounts set out of order): once
that bound cannot beat the best found (the worst kept, when several are kept), no weaker back can
either and the search stops.
Among arrangements with the same objective the first found is kept; the cards are put in canonical
order first, so the result depends on the set of cards only.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from enum import StrEnum
from fractions import Fraction
from functools import cache
from itertools import combinations, product
from types import MappingProxyType
from typing import Final

from sapsam.rules.arrangement import HAND_SIZE, Arrangement, check_arrangement
from sapsam.rules.cards import Card, CardError, by_strength, canonical_order, format_cards
from sapsam.rules.hands import evaluate3, evaluate5
from sapsam.rules.presets import DEFAULT_RULE_SET
from sapsam.rules.royalties import RoyaltyLimit, broken_royalties
from sapsam.rules.ruleset import RuleSet
from sapsam.rules.scoring import settle
from sapsam.rules.solver_royalties import (
    claimed_row_scores,
    claims_broken_hands,
    royalty_inputs,
    royalty_row_scores,
    royalty_value,
)
from sapsam.rules.solver_tables import (
    RowChances,
    RowScores,
    played_row_chances,
    played_row_scores,
    random_row_scores,
)


class Objective(StrEnum):
    """What the solver maximises (see the module documentation)."""

    RANDOM_ROWS = "random_rows"
    """Summed chance of beating random rows of the same size; rules version 1's."""
    PLAYED_ROWS = "played_rows"
    """Summed chance of beating the rows the ``random_rows`` solver plays."""
    PLAYED_SCORE = "played_score"
    """Expected score under the rule set's method against those rows (rows independent)."""
    PLAYED_UNITS = "played_units"
    """``played_rows`` plus each row's expected royalty units under the rule set's royalties and
    amounts (``sapsam.rules.solver_royalties``); rules version 6's."""
    PLAYED_ROYALTIES = "played_royalties"
    """``played_units`` that also reads ``largest_only`` and broken hands' claims (module
    documentation); what ``sapsam arrange``, the bots and the hints use, and rules version 7's."""


DEFAULT_OBJECTIVE: Final = Objective.PLAYED_ROYALTIES
"""The objective of ``sapsam arrange``, the SDK's solver (bots, ``sapsam-play``'s hint) and
:func:`sapsam.rules.solver_play.best_play`. It reads the rule set's royalties as they are paid:
without them it sets exactly the rows ``played_rows`` sets; with them each row also counts its
expected royalty, and ``largest_only`` and broken hands' claims are valued too. It does not rank
by the scoring method's expected score: ``played_score`` does, and ``bench/solver_duel.py``
measured no gain from it under any method (docs/performance.md, "solver"), so the method's
majority and scoop are left to ``played_rows``' row chances. A timed-out seat's rows follow its
rules version's objective (:data:`OBJECTIVE_BY_RULES_VERSION`: this one from version 7, version
6 ``played_units``), which a replay must recompute unchanged."""

ROYALTY_CANDIDATES: Final = 8
"""How many of the best arrangements ``played_royalties`` ranks by their expected units under
``largest_only`` or broken hands' claims."""

PLAYED_SCORE_CANDIDATES: Final = 24
"""How many of the best arrangements under ``played_rows`` ``played_score`` chooses among."""


OBJECTIVE_BY_RULES_VERSION: Final = MappingProxyType(
    {
        1: Objective.RANDOM_ROWS,
        2: Objective.PLAYED_ROWS,
        3: Objective.PLAYED_ROWS,
        4: Objective.PLAYED_ROWS,
        5: Objective.PLAYED_ROWS,
        6: Objective.PLAYED_UNITS,
        7: Objective.PLAYED_ROYALTIES,
    }
)
"""Each rules version's objective, written out rather than following :data:`DEFAULT_OBJECTIVE`:
a replay recomputes a timed-out seat's arrangement, so a change of the default (what ``sapsam
arrange`` aims at) must not change a recorded version's. A new version adds its own entry."""


def solver_inputs(rule_set: RuleSet, goal: Objective | None = None) -> tuple[object, ...]:
    """What :func:`solve` reads of ``rule_set`` under ``goal`` (by default the rule set's): two
    rule sets with equal inputs set every hand alike (``bench/solver_duel.py`` solves once per
    distinct inputs)."""
    goal = objective_for(rule_set) if goal is None else Objective(goal)
    inputs: tuple[object, ...] = (goal, rule_set.strict_row_order)
    if goal is Objective.PLAYED_SCORE:
        per_unit = rule_set.with_changes(row_unit=1, pair_units={})
        inputs += (_outcome_units(per_unit),)
    if goal is Objective.PLAYED_UNITS:
        inputs += (royalty_inputs(rule_set),)
    if goal is Objective.PLAYED_ROYALTIES:
        inputs += (royalty_inputs(rule_set), _reranked(rule_set), claims_broken_hands(rule_set))
    return inputs


def _reranked(rule_set: RuleSet) -> bool:
    """Whether ``played_royalties`` ranks its best few by :func:`royalty_value`."""
    return bool(royalty_inputs(rule_set)) and (
        rule_set.royalty_limit is RoyaltyLimit.LARGEST_ONLY or claims_broken_hands(rule_set)
    )


def objective_for(rule_set: RuleSet) -> Objective:
    """The objective ``solve`` uses for ``rule_set`` when none is named: fixed by the rules
    version (:data:`OBJECTIVE_BY_RULES_VERSION`), since a replay recomputes a timed-out seat's
    arrangement.

    Royalties exist from rules version 4 (``sapsam.rules.royalties``), whose objective does not
    count them (version 2's); version 6's ``played_units`` counts them and the scoring method,
    version 7's ``played_royalties`` also ``largest_only`` and broken hands' claims."""
    return OBJECTIVE_BY_RULES_VERSION[rule_set.rules_version]


def _row_scores(goal: Objective) -> RowScores:
    if goal is Objective.RANDOM_ROWS:
        return random_row_scores()
    return played_row_scores()  # played_score starts from played_rows' candidates


_POSITIONS: Final = range(HAND_SIZE)
_FIVE_SUBSETS: Final = tuple(combinations(_POSITIONS, 5))
_THREE_SUBSETS: Final = tuple(combinations(_POSITIONS, 3))


@cache
def _splits() -> tuple[tuple[tuple[int, int], ...], ...]:
    """For each back (index into the 5-subsets): every (middle index, front index) of the rest.

    Depends on positions only, not on cards, so it is built once per process.
    """
    five_index: dict[tuple[int, ...], int] = {
        subset: index for index, subset in enumerate(_FIVE_SUBSETS)
    }
    three_index: dict[tuple[int, ...], int] = {
        subset: index for index, subset in enumerate(_THREE_SUBSETS)
    }
    splits: list[tuple[tuple[int, int], ...]] = []
    for back in _FIVE_SUBSETS:
        rest = tuple(position for position in _POSITIONS if position not in back)
        pairs = []
        for middle in combinations(rest, 5):
            front = tuple(position for position in rest if position not in middle)
            pairs.append((five_index[middle], three_index[front]))
        splits.append(tuple(pairs))
    return tuple(splits)


def prepare() -> None:
    """Build the solver's per-process tables now (the splits above and the row scores): some
    0.3 to 1 s of CPU, once. A server calls it in a thread before serving, so that the first seat
    timed out under the solver rule does not hold its event loop (every call and stream) that
    long."""
    _splits()
    random_row_scores()
    played_row_scores()
    played_row_chances()


def _checked_cards(cards: Sequence[int]) -> tuple[Card, ...]:
    # Canonical order first, so that the result does not depend on the order the cards came in.
    result = canonical_order(Card(card) for card in cards)
    if len(result) != HAND_SIZE:
        raise CardError(f"expected {HAND_SIZE} cards, got {len(result)}")
    if len(set(result)) != HAND_SIZE:
        raise CardError(f"repeated card among {format_cards(result)}")
    return result


def _strengths(hand: tuple[Card, ...]) -> tuple[list[int], list[int]]:
    five = [
        evaluate5(hand[a], hand[b], hand[c], hand[d], hand[e]).strength
        for a, b, c, d, e in _FIVE_SUBSETS
    ]
    three = [evaluate3(hand[a], hand[b], hand[c]).strength for a, b, c in _THREE_SUBSETS]
    return five, three


def _arrangement(hand: tuple[Card, ...], back: int, middle: int, front: int) -> Arrangement:
    return Arrangement(
        by_strength([hand[position] for position in _THREE_SUBSETS[front]]),
        by_strength([hand[position] for position in _FIVE_SUBSETS[middle]]),
        by_strength([hand[position] for position in _FIVE_SUBSETS[back]]),
    )


def solve(
    cards: Sequence[int],
    rule_set: RuleSet = DEFAULT_RULE_SET,
    goal: Objective | None = None,
) -> Arrangement:
    """The legal arrangement of 13 distinct cards with the highest :func:`objective` for ``goal``
    (by default the rule set's, :func:`objective_for`).

    Never a foul: a legal arrangement always exists (the strongest five-card hand in the back, the
    strongest five of the other eight in the middle: that middle is at least as strong as the
    front plus any two cards, hence as the front). Under ``row_order`` ``strictly_increasing`` the
    middle must be weaker than the back; the solver then keeps to such arrangements, and only if
    13 cards had none (none did among 100,000 seeded random deals) would it return the best
    non-strict one, a foul there as every arrangement would be. Rows are listed strongest card
    first. The result depends on the set of cards only, not on their order. Only
    ``played_score`` reads the rule set's scoring method. Raises
    :class:`~sapsam.rules.cards.CardError` unless given 13 distinct cards.
    """
    goal = objective_for(rule_set) if goal is None else Objective(goal)
    hand = _checked_cards(cards)
    five, three = _strengths(hand)
    ranked = goal is Objective.PLAYED_SCORE
    reranked = goal is Objective.PLAYED_ROYALTIES and _reranked(rule_set)
    keep = PLAYED_SCORE_CANDIDATES if ranked else ROYALTY_CANDIDATES if reranked else 1
    if goal is Objective.PLAYED_UNITS:
        scores = royalty_row_scores(rule_set)
    elif goal is Objective.PLAYED_ROYALTIES:
        scores = claimed_row_scores(rule_set)
    else:
        scores = _row_scores(goal)
    found: list[_Kept] = []
    if rule_set.strict_row_order:
        found = _best_splits(five, three, scores, keep, strict=True)
    if not found:
        found = _best_splits(five, three, scores, keep, strict=False)
    if not found:  # pragma: no cover - a legal arrangement always exists (see above)
        raise AssertionError(f"no legal arrangement found for {format_cards(hand)}")
    if ranked:
        outcome_units = _outcome_units(rule_set)
        chances = played_row_chances()

        def expected(split: tuple[int, int, int]) -> int:
            return _expected_units(five, three, split, chances, outcome_units)

        # Highest expected score; among equals the best searched, then the first found.
        found.sort(key=lambda kept: (expected(kept[2]), kept[0], kept[1]), reverse=True)
    if reranked:

        def value(split: tuple[int, int, int]) -> Fraction:
            check = check_arrangement(_arrangement(hand, *split))
            assert check.values is not None  # legal by construction
            return royalty_value(rule_set, check.values, broken_royalties(rule_set, check))

        # Highest expected units; among equals the best searched, then the first found.
        found.sort(key=lambda kept: (value(kept[2]), kept[0], kept[1]), reverse=True)
    back, middle, front = found[0][2]
    return _arrangement(hand, back, middle, front)


_Kept = tuple[int, int, tuple[int, int, int]]
"""A kept split: its total score, minus its place in the search (earlier is larger), and the
(back, middle, front) subset indices."""


def _best_splits(
    five: list[int], three: list[int], scores: RowScores, keep: int, strict: bool
) -> list[_Kept]:
    """The ``keep`` legal splits with the highest total row score, best first; among equal totals
    the first found. ``strict``: only those whose middle is weaker than the back. Empty when none
    is legal."""
    front_by_strength, middle_by_strength, back_by_strength, _ = scores
    front_score = [front_by_strength[strength] for strength in three]
    middle_score = [middle_by_strength[strength] for strength in five]
    back_score = [back_by_strength[strength] for strength in five]
    splits = _splits()
    kept: list[_Kept] = []  # a heap: kept[0] is the worst kept
    worst: int | None = None  # the score to beat: the worst kept once ``keep`` are kept
    found = 0
    backs = sorted(range(len(five)), key=five.__getitem__, reverse=True)
    # What the middle and front can add to a back: the best middle no stronger than it plus the
    # best front no stronger than that middle (cards shared or not, so a bound). A row's score
    # grows with its strength, except under royalty amounts set out of order, which the running
    # maxima over weaker rows cover.
    fronts = sorted(range(len(three)), key=three.__getitem__)
    front_strengths = [three[front] for front in fronts]
    front_cap: list[int] = []
    for front in fronts:
        score = front_score[front]
        front_cap.append(score if not front_cap or score > front_cap[-1] else front_cap[-1])
    two_rows = [
        middle_score[subset] + front_cap[bisect_right(front_strengths, five[subset]) - 1]
        if five[subset] >= front_strengths[0]
        else middle_score[subset] - 10**30  # no front fits under it: never a legal middle
        for subset in range(len(five))
    ]
    two_rows_cap, back_cap = _capped(two_rows, backs), _capped(back_score, backs)
    for back in backs:
        back_strength = five[back]
        score_of_back = back_score[back]
        if worst is not None and back_cap[back] + two_rows_cap[back] <= worst:
            break
        for middle, front in splits[back]:
            middle_strength = five[middle]
            if middle_strength > back_strength or three[front] > middle_strength:
                continue
            if strict and middle_strength == back_strength:
                continue
            total = score_of_back + middle_score[middle] + front_score[front]
            if worst is None or total > worst:
                found += 1
                entry = (total, -found, (back, middle, front))
                if len(kept) < keep:
                    heapq.heappush(kept, entry)
                else:
                    heapq.heapreplace(kept, entry)
                if len(kept) == keep:
                    worst = kept[0][0]
    return sorted(kept, reverse=True)


def _capped(scores: list[int], strongest_first: list[int]) -> list[int]:
    """Per subset, the highest score of a subset no stronger than it (subsets listed strongest
    first)."""
    capped = scores[:]
    running: int | None = None
    for subset in reversed(strongest_first):
        score = scores[subset]
        running = score if running is None or score > running else running
        capped[subset] = running
    return capped


_OUTCOMES: Final[tuple[tuple[int, int, int], ...]] = tuple(
    (front, middle, back) for front, middle, back in product((1, 0, -1), repeat=3)
)
"""Every front, middle and back result: won, tied, lost."""


def _outcome_units(rule_set: RuleSet) -> tuple[int, ...]:
    """What each of ``_OUTCOMES`` is worth under the rule set's method, in units."""
    return tuple(settle(rule_set, outcome) // rule_set.row_unit for outcome in _OUTCOMES)


def _expected_units(
    five: list[int],
    three: list[int],
    split: tuple[int, int, int],
    chances: RowChances,
    outcome_units: tuple[int, ...],
) -> int:
    """The expected units against the played rows, times ``deals ** 3`` (exact), rows taken as
    independent."""
    back, middle, front = split
    front_table, middle_table, back_table, deals = chances
    per_row = []
    for table, strength in (
        (front_table, three[front]),
        (middle_table, five[middle]),
        (back_table, five[back]),
    ):
        beaten, tied = table[strength]
        per_row.append((beaten, tied, deals - beaten - tied))  # won, tied, lost: as _OUTCOMES
    total = 0
    index = 0
    for front_count in per_row[0]:
        for middle_count in per_row[1]:
            for back_count in per_row[2]:
                total += front_count * middle_count * back_count * outcome_units[index]
                index += 1
    return total


def objective(arrangement: Arrangement, goal: Objective = Objective.RANDOM_ROWS) -> float:
    """The summed chance that each row beats the rows ``goal`` names (ties half), in 0 .. 3
    (``played_score`` counts as ``played_rows`` here: the sum it starts from).

    Scores the rows as they stand, legal or not; raises ``ValueError`` when a row has the wrong
    number of cards or a card repeats.
    """
    front, middle, back = arrangement.rows
    if (len(front), len(middle), len(back)) != (3, 5, 5) or len(set(arrangement.cards)) != 13:
        raise ValueError(f"not a 3/5/5 arrangement of distinct cards: {arrangement}")
    front_score, middle_score, back_score, denominator = _row_scores(Objective(goal))
    total = (
        front_score[evaluate3(*front).strength]
        + middle_score[evaluate5(*middle).strength]
        + back_score[evaluate5(*back).strength]
    )
    return total / denominator


def legal_arrangements(cards: Sequence[int]) -> Iterator[Arrangement]:
    """Every legal arrangement of 13 distinct cards, each split once (rows strongest card first).

    There are 72,072 splits into back, middle and front; this yields those that are not fouls.
    """
    hand = _checked_cards(cards)
    five, three = _strengths(hand)
    for back, pairs in enumerate(_splits()):
        back_strength = five[back]
        for middle, front in pairs:
            if three[front] <= five[middle] <= back_strength:
                yield _arrangement(hand, back, middle, front)

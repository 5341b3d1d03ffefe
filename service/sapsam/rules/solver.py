"""The arrangement solver: the best legal split of 13 cards under a documented objective.

Objective ``random_rows`` (the default): maximise the summed chance that each row beats a uniformly
random row of the same size drawn from a full deck, ties counting half::

    objective = P(front beats a random front) + P(middle beats a random 5-card hand)
              + P(back beats a random 5-card hand)

The chances come from exact counts over all 22,100 fronts and 2,598,960 five-card hands
(:mod:`sapsam.rules.solver_tables`, shipped as package data), held as integers over one common
denominator so that comparisons are exact and the result is deterministic.

Objective ``played_rows``: the same sum, but each row against the rows that the default solver
actually sets in that position (a shipped table of 10,000 seeded deals). Summed win chances, ties
half, are exactly the expected per-row score against such an opponent, so this aims at the game
rather than at random hands; head to head it beats the default by about a third of a point per
hand under per-row scoring (``bench/solver_duel.py``).

The default objective is part of the rules: a seat that times out under the ``solver`` policy gets
``solve(cards, rule_set)``, which a replay recomputes, so it must not change within a
``rules_version``.

The search evaluates each of the C(13,5) = 1,287 five-card subsets and C(13,3) = 286 three-card
subsets once, then walks the backs from the strongest down; for each back it tries the 56 ways to
split the other eight cards into middle and front. The middle is never stronger than the back and
a row's score grows with its strength, so ``back score + middle score at the back's strength + best
front score`` bounds everything a back can still achieve: once that bound cannot beat the best
found, no weaker back can either and the search stops. Among arrangements with the same objective
the first found is kept; the cards are put in canonical order first, so the result depends on the
set of cards only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import StrEnum
from functools import cache
from itertools import combinations
from typing import Final

from sapsam.rules.arrangement import HAND_SIZE, Arrangement
from sapsam.rules.cards import Card, CardError, by_strength, canonical_order, format_cards
from sapsam.rules.hands import evaluate3, evaluate5
from sapsam.rules.ruleset import DEFAULT_RULE_SET, RuleSet
from sapsam.rules.solver_tables import RowScores, played_row_scores, random_row_scores


class Objective(StrEnum):
    """What the solver maximises (see the module documentation)."""

    RANDOM_ROWS = "random_rows"
    """Summed chance of beating random rows of the same size; the default."""
    PLAYED_ROWS = "played_rows"
    """Summed chance of beating the rows the default solver plays."""


def _row_scores(goal: Objective) -> RowScores:
    if goal is Objective.PLAYED_ROWS:
        return played_row_scores()
    return random_row_scores()


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
    goal: Objective = Objective.RANDOM_ROWS,
) -> Arrangement:
    """The legal arrangement of 13 distinct cards with the highest :func:`objective` for ``goal``.

    Never a foul: a legal arrangement always exists (the strongest five-card hand in the back, the
    strongest five of the other eight in the middle: that middle is at least as strong as the
    front plus any two cards, hence as the front). Under ``row_order`` ``strictly_increasing`` the
    middle must be weaker than the back; the solver then keeps to such arrangements, and only if
    13 cards had none (none did among 100,000 seeded random deals) would it return the best
    non-strict one, a foul there as every arrangement would be. Rows are listed strongest card
    first. The result depends on the set of cards only, not on their order. The objective does
    not depend on the scoring method. Raises :class:`~sapsam.rules.cards.CardError` unless given
    13 distinct cards.
    """
    if rule_set.strict_row_order:
        strict = _search(cards, goal, strict=True)
        if strict is not None:
            return strict
    found = _search(cards, goal, strict=False)
    if found is None:  # pragma: no cover - a legal arrangement always exists (see above)
        raise AssertionError(f"no legal arrangement found for {format_cards(cards)}")
    return found


def _search(cards: Sequence[int], goal: Objective, strict: bool) -> Arrangement | None:
    hand = _checked_cards(cards)
    five, three = _strengths(hand)
    front_by_strength, middle_by_strength, back_by_strength, _ = _row_scores(Objective(goal))
    front_score = [front_by_strength[strength] for strength in three]
    middle_score = [middle_by_strength[strength] for strength in five]
    back_score = [back_by_strength[strength] for strength in five]
    best_front_score = max(front_score)
    splits = _splits()
    best = -1
    best_split = (-1, -1, -1)
    for back in sorted(range(len(five)), key=five.__getitem__, reverse=True):
        back_strength = five[back]
        score_of_back = back_score[back]
        # middle_score[back]: the best a middle no stronger than this back can score.
        if score_of_back + middle_score[back] + best_front_score <= best:
            break
        for middle, front in splits[back]:
            middle_strength = five[middle]
            if middle_strength > back_strength or three[front] > middle_strength:
                continue
            if strict and middle_strength == back_strength:
                continue
            total = score_of_back + middle_score[middle] + front_score[front]
            if total > best:
                best = total
                best_split = (back, middle, front)
    if best < 0:
        return None
    back, middle, front = best_split
    return _arrangement(hand, back, middle, front)


def objective(arrangement: Arrangement, goal: Objective = Objective.RANDOM_ROWS) -> float:
    """The summed chance that each row beats the rows ``goal`` names (ties half), in 0 .. 3.

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

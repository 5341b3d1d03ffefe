"""Setting a Fantasyland hand: 13 to 17 cards at once into front 3, middle 5, back 5.

* ``biggest_row_first`` builds a hand that is never dead: the strongest five cards behind, the
  strongest five of the rest in the middle, the strongest three of what is left in front, the
  rest discarded. The middle is at least any five of the cards after the back, so at least the
  front plus any two cards, so at least the front (a 3-card row is never stronger than a 5-card
  row holding it, docs/rules.md §1.4); likewise the back and the middle.
* ``fantasyland_timeout_setting`` is a timed-out Fantasyland under the rule set's policy: 001's
  hand is dead for the set anyway, and its cards go in the order dealt from the back row to the
  front; 003's is set from the biggest row down, ``biggest_row_first``, never dead (2-7:
  ``lowball_row_first``, alive when one of the middles it tries is).
* ``solve_fantasyland`` searches the splits for the most royalties, a re-entry counted as
  ``FANTASYLAND_WORTH``, in a fixed order with bounds, at most ``budget`` middles examined; it
  starts from ``biggest_row_first``, so it never returns less, and never a dead hand. Under a
  deuce-to-seven middle (2-7 Pineapple) it sets by 2-7's order instead (``_solve_lowball``:
  back >= front >= middle under ``middle_weakest``, the middle read deuce-to-seven; back >= front
  under ``back_over_front``), from ``lowball_row_first``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Final

from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card, canonical_order
from sapsam.rules.hands import HandValue, evaluate3, evaluate5
from sapsam.rules.open_face.board import PlacementError
from sapsam.rules.open_face.fantasyland import earns_reentry
from sapsam.rules.open_face.heuristic import FANTASYLAND_WORTH
from sapsam.rules.open_face.lowball import deuce_to_seven_key, lowball_in_order
from sapsam.rules.open_face.parameters import HAND_CARDS, OpenFaceRules, OpenFaceTimeoutPolicy
from sapsam.rules.open_face.royalty import royalty_amounts
from sapsam.rules.open_face.scoring import JudgedHand
from sapsam.rules.royalty_tables import royalty_amount

DEFAULT_BUDGET: Final = 10_000
"""Middles examined at most by ``solve_fantasyland``: about 70 ms of CPU for 13 cards, at most
about 0.3 s for 17 (the royalties found over 20 seeded hands of each size as with twice the
budget, give or take 0.7 a hand)."""
MOST_CARDS: Final = 17


def _checked(dealt: Sequence[Card]) -> tuple[Card, ...]:
    cards = canonical_order(dealt)
    if len(set(cards)) != len(cards) or not HAND_CARDS <= len(cards) <= MOST_CARDS:
        raise PlacementError(f"a Fantasyland hand is 13 to 17 distinct cards, got {len(cards)}")
    return cards


def _strongest(cards: Sequence[Card], size: int) -> tuple[Card, ...]:
    """The ``size`` cards making the strongest row (the first of equals in canonical order)."""
    evaluate = evaluate5 if size == 5 else evaluate3
    return max(combinations(cards, size), key=lambda chosen: evaluate(*chosen).strength)


def biggest_row_first(dealt: Sequence[Card]) -> tuple[Arrangement, tuple[Card, ...]]:
    """The never-dead setting of the module documentation, and its discards."""
    cards = _checked(dealt)
    back = _strongest(cards, 5)
    rest = [card for card in cards if card not in back]
    middle = _strongest(rest, 5)
    rest = [card for card in rest if card not in middle]
    front = _strongest(rest, 3)
    discards = tuple(card for card in rest if card not in front)
    return Arrangement.of_card_rows(front, middle, back), discards


def lowball_row_first(
    rules: OpenFaceRules, dealt: Sequence[Card]
) -> tuple[Arrangement, tuple[Card, ...]]:
    """2-7's counterpart of :func:`biggest_row_first`: the strongest five behind, then the
    middles of the rest from the best deuce-to-seven hand down, each with the strongest three of
    what is left in front; the first that is alive under ``lowball_order`` (the back, the
    strongest five, is never below the front). When none is, the best lowball middle."""
    cards = _checked(dealt)
    back = _strongest(cards, 5)
    rest = [card for card in cards if card not in back]
    middles = sorted(combinations(rest, 5), key=deuce_to_seven_key)
    chosen: tuple[Arrangement, tuple[Card, ...]] | None = None
    for middle in middles:
        left = [card for card in rest if card not in middle]
        front = _strongest(left, 3)
        setting = (
            Arrangement.of_card_rows(front, middle, back),
            tuple(card for card in left if card not in front),
        )
        if chosen is None:
            chosen = setting
        if lowball_in_order(rules, evaluate3(*front), deuce_to_seven_key(middle), evaluate5(*back)):
            return setting
    assert chosen is not None
    return chosen


@dataclass(frozen=True)
class FantasylandTimeout:
    """A timed-out Fantasyland's setting, its discards, and whether the hand is declared dead."""

    arrangement: Arrangement
    discards: tuple[Card, ...]
    declared_dead: bool


def fantasyland_timeout_setting(rules: OpenFaceRules, dealt: Sequence[Card]) -> FantasylandTimeout:
    """What ``timeout_policy`` sets for a Fantasyland seat whose time ran out."""
    if rules.timeout_policy is OpenFaceTimeoutPolicy.DEAD_FOR_SET:
        if not HAND_CARDS <= len(dealt) <= MOST_CARDS or len(set(dealt)) != len(dealt):
            raise PlacementError(f"a Fantasyland hand is 13 to 17 distinct cards, got {len(dealt)}")
        ordered = tuple(Card(card) for card in dealt)
        return FantasylandTimeout(
            Arrangement.of_card_rows(ordered[10:13], ordered[5:10], ordered[:5]),
            ordered[13:],
            True,
        )
    if rules.lowball_middle:
        arrangement, discards = lowball_row_first(rules, dealt)
    else:
        arrangement, discards = biggest_row_first(dealt)
    return FantasylandTimeout(arrangement, discards, False)


def _value(
    rules: OpenFaceRules,
    values: tuple[HandValue, HandValue, HandValue],
    royalties: tuple[int, int, int],
) -> float:
    """A live setting's worth: its royalties, and a re-entry's worth if it earns one."""
    hand = JudgedHand(values, False, False, royalties)
    return sum(royalties) + (FANTASYLAND_WORTH if earns_reentry(rules, hand) else 0.0)


def solve_fantasyland(
    rules: OpenFaceRules, dealt: Sequence[Card], budget: int = DEFAULT_BUDGET
) -> tuple[Arrangement, tuple[Card, ...]]:
    """The best setting found (module documentation) and its discards; deterministic. Under a
    deuce-to-seven middle (2-7 Pineapple) the rows are set by that game's order
    (:func:`_solve_lowball`), never by the classic back >= middle >= front."""
    if rules.lowball_middle:
        return _solve_lowball(rules, dealt, budget)
    cards = _checked(dealt)
    amounts = royalty_amounts(rules)
    fives = {
        subset: evaluate5(*(cards[i] for i in subset))
        for subset in combinations(range(len(cards)), 5)
    }
    threes = {
        subset: evaluate3(*(cards[i] for i in subset))
        for subset in combinations(range(len(cards)), 3)
    }
    back_pay = {subset: royalty_amount(amounts, 2, value) for subset, value in fives.items()}
    middle_pay = {subset: royalty_amount(amounts, 1, value) for subset, value in fives.items()}
    front_pay = {subset: royalty_amount(amounts, 0, value) for subset, value in threes.items()}
    best_middle, best_front = max(middle_pay.values()), max(front_pay.values())

    start, discards = biggest_row_first(cards)
    rows = (start.front, start.middle, start.back)
    values = (evaluate3(*rows[0]), evaluate5(*rows[1]), evaluate5(*rows[2]))
    paid = (
        royalty_amount(amounts, 0, values[0]),
        royalty_amount(amounts, 1, values[1]),
        royalty_amount(amounts, 2, values[2]),
    )
    best = (_value(rules, values, paid), start, discards)
    examined = 0
    backs = sorted(fives, key=lambda subset: (-back_pay[subset], -fives[subset].strength))
    for back in backs:
        paid_back, back_value = back_pay[back], fives[back]
        if paid_back + best_middle + best_front + FANTASYLAND_WORTH <= best[0]:
            break  # the backs come by royalty: none later can do better
        rest = [i for i in range(len(cards)) if i not in back]
        for middle in combinations(rest, 5):
            examined += 1
            if examined > budget:
                return best[1], best[2]
            middle_value = fives[middle]
            if middle_value > back_value:
                continue
            if paid_back + middle_pay[middle] + best_front + FANTASYLAND_WORTH <= best[0]:
                continue
            left = [i for i in rest if i not in middle]
            front = max(
                (subset for subset in combinations(left, 3) if threes[subset] <= middle_value),
                key=lambda subset: (front_pay[subset], threes[subset].strength),
                default=None,
            )
            if front is None:
                continue
            row_pay = (front_pay[front], middle_pay[middle], paid_back)
            score = _value(rules, (threes[front], middle_value, back_value), row_pay)
            if score > best[0]:
                arrangement = Arrangement.of_card_rows(
                    tuple(cards[i] for i in front),
                    tuple(cards[i] for i in middle),
                    tuple(cards[i] for i in back),
                )
                unused = tuple(cards[i] for i in left if i not in front)
                best = (score, arrangement, unused)
    return best[1], best[2]


def _solve_lowball(
    rules: OpenFaceRules, dealt: Sequence[Card], budget: int
) -> tuple[Arrangement, tuple[Card, ...]]:
    """2-7's setting: the most royalties (front and back: a lowball middle earns none) and a
    re-entry's worth, alive under ``lowball_order``. It starts from :func:`lowball_row_first`
    (alive when any of its middles is); the backs come by royalty, and for each the fronts by
    royalty then strength, each with the best deuce-to-seven middle of the cards left (the one
    most likely alive, and the one that wins that row most often): the first alive front is
    that back's best. At most ``budget`` middles examined; a dead setting is only returned when
    no split examined is alive."""
    cards = _checked(dealt)
    amounts = royalty_amounts(rules)
    start, discards = lowball_row_first(rules, cards)
    best: tuple[float, Arrangement, tuple[Card, ...]] | None = None
    start_values = (evaluate3(*start.front), evaluate5(*start.middle), evaluate5(*start.back))
    if lowball_in_order(rules, start_values[0], deuce_to_seven_key(start.middle), start_values[2]):
        paid = (
            royalty_amount(amounts, 0, start_values[0]),
            0,
            royalty_amount(amounts, 2, start_values[2]),
        )
        best = (_value(rules, start_values, paid), start, discards)
    indexes = range(len(cards))
    fives = {subset: evaluate5(*(cards[i] for i in subset)) for subset in combinations(indexes, 5)}
    threes = {subset: evaluate3(*(cards[i] for i in subset)) for subset in combinations(indexes, 3)}
    back_pay = {subset: royalty_amount(amounts, 2, value) for subset, value in fives.items()}
    front_pay = {subset: royalty_amount(amounts, 0, value) for subset, value in threes.items()}
    best_front = max(front_pay.values())
    lowball = {subset: deuce_to_seven_key([cards[i] for i in subset]) for subset in fives}
    examined = 0
    backs = sorted(fives, key=lambda subset: (-back_pay[subset], -fives[subset].strength))
    for back in backs:
        back_value = fives[back]
        if best is not None and back_pay[back] + best_front + FANTASYLAND_WORTH <= best[0]:
            break  # the backs come by royalty: none later can do better
        rest = [i for i in indexes if i not in back]
        fronts = sorted(
            (subset for subset in combinations(rest, 3) if threes[subset] <= back_value),
            key=lambda subset: (-front_pay[subset], -threes[subset].strength),
        )
        for front in fronts:
            front_value = threes[front]
            if (
                best is not None
                and back_pay[back] + front_pay[front] + FANTASYLAND_WORTH <= best[0]
            ):
                break  # the fronts come by royalty too
            left = [i for i in rest if i not in front]
            middles = list(combinations(left, 5))
            examined += len(middles)
            if examined > budget:
                return (start, discards) if best is None else (best[1], best[2])
            middle = min(middles, key=lambda subset: lowball[subset])
            if not lowball_in_order(rules, front_value, lowball[middle], back_value):
                continue
            values = (front_value, fives[middle], back_value)
            score = _value(rules, values, (front_pay[front], 0, back_pay[back]))
            if best is None or score > best[0]:
                arrangement = Arrangement.of_card_rows(
                    tuple(cards[i] for i in front),
                    tuple(cards[i] for i in middle),
                    tuple(cards[i] for i in back),
                )
                unused = tuple(cards[i] for i in left if i not in middle)
                best = (score, arrangement, unused)
            break  # this back's best alive front is found
    return (start, discards) if best is None else (best[1], best[2])

"""2-7 Pineapple's middle row: deuce-to-seven lowball values and the order rule of such a hand.

001: «Разновидность игры, при которой в Среднем боксе нужно собирать самую слабую комбинацию.
Остальные правила идентичны обычному ананасу, но Средний бокс сравнивается в зеркальном
отражении: он должен быть самым слабым.» — "A variety in which the Middle box must hold the
weakest combination. The other rules are those of ordinary Pineapple, but the Middle box is
compared mirrored: it must be the weakest."

Deuce-to-seven (the source names the game, not its details; these are the usual lowball rules):
straights and flushes count against the hand and the ace is only high, so A-2-3-4-5 is no
straight (ace high, or an ace-high flush when suited). A hand's lowball **key** is its high key
(``HandValue.key``) with the wheel read so; a *lower* key is a *better* lowball hand, and between
two seats the lower middle wins the row ("compared mirrored").

The order rule (docs/rules.md §8.10, ``lowball_order``): ``middle_weakest`` (the source read
literally: back >= front >= middle, the middle's lowball key against the front's high key) or
``back_over_front`` (the middle free).
"""

from __future__ import annotations

from collections.abc import Sequence

from sapsam.rules.cards import Card
from sapsam.rules.hands import ACE, FIVE, Category, HandValue, evaluate5
from sapsam.rules.open_face.parameters import LowballOrder, OpenFaceRules

__all__ = ["deuce_to_seven_key", "lowball_in_order", "lowball_row_result"]

_WHEEL_RANKS = (ACE, 3, 2, 1, 0)


def deuce_to_seven_key(cards: Sequence[Card]) -> tuple[int, ...]:
    """The deuce-to-seven key of a 5-card row: lower is a better lowball hand."""
    value = evaluate5(*cards)
    if value.category in (Category.STRAIGHT, Category.STRAIGHT_FLUSH) and value.ranks[0] == FIVE:
        # The wheel: the ace plays high, so no straight.
        suited = value.category is Category.STRAIGHT_FLUSH
        return (Category.FLUSH if suited else Category.HIGH_CARD, *_WHEEL_RANKS)
    return value.key


def lowball_row_result(mine: tuple[int, ...], theirs: tuple[int, ...]) -> int:
    """+1 when ``mine`` is the better (lower) lowball middle, -1 when worse, 0 when tied."""
    return (mine < theirs) - (mine > theirs)


def lowball_in_order(
    rules: OpenFaceRules, front: HandValue, middle: tuple[int, ...], back: HandValue
) -> bool:
    """Whether a finished hand with a lowball middle (key ``middle``) is alive under
    ``lowball_order``: back >= front always; with ``middle_weakest`` also front >= middle (the
    front's high key against the middle's lowball key: the middle must be the weakest row)."""
    if front > back:
        return False
    if rules.lowball_order is LowballOrder.MIDDLE_WEAKEST:
        return middle <= front.key
    return True

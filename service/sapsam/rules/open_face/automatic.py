"""Automatic moves and timeouts (001, 003), as pure functions of the board and the dealt cards.

Automatic moves (001, ``automatic_moves`` ``forced``): a seat's cards are placed for it when there
is only one placement, when its hand is already dead, or when every placement kills it:

> 001: «Когда остается только единственный вариант хода. Когда рука уже мертвая. Когда любой из
> ходов приведет к мертвой руке.» — "When only one move is left. When the hand is already dead.
> When any move leads to a dead hand." «автоматический ход, приводящий к мертвой руке, не
> производится» — "an automatic move leading to a dead hand is not made" (while another exists).

So no automatic move is made while some placement keeps the hand alive; ``dead.is_dead`` says
"dead" only when certain, so an uncertain case is left to the seat.

Timeouts (``timeout_policy``): ``dead_for_set`` (001) declares the hand dead until the set ends
and places its cards from the back row to the front; ``biggest_row_first`` (003) places the rest
of the hand from the biggest row down without declaring it dead, preferring, as 001's rule for
automatic moves asks, a placement that keeps the hand alive.

Pineapple (``street_discards``): a move is a placement and the cards discarded. The sources say
nothing of which card a move made for the seat throws away; sapsam's choice (docs/rules.md
§8.10): the moves are tried in ``board.street_moves`` order, the last card dealt discarded first,
so the fill from the back discards the last card dealt and places the others in order.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum

from sapsam.rules.cards import Card
from sapsam.rules.open_face.board import (
    Board,
    Placement,
    discards_due,
    legal_placements,
    street_moves,
)
from sapsam.rules.open_face.dead import is_dead, kills
from sapsam.rules.open_face.parameters import (
    AutomaticMoves,
    OpenFaceRules,
    OpenFaceTimeoutPolicy,
)


class AutomaticReason(StrEnum):
    """Why a move was made for the seat."""

    ONLY_OPTION = "only_option"
    ALREADY_DEAD = "already_dead"
    EVERY_OPTION_KILLS = "every_option_kills"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class AutomaticMove:
    """A placement made for a seat, and why."""

    placement: Placement
    reason: AutomaticReason
    discards: tuple[Card, ...] = ()


def _moves(
    rules: OpenFaceRules, board: Board, dealt: Sequence[Card]
) -> tuple[tuple[Placement, tuple[Card, ...]], ...]:
    # Only the first street (an empty board) discards nothing.
    return street_moves(board, dealt, discards_due(rules, 1 if board.placed else 0))


def fill_from_the_back(board: Board, dealt: Sequence[Card]) -> Placement:
    """The dealt cards, in the order dealt, into the back until it is full, then the middle, then
    the front (001: «Раздача ведется подряд слева на право: со Старшего бокса к Младшему», "laid
    out in a row left to right: from the senior box to the junior"; 003: «de la cea mai mare la
    cea mai mică casetă», "from the biggest to the smallest box")."""
    return legal_placements(board, dealt)[0]  # row_choices lists this fill first


def automatic_move(
    rules: OpenFaceRules,
    board: Board,
    dealt: Sequence[Card],
    pool: Collection[Card] | None = None,
    declared_dead: bool = False,
) -> AutomaticMove | None:
    """The move made for the seat under ``automatic_moves``, or ``None`` when it must choose.

    ``pool``: the cards that may still come to the seat (every card it has not seen; by default
    every card not on its board nor dealt); ``declared_dead``: the hand was declared dead (001's
    timeout), so every later street is placed for it.
    """
    options = _moves(rules, board, dealt)
    first, thrown = options[0]
    if declared_dead:
        return AutomaticMove(first, AutomaticReason.ALREADY_DEAD, thrown)
    if rules.automatic_moves is AutomaticMoves.OFF:
        return None
    if len(options) == 1:
        return AutomaticMove(first, AutomaticReason.ONLY_OPTION, thrown)
    remaining = _pool(board, dealt, pool)
    # Already dead: whatever cards had come, this street's included.
    if is_dead(board, [*remaining, *dealt], rules):
        return AutomaticMove(first, AutomaticReason.ALREADY_DEAD, thrown)
    if all(kills(board, option, remaining, rules) for option, _ in options):
        return AutomaticMove(first, AutomaticReason.EVERY_OPTION_KILLS, thrown)
    return None


def _pool(board: Board, dealt: Sequence[Card], pool: Collection[Card] | None) -> list[Card]:
    """The cards that may come after this street (the dealt ones are known now)."""
    excluded = set(board.cards).union(dealt)
    source = range(52) if pool is None else pool
    return [Card(card) for card in source if card not in excluded]


@dataclass(frozen=True)
class TimeoutConsequence:
    """What a timeout does beyond this street's placement.

    ``dead_until_set_ends``: the hand is declared dead for this and every later deal of the set
    (001: «его рука считается мертвой до конца партии», "his hand is considered dead until the
    end of the set"); ``automatic_until_set_ends``: every later street of the set is placed for
    the seat (001) rather than only the rest of this hand (003: «toate mișcările din mâna curentă
    sunt făcute pentru el automat», "all moves of the current hand are made for him
    automatically"); ``set_ends_after_hand``: the set ends after this hand once the Fantasylands
    already earned are played (003: «jocul continuă până când toate „Fantezie" disponibile au
    fost jucate […] În alte cazuri, jocul se termină imediat după mâna în care jucătorul a trecut
    la „Timeout"», "play goes on until every Fantasyland available is played [...] otherwise the
    game ends right after the hand in which the player timed out").
    """

    dead_until_set_ends: bool
    automatic_until_set_ends: bool
    set_ends_after_hand: bool


def timeout_consequence(rules: OpenFaceRules) -> TimeoutConsequence:
    """What ``timeout_policy`` does to the seat and the set."""
    if rules.timeout_policy is OpenFaceTimeoutPolicy.DEAD_FOR_SET:
        return TimeoutConsequence(True, True, False)
    return TimeoutConsequence(False, False, True)


def timeout_move(
    rules: OpenFaceRules,
    board: Board,
    dealt: Sequence[Card],
    pool: Collection[Card] | None = None,
) -> AutomaticMove:
    """The placement made for a seat whose time ran out on this street.

    ``dead_for_set``: the back-to-front fill (the hand is dead anyway). ``biggest_row_first``:
    the first placement in biggest-row-first order that does not kill the hand, else the fill.
    """
    options = _moves(rules, board, dealt)
    if rules.timeout_policy is OpenFaceTimeoutPolicy.BIGGEST_ROW_FIRST and len(options) > 1:
        remaining = _pool(board, dealt, pool)
        if not is_dead(board, [*remaining, *dealt], rules):
            for option, thrown in options:
                if not kills(board, option, remaining, rules):
                    return AutomaticMove(option, AutomaticReason.TIMEOUT, thrown)
    first, thrown = options[0]
    return AutomaticMove(first, AutomaticReason.TIMEOUT, thrown)

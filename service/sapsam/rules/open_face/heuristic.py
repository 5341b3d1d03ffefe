"""A simple placement heuristic, and the value the solver gives a finished hand.

``heuristic_placement`` scores the board each placement would leave with a few rules of thumb
(pairs and trips count, strong rows belong low, a flush draw is worth keeping in a 5-card row, a
front that outgrows the middle, or a middle the back, costs) and takes the best. It is the
solver's rollout policy, and the baseline the solver is measured against
(``bench/open_face_solver.py``). It reads only rank and suit counts: hands are valued by
``sapsam.rules.hands`` once a row is full.

``finished_value`` is what the solver maximises: a stand-in for the points a hand brings, its
royalties plus a Fantasyland's worth plus a little for each row's strength, minus a dead hand's
cost.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from itertools import permutations
from typing import Final

from sapsam.rules.cards import RANK_CHARS, Card
from sapsam.rules.hands import Category, evaluate3, evaluate5
from sapsam.rules.open_face.board import Board, Placement, legal_placements, street_moves
from sapsam.rules.open_face.dead import EXACT_FREE_PLACES, kills, rows_in_order
from sapsam.rules.open_face.fantasyland import entry_cards
from sapsam.rules.open_face.lowball import deuce_to_seven_key, lowball_in_order
from sapsam.rules.open_face.parameters import HAND_CARDS, OpenFaceRules
from sapsam.rules.open_face.royalty import royalty_amounts
from sapsam.rules.royalty_tables import royalty_amount

DEAD_HAND_COST: Final = 12.0
"""What a dead hand costs in ``finished_value``: the scoop paid (6) and about as much again in
the opponents' royalties and the rows it might have won."""
FANTASYLAND_WORTH: Final = 8.0
"""What earning a Fantasyland is worth: a 13-card hand set at once scores far above a normal one."""
ROW_WEIGHT: Final = 1.5
"""Points for a row's strength from nothing to the strongest category (about a row won)."""

_CATEGORY_SHARE: Final = (0.0, 0.3, 0.5, 0.62, 0.72, 0.8, 0.9, 0.97, 1.0)
"""A row's rough chance, by category, of beating the same row of a typical finished hand."""


def finished_value(rules: OpenFaceRules, board: Board) -> float:
    """The solver's value of a complete board (module documentation). A lowball middle (2-7)
    is valued mirrored: the weaker its category, the more it is worth, and it earns nothing."""
    front = evaluate3(*board.front)
    middle = evaluate5(*board.middle)
    back = evaluate5(*board.back)
    lowball = rules.lowball_middle
    if lowball:
        alive = lowball_in_order(rules, front, deuce_to_seven_key(board.middle), back)
    else:
        alive = rows_in_order(front, middle, back)
    if not alive:
        return -DEAD_HAND_COST
    amounts = royalty_amounts(rules)
    value = float(
        royalty_amount(amounts, 0, front)
        + (0 if lowball else royalty_amount(amounts, 1, middle))
        + royalty_amount(amounts, 2, back)
    )
    if entry_cards(rules, front) is not None:
        value += FANTASYLAND_WORTH
    # The front competes with fronts: a pair there is strong; the 5-card rows by category.
    front_share = (0.2, 0.75, 1.0)[front.category if front.category < 3 else 2]
    middle_share = _CATEGORY_SHARE[middle.category]
    if lowball:
        middle_share = 1.0 - middle_share - 0.05 * middle.ranks[0]
    shares = front_share + middle_share + _CATEGORY_SHARE[back.category]
    return value + ROW_WEIGHT * shares


_HIGH_CARD_SCALE: Final = 0.06
_MADE_BY_CATEGORY: Final = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0)


def _made(row: Sequence[int], capacity: int) -> float:
    """What a row has made so far, on one scale for every row: 0 nothing, 1 a pair, 2 two pair,
    3 trips, 4 a straight, 5 a flush, 6 a full house, 7 quads, 8 a straight flush, plus up to
    0.9 for the rank of its main group. A full 5-card row is valued exactly."""
    if not row:
        return 0.0
    if len(row) == 5:
        value = evaluate5(*row)
        scale = _HIGH_CARD_SCALE if value.category is Category.HIGH_CARD else 0.07
        return _MADE_BY_CATEGORY[value.category] + scale * value.ranks[0]
    counts = [0] * 13
    for card in row:
        counts[card >> 2] += 1
    most = max(counts)
    if most == 1:
        return _HIGH_CARD_SCALE * max(card >> 2 for card in row)
    top = 12 - counts[::-1].index(most)
    if most == 4:
        return 7.0 + 0.07 * top
    pairs = counts.count(2)
    if most == 3:
        return (6.0 if pairs else 3.0) + 0.07 * top
    return (2.0 if pairs == 2 else 1.0) + 0.07 * top


def _draw(row: Sequence[int]) -> float:
    """A 5-card row's flush draw: three or four cards of one suit and room for the rest."""
    if 3 <= len(row) < 5 and len({card & 3 for card in row}) == 1:
        return 0.6 * (len(row) - 2)
    return 0.0


_SLACK_PER_PLACE: Final = 0.4
"""How much a row may still gain per empty place, in ``_made`` units, when weighing the risk
that the row above outgrows it."""
_MARGIN: Final = 1.0
"""How far below the row beneath (allowing for its empty places) a row must stay to be safe.
With these two the heuristic alone leaves about 21% of hands dead over 300 seeded deals
(0.25 and no margin: 45%)."""


def _partial_score(
    rules: OpenFaceRules, rows: tuple[Sequence[int], Sequence[int], Sequence[int]]
) -> float:
    front, middle, back = rows
    made_front = _made(front, 3)
    made_middle = _made(middle, 5)
    made_back = _made(back, 5)
    if rules.lowball_middle:
        # 2-7: the middle is best low and unpaired; only the front must stay below the back.
        risk = max(0.0, made_front - made_back + _MARGIN - _SLACK_PER_PLACE * (5 - len(back)))
        low = -0.9 * made_middle - 0.04 * sum(card >> 2 for card in middle)
        return made_back + low + 0.3 * made_front - 10.0 * risk + _draw(back)
    # A row stronger than the one below it must be caught up with by the cards still to come;
    # the fewer places left below, the less likely, and a dead hand is the costliest outcome.
    risk = max(
        0.0, made_front - made_middle + _MARGIN - _SLACK_PER_PLACE * (5 - len(middle))
    ) + max(0.0, made_middle - made_back + _MARGIN - _SLACK_PER_PLACE * (5 - len(back)))
    score = made_back + 0.9 * made_middle + 0.3 * made_front - 10.0 * risk
    score += _draw(back) + 0.7 * _draw(middle)
    # Unpaired high cards help the 5-card rows; the front is where low cards go.
    score += 0.01 * (sum(card >> 2 for card in back) + sum(card >> 2 for card in middle))
    score -= 0.03 * sum(card >> 2 for card in front)
    entry = rules.fantasyland_entry_rank
    if (
        entry is not None
        and made_front >= 1.0 + 0.07 * RANK_CHARS.index(entry)
        and made_back >= made_middle >= made_front
    ):
        score += 2.0  # a Fantasyland front already covered by the rows below
    return score


def board_score(rules: OpenFaceRules, board: Board) -> float:
    """The heuristic's score of a board, finished or not (higher is better)."""
    if board.complete:
        return finished_value(rules, board)
    return _partial_score(rules, board.rows)


def heuristic_placement(
    rules: OpenFaceRules, board: Board, dealt: Sequence[Card], seen: Collection[int] = ()
) -> Placement:
    """The placement whose board scores best; the first of equals, in ``legal_placements``
    order (biggest row first). Once at most ``EXACT_FREE_PLACES`` places would remain, a
    placement that kills the hand (``dead.kills``, the cards not on the board nor in ``seen``
    still to come) is passed over while another does not."""
    options = legal_placements(board, dealt)
    if HAND_CARDS - board.placed - len(dealt) <= EXACT_FREE_PLACES and len(options) > 1:
        excluded = set(board.cards).union(dealt, seen)
        pool = [Card(card) for card in range(52) if card not in excluded]
        alive = [option for option in options if not kills(board, option, pool, rules)]
        options = tuple(alive) or options
    best = options[0]
    best_score = board_score(rules, board.with_placement(best))
    for option in options[1:]:
        score = board_score(rules, board.with_placement(option))
        if score > best_score:
            best, best_score = option, score
    return best


def heuristic_street_move(
    rules: OpenFaceRules,
    board: Board,
    dealt: Sequence[Card],
    discards: int,
    seen: Collection[int] = (),
) -> tuple[Placement, tuple[Card, ...]]:
    """Pineapple's heuristic move: the (placement, discards) of ``street_moves`` whose board
    scores best, the first of equals; a move that kills the hand is passed over near the end
    while another does not, as :func:`heuristic_placement` does."""
    moves = street_moves(board, dealt, discards)
    if HAND_CARDS - board.placed - (len(dealt) - discards) <= EXACT_FREE_PLACES and len(moves) > 1:
        excluded = set(board.cards).union(dealt, seen)
        pool = [Card(card) for card in range(52) if card not in excluded]
        alive = [move for move in moves if not kills(board, move[0], pool, rules)]
        moves = tuple(alive) or moves
    return max(moves, key=lambda move: board_score(rules, board.with_placement(move[0])))


def play_out(rules: OpenFaceRules, board: Board, future: Sequence[Card]) -> float:
    """``finished_value`` of the board once ``future`` is placed: one card at a time by the
    heuristic's score (on plain lists: this is the solver's inner loop), and the last
    ``EXACT_FREE_PLACES`` cards, which a rollout knows, in their best places."""
    rows: tuple[list[Card], list[Card], list[Card]] = (
        list(board.front),
        list(board.middle),
        list(board.back),
    )
    capacity = (3, 5, 5)
    last = max(0, len(future) - EXACT_FREE_PLACES)
    for card in future[:last]:
        best_row, best_score = -1, 0.0
        for row in (2, 1, 0):  # biggest row first, as legal_placements lists them
            if len(rows[row]) == capacity[row]:
                continue
            rows[row].append(card)
            score = _partial_score(rules, rows)
            rows[row].pop()
            if best_row < 0 or score > best_score:
                best_row, best_score = row, score
        rows[best_row].append(card)
    places = [row for row in (0, 1, 2) for _ in range(capacity[row] - len(rows[row]))]
    ending = future[last:]
    best_value: float | None = None
    for order in sorted(set(permutations(places))):
        for row, card in zip(order, ending, strict=True):
            rows[row].append(card)
        value = _finished_rows_value(rules, rows)
        for row in order:
            rows[row].pop()
        if best_value is None or value > best_value:
            best_value = value
    return best_value if best_value is not None else _finished_rows_value(rules, rows)


def _finished_rows_value(
    rules: OpenFaceRules, rows: tuple[list[Card], list[Card], list[Card]]
) -> float:
    return finished_value(rules, Board(tuple(rows[0]), tuple(rows[1]), tuple(rows[2])))

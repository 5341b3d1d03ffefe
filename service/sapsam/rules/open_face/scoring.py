"""Scoring an open-face deal: 1-6 for each pair of seats, royalties netted, dead hands.

Each pair settles separately (003: «fiecare împotriva fiecăruia», "each against each"):

* both hands live: rows compared front, middle, back; winning all three pays ``scoop_points``
  (6), winning two of the three ``two_of_three_points`` (1; 003's alternative 2), anything else
  nothing (a tied row counts for neither seat: one won and two tied is not two of three). Then
  each seat's royalties count whether its rows won or lost, and the difference changes hands
  (003: «câștigătorul primește diferența în aceste bonusuri», "the winner receives the difference
  of these bonuses"); 003's example, a scoop with back quads (10) against a back flush (4),
  pays 6 + 10 - 4 = 12.
* one dead: the live seat wins the scoop and its own royalties; the dead hand's royalties do not
  count (003: «plătește atât o penalizare de 6 puncte, cât și redevențe fiecărui adversar», "pays
  both a 6-point penalty and the royalties to each opponent").
* both dead: nothing (003: «dacă mâinile tuturor jucătorilor din mână au fost falsificate brusc,
  nimeni nu plătește nimic nimănui», "if every player's hand is fouled, nobody pays anybody").

2-7 Pineapple (``middle_row`` ``deuce_to_seven``, ``sapsam.rules.open_face.lowball``): the
middle rows are compared mirrored, the lower deuce-to-seven hand winning; the order rule is the
rule set's ``lowball_order``; a lowball middle earns no royalty.

Finnish 2♠ (``finnish_two_of_spades``, 003): ``row`` doubles, between the live hand holding the
2♠ and each opponent, both royalties of the row it sits in (003: «va trebui să plătiți
oponentului dublu bonusul full house (12 puncte)», "you will have to pay the opponent double the
full house bonus (12 points)"); ``own`` doubles only the holder's.

Every pair's payment is antisymmetric, so a deal is zero-sum, and it depends only on the two
hands, so relabelling the seats permutes the totals.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sapsam.rules.cards import parse_cards
from sapsam.rules.hands import HandValue, evaluate3, evaluate5
from sapsam.rules.open_face.board import Board, PlacementError, verify_board
from sapsam.rules.open_face.dead import rows_in_order
from sapsam.rules.open_face.lowball import deuce_to_seven_key, lowball_in_order, lowball_row_result
from sapsam.rules.open_face.parameters import FinnishTwo, OpenFaceRules
from sapsam.rules.open_face.royalty import row_royalties

Values = tuple[HandValue, HandValue, HandValue]


@dataclass(frozen=True)
class JudgedHand:
    """A finished hand as the scorer sees it.

    ``fouled``: its rows are out of order; ``dead``: fouled, or declared dead (001's timeout);
    ``royalties``: front, middle, back, all 0 for a dead hand (undoubled by a Finnish 2♠);
    ``lowball_middle``: the middle's deuce-to-seven key when the rule set plays it lowball;
    ``two_of_spades_row``: the row holding the 2♠ when it doubles (Finnish, a live hand), else
    None.
    """

    values: Values
    fouled: bool
    dead: bool
    royalties: tuple[int, int, int]
    lowball_middle: tuple[int, ...] | None = None
    two_of_spades_row: int | None = None
    finnish: FinnishTwo = FinnishTwo.OFF

    @property
    def royalty_total(self) -> int:
        return sum(self.royalties)


def hand_values(board: Board) -> Values:
    """The front's, middle's and back's values of a complete board."""
    if not board.complete:
        raise PlacementError(f"only a complete board is scored; {board} holds {board.placed}")
    return (evaluate3(*board.front), evaluate5(*board.middle), evaluate5(*board.back))


def judge_hand(rules: OpenFaceRules, board: Board, declared_dead: bool = False) -> JudgedHand:
    """A complete board's values, whether it is dead, and its royalties."""
    verify_board(board)
    values = hand_values(board)
    lowball = deuce_to_seven_key(board.middle) if rules.lowball_middle else None
    if lowball is None:
        fouled = not rows_in_order(*values)
    else:
        fouled = not lowball_in_order(rules, values[0], lowball, values[2])
    dead = fouled or declared_dead
    royalties = (0, 0, 0) if dead else row_royalties(rules, values)
    if lowball is not None:
        royalties = (royalties[0], 0, royalties[2])
    two_row = None
    if rules.finnish_two_of_spades is not FinnishTwo.OFF and not dead:
        rows = enumerate(board.rows)
        two_row = next((row for row, cards in rows if _TWO_OF_SPADES in cards), None)
    return JudgedHand(
        values, fouled, dead, royalties, lowball, two_row, rules.finnish_two_of_spades
    )


_TWO_OF_SPADES = parse_cards("2s")[0]


@dataclass(frozen=True)
class OpenFacePairResult:
    """Seat ``seat_a`` against seat ``seat_b`` (``seat_a < seat_b``), from ``seat_a``'s side.

    ``rows``: front, middle, back, +1 won, -1 lost, 0 tied (a live hand wins every row against a
    dead one, two dead hands tie them); ``points``: the 1-6 part; ``royalties``: ``seat_a``'s
    royalties minus ``seat_b``'s; ``delta``: their sum, what ``seat_a`` gains.
    """

    seat_a: int
    seat_b: int
    rows: tuple[int, int, int]
    points: int
    royalties: int

    @property
    def delta(self) -> int:
        return self.points + self.royalties


@dataclass(frozen=True)
class OpenFaceDealScore:
    """Every seat's judged hand, every pair's result, and each seat's total (sums to zero)."""

    hands: tuple[JudgedHand, ...]
    pairs: tuple[OpenFacePairResult, ...]
    totals: tuple[int, ...]


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)


def compare_hands(first: JudgedHand, second: JudgedHand) -> tuple[int, int, int]:
    """Front, middle and back from ``first``'s side (dead hands as in the module doc)."""
    if first.dead or second.dead:
        outcome = 0 if first.dead and second.dead else (-1 if first.dead else 1)
        return (outcome, outcome, outcome)
    front, middle, back = (
        _sign(mine.strength - theirs.strength)
        for mine, theirs in zip(first.values, second.values, strict=True)
    )
    if first.lowball_middle is not None and second.lowball_middle is not None:
        middle = lowball_row_result(first.lowball_middle, second.lowball_middle)
    return (front, middle, back)


def royalty_difference(first: JudgedHand, second: JudgedHand) -> int:
    """``first``'s royalties minus ``second``'s, a Finnish 2♠ doubling as the module doc says."""
    mine = list(first.royalties)
    theirs = list(second.royalties)
    for hand, own, other in ((first, mine, theirs), (second, theirs, mine)):
        row = hand.two_of_spades_row
        if row is None:
            continue
        own[row] *= 2
        if hand.finnish is FinnishTwo.ROW:
            other[row] *= 2
    return sum(mine) - sum(theirs)


def row_points(rules: OpenFaceRules, rows: tuple[int, int, int]) -> int:
    """The 1-6 points of these row results, from the first seat's side."""
    won, lost = rows.count(1), rows.count(-1)
    if won == 3:
        return rules.scoop_points
    if lost == 3:
        return -rules.scoop_points
    if won >= 2:
        return rules.two_of_three_points
    if lost >= 2:
        return -rules.two_of_three_points
    return 0


def score_pair(
    rules: OpenFaceRules, first: JudgedHand, second: JudgedHand, seats: tuple[int, int] = (0, 1)
) -> OpenFacePairResult:
    """How ``first`` fares against ``second``; royalties of a dead hand are already 0."""
    rows = compare_hands(first, second)
    return OpenFacePairResult(
        seats[0],
        seats[1],
        rows,
        row_points(rules, rows),
        royalty_difference(first, second),
    )


def score_open_face_deal(
    rules: OpenFaceRules, boards: Sequence[Board], declared_dead: Collection[int] = ()
) -> OpenFaceDealScore:
    """Score a deal: one complete board per seat (index = seat); ``declared_dead`` names the
    seats dead whatever their rows (001's timeout). Raises :class:`PlacementError` for an
    incomplete board or a card on two boards, ``ValueError`` for a seat count the rules refuse."""
    if not rules.min_seats <= len(boards) <= rules.max_seats:
        raise ValueError(
            f"{len(boards)} seats; these rules play {rules.min_seats} to {rules.max_seats}"
        )
    unknown = [seat for seat in declared_dead if not 0 <= seat < len(boards)]
    if unknown:
        raise ValueError(f"no seat {unknown[0]} among {len(boards)} seats")
    every_card = [card for board in boards for card in board.cards]
    if len(set(every_card)) != len(every_card):
        raise PlacementError("a card lies on two boards")
    hands = tuple(
        judge_hand(rules, board, seat in declared_dead) for seat, board in enumerate(boards)
    )
    pairs = tuple(
        score_pair(rules, hands[a], hands[b], (a, b))
        for a in range(len(hands))
        for b in range(a + 1, len(hands))
    )
    totals = [0] * len(hands)
    for pair in pairs:
        totals[pair.seat_a] += pair.delta
        totals[pair.seat_b] -= pair.delta
    return OpenFaceDealScore(hands, pairs, tuple(totals))

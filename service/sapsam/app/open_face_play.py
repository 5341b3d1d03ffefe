"""What the application adds to an open-face deal: the cards a secret seed deals, and the moves
the service makes itself in the append of the command that made them due.

The domain (``sapsam.domain.open_face``) never reads a secret seed: each command that needs the
cards a seat was dealt carries them, computed here from the deal's seed by the documented order
(``sapsam.fairness.open_face_deal``, docs/fairness.md §22). And the domain waits for the
service at three points, which the runner (``sapsam.app.table_runner``) settles in the same
append as the command that reached them (:func:`settling_step`), so a table never waits for
the service:

- a street is due (after the cut, and after the last seat placed the street before): the street
  is dealt, each receiving seat's cards pinned by their digest under the deal's record key;
- the seat on turn has no choice to make (its rule set's ``automatic_moves``: one option, the hand
  already dead, every option kills it; or its time ran out earlier in the hand): its cards are
  placed for it (``PlaceForSeat``);
- every hand is finished: the seed is revealed and the deal scored (as for the closed game).

Pure functions of the state, the seed and the time; no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from sapsam import fairness
from sapsam.domain.commands import (
    AnnounceSurrender,
    CommitArrangement,
    ConfirmArrangement,
    DeclareNatural,
    RevealArrangement,
    RevealSeed,
)
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import Event
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    DealStreet,
    PlaceCards,
    PlaceForSeat,
    RevealDiscards,
    RevealFantasyland,
    TimeOutDiscards,
)
from sapsam.domain.open_face.deal_state import OpenFacePhase
from sapsam.domain.open_face.table_state import (
    OpenFaceTable,
    OpenFaceTablePhase,
    dealt_streets,
)
from sapsam.domain.table import TablePhase, TableState, decide_folded
from sapsam.domain.table_deadlines import UnservedWindow
from sapsam.fairness.open_face_deal import street_digest
from sapsam.rules.cards import Card

__all__ = [
    "dealt_so_far",
    "forced_move",
    "require_family_move",
    "seat_streets",
    "settling_step",
    "timed_out_move",
]

_CLOSED_MOVES: Final = (
    CommitArrangement,
    ConfirmArrangement,
    RevealArrangement,
    DeclareNatural,
    AnnounceSurrender,
)
"""A player's moves of the closed game (its arrangement and what goes with it)."""
_OPEN_FACE_MOVES: Final = (PlaceCards, CommitFantasyland, RevealFantasyland, RevealDiscards)
"""A player's moves of open face."""


def require_family_move(state: Any, command: object) -> None:
    """Refuse (WRONG_GAME) a player's move of one family at a table of another, before the
    table's family is asked (it would only say it does not know the command)."""
    if isinstance(state, OpenFaceTable) and isinstance(command, _CLOSED_MOVES):
        raise DomainError(
            Reason.WRONG_GAME,
            f"this table plays open face: {type(command).__name__} is a move of the closed "
            "game; cards are placed with PlaceCards (a Fantasyland hand: CommitFantasyland, "
            "RevealFantasyland; Pineapple's discards: RevealDiscards)",
        )
    if isinstance(state, TableState) and isinstance(command, _OPEN_FACE_MOVES):
        raise DomainError(
            Reason.WRONG_GAME,
            f"this table plays the closed game: {type(command).__name__} is a move of open "
            "face; hands are set with CommitArrangement and RevealArrangement",
        )


def dealt_so_far(state: OpenFaceTable, seed: bytes) -> tuple[tuple[Card, ...], ...]:
    """Per seat, every card dealt to it so far in the current deal (the streets dealt)."""
    play = state.play
    assert play is not None
    streets = dealt_streets(state, seed)[: play.streets_dealt]
    return tuple(tuple(card for street in streets for card in street[seat]) for seat in play.seats)


def seat_streets(state: OpenFaceTable, seed: bytes, seat: int) -> tuple[tuple[Card, ...], ...]:
    """Each street's cards ``seat`` was dealt so far in the current deal, in street order."""
    play = state.play
    assert play is not None
    return tuple(street[seat] for street in dealt_streets(state, seed)[: play.streets_dealt])


def own_discards(state: OpenFaceTable, seed: bytes, seat: int) -> tuple[Card, ...]:
    """The cards ``seat`` discarded so far (Pineapple): on each street after the first that it
    placed, its dealt cards in no row. For its own holder only (the others see none before
    ``DiscardsRevealed``)."""
    play = state.play
    assert play is not None
    due = play.rules.street_discards
    if not due:
        return ()
    board = set(play.boards[seat].cards)
    thrown: list[Card] = []
    for dealt in seat_streets(state, seed, seat)[1:]:
        left = [card for card in dealt if card not in board]
        if len(left) == due:  # placed (an unplaced street has all its cards left)
            thrown.extend(left)
    return tuple(thrown)


def forced_move(
    state: OpenFaceTable, seed: bytes | None, seat: int, now_ms: int
) -> PlaceForSeat | TimeOutDiscards:
    """The operator's forced timeout of ``seat`` at an open-face table: its cards of the street
    when it is the seat on turn (the domain decides what the timeout records, or refuses); at
    Pineapple, once every hand is complete, its discards opened from the seed now
    (``TimeOutDiscards`` with ``forced``) when it has not opened them."""
    play = state.play
    if (
        seed is not None
        and state.phase is OpenFaceTablePhase.PLAYING
        and play is not None
        and play.phase is OpenFacePhase.DISCARDS
        and 0 <= seat < play.seat_count
        and play.awaits_discards(seat)
    ):
        return TimeOutDiscards(seat, seat_streets(state, seed, seat), now_ms, forced=True)
    dealt: tuple[Card, ...] = ()
    if (
        seed is not None
        and state.phase is OpenFaceTablePhase.PLAYING
        and play is not None
        and play.phase is OpenFacePhase.PLACING
        and play.turn == seat
    ):
        dealt = dealt_streets(state, seed)[play.streets_dealt - 1][seat]
    return PlaceForSeat(dealt, now_ms, True, forced_seat=seat)


Settled = tuple[list[Event], Any]
"""A move the service made itself: its events and the table's state after them (folded once)."""


def settling_step(state: Any, seed: bytes, now_ms: int) -> Settled | None:
    """The next move the service makes itself on ``state`` with the deal's ``seed`` (see the
    module docstring), its events and the state after them, or None when it makes none: the
    runner calls this until it is None."""
    if isinstance(state, OpenFaceTable):
        return _open_face_step(state, seed, now_ms)
    if isinstance(state, TableState) and state.phase is TablePhase.AWAITING_SEED:
        # The closed game: every seat is settled, the seed reveal and the score follow.
        return decide_folded(state, RevealSeed(seed=seed))
    return None


def _open_face_step(state: OpenFaceTable, seed: bytes, now_ms: int) -> Settled | None:
    if state.phase is OpenFaceTablePhase.AWAITING_SEED:
        return decide_folded(state, RevealSeed(seed=seed))
    play = state.play
    if state.phase is not OpenFaceTablePhase.PLAYING or play is None:
        return None
    if play.phase is OpenFacePhase.DEALING:
        assert state.table_id is not None
        street = play.streets_dealt
        key = fairness.record_key(state.table_id, state.deal_number, seed)
        cards = dealt_streets(state, seed)[street]
        digests = tuple(
            street_digest(key, street, seat, dealt) if dealt else b""
            for seat, dealt in enumerate(cards)
        )
        return decide_folded(state, DealStreet(digests, now_ms))
    if play.phase is OpenFacePhase.PLACING and play.turn is not None:
        dealt = dealt_streets(state, seed)[play.streets_dealt - 1][play.turn]
        try:
            # The domain places the cards only when the seat has no choice; else it refuses.
            return decide_folded(state, PlaceForSeat(dealt, now_ms))
        except DomainError:
            return None
    return None


def timed_out_move(
    state: OpenFaceTable,
    seed: bytes,
    now_ms: int,
    unserved: tuple[UnservedWindow, ...] = (),
    grace_ms: int = 0,
) -> PlaceForSeat | TimeOutDiscards:
    """The move the deadline sweep asks for at an open-face table: the seat on turn's cards,
    placed by the rule set's timeout policy once its deadline has passed (the domain refuses it,
    NOTHING_TIMED_OUT, before then or when nobody is on turn), or the deadline extended when it
    fell in (or just after) one of the ``unserved`` windows. At Pineapple, once every hand is
    complete: the first seat that has not opened its discards has them opened from the seed
    (``TimeOutDiscards``; the domain refuses it before the deadline); each sweep opens one."""
    play = state.play
    if (
        state.phase is OpenFaceTablePhase.PLAYING
        and play is not None
        and play.phase is OpenFacePhase.DISCARDS
    ):
        waiting = [seat for seat in play.seats if play.awaits_discards(seat)]
        if waiting:
            seat = waiting[0]
            return TimeOutDiscards(
                seat, seat_streets(state, seed, seat), now_ms, unserved, grace_ms
            )
    dealt: tuple[Card, ...] = ()
    if (
        state.phase is OpenFaceTablePhase.PLAYING
        and play is not None
        and play.phase is OpenFacePhase.PLACING
        and play.turn is not None
    ):
        dealt = dealt_streets(state, seed)[play.streets_dealt - 1][play.turn]
    return PlaceForSeat(dealt, now_ms, True, unserved, grace_ms)

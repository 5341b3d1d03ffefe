"""An open-face table as its events describe it: the frame every table has (seats, the dealer
by lot, the deal's seed commitment, entropy and cut, the totals) around the running deal's play
(``OpenFaceDeal``), and what the last deal decided for the next (who plays Fantasyland, whether
the button moved). Frozen; ``table_evolve`` builds it, ``table_decide`` reads it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase
from sapsam.fairness.open_face_deal import Streets, deal_of_seed
from sapsam.rules.open_face.automatic import timeout_consequence
from sapsam.rules.open_face.fantasyland import button_moves, next_fantasyland, set_is_over
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.scoring import judge_hand

__all__ = [
    "INITIAL_OPEN_FACE_TABLE",
    "NextDeal",
    "OpenFaceTable",
    "OpenFaceTablePhase",
    "SetProgress",
    "dead_seats",
    "dealt_streets",
    "next_deal",
    "set_progress",
]

_CLASSIC: Final = OpenFaceRules()
"""The rule set of a table not yet created (source 001's classic game)."""


class OpenFaceTablePhase(StrEnum):
    """Where an open-face table stands; what it waits for next."""

    NOT_CREATED = "NOT_CREATED"
    SEATING = "SEATING"
    AWAITING_DEALER = "AWAITING_DEALER"
    BETWEEN_DEALS = "BETWEEN_DEALS"
    AWAITING_CUT = "AWAITING_CUT"
    PLAYING = "PLAYING"
    """Streets, placements, Fantasyland hands (``OpenFaceDeal.phase`` says which)."""
    AWAITING_SEED = "AWAITING_SEED"
    SERIES_COMPLETE = "SERIES_COMPLETE"


@dataclass(frozen=True)
class OpenFaceTable:
    """An open-face table. ``version`` counts the events folded in."""

    version: int = 0
    table_id: uuid.UUID | None = None
    rules: OpenFaceRules = _CLASSIC
    seat_count: int = 0
    seats: tuple[str | None, ...] = ()
    lot_commitment: bytes = b""
    first_dealer: int | None = None
    deal_number: int = 0
    """The current (or last) deal's number; 0 before the first."""
    dealer: int | None = None
    """The current (or last) deal's dealer."""
    seed_commitment: bytes = b""
    contributions: tuple[bytes | None, ...] = ()
    cut_position: int | None = None
    play: OpenFaceDeal | None = None
    """The current (or last) deal's play."""
    seed: bytes | None = None
    scored: bool = True
    """Whether the current deal is scored (True before the first deal: nothing runs)."""
    series_totals: tuple[int, ...] = ()
    next_fantasyland: tuple[int | None, ...] = ()
    """Per seat, the cards it gets at once next deal (a Fantasyland hand), else None."""
    fantasylands_in_a_row: tuple[int, ...] = ()
    """Per seat, the Fantasyland deals it played in a row, the last one included."""
    button_moves: int = 0
    """Deals after which the button passed (a deal leading to a Fantasyland does not count)."""
    button_stays: bool = False
    """Whether the next deal keeps the last deal's dealer (a Fantasyland follows)."""
    dead_for_set: tuple[bool, ...] = ()
    """Per seat, whether a timeout declared its hand dead until the set ends (001)."""
    timeout_ends_set: bool = False
    """Whether a seat timed out in this set under a policy that ends it (003): the set then
    ends after the first deal, this one on, after which the button passes (the Fantasylands
    earned are played first)."""
    ended_early: bool = False
    """Whether the set ended before its button moves were counted out (003's timeout)."""
    voided: bool = False
    """Whether the last deal was voided (``DealVoided``): not scored, dealt again by the same
    dealer."""
    deals_voided: int = 0
    """Deals voided so far (they do not count as played)."""

    @property
    def phase(self) -> OpenFaceTablePhase:
        """Derived from the facts, so it can never disagree with them."""
        if self.table_id is None:
            return OpenFaceTablePhase.NOT_CREATED
        if any(player is None for player in self.seats):
            return OpenFaceTablePhase.SEATING
        if self.first_dealer is None:
            return OpenFaceTablePhase.AWAITING_DEALER
        if self.scored:
            if self.deal_number and (
                self.ended_early or set_is_over(self.seat_count, self.button_moves)
            ):
                return OpenFaceTablePhase.SERIES_COMPLETE
            return OpenFaceTablePhase.BETWEEN_DEALS
        if self.cut_position is None:
            return OpenFaceTablePhase.AWAITING_CUT
        assert self.play is not None
        if self.play.phase is not OpenFacePhase.COMPLETE:
            return OpenFaceTablePhase.PLAYING
        return OpenFaceTablePhase.AWAITING_SEED

    def seat_of(self, player_id: str) -> int | None:
        """The seat a player holds here, if any."""
        for seat, holder in enumerate(self.seats):
            if holder == player_id:
                return seat
        return None

    @property
    def next_deal_number(self) -> int:
        """The number the next deal takes: one after the last deal's, scored or voided."""
        return self.deal_number + 1


INITIAL_OPEN_FACE_TABLE = OpenFaceTable()


@dataclass(frozen=True)
class NextDeal:
    """What a finished deal decides for the next (``sapsam.rules.open_face.fantasyland``)."""

    fantasyland: tuple[int | None, ...]
    """Per seat, the cards it gets at once next deal, else None."""
    in_a_row: tuple[int, ...]
    """Per seat, the Fantasyland deals it played in a row, this one included."""
    button_moves: bool


def next_deal(play: OpenFaceDeal, in_a_row_before: tuple[int, ...]) -> NextDeal:
    """The next deal's Fantasylands and the button, from this deal's finished hands (every board
    complete): decided when the deal is scored and folded the same way on replay."""
    in_a_row = tuple(
        before + 1 if play.is_fantasyland(seat) else 0
        for seat, before in enumerate(in_a_row_before)
    )
    hands = [
        judge_hand(play.rules, board, seat in dead_seats(play))
        for seat, board in enumerate(play.boards)
    ]
    upcoming = tuple(
        next_fantasyland(play.rules, hand, in_a_row[seat]) for seat, hand in enumerate(hands)
    )
    return NextDeal(upcoming, in_a_row, button_moves(upcoming))


@dataclass(frozen=True)
class SetProgress:
    """Where the set stands once a deal is scored (``set_progress``)."""

    button_moves: int
    timeout_ends_set: bool
    ended_early: bool
    over: bool


def set_progress(state: OpenFaceTable, play: OpenFaceDeal, after: NextDeal) -> SetProgress:
    """The set after the deal ``play`` of ``state`` is scored: the button's moves counted
    (``set_is_over``: as many as seats, 001), and 003's end after a timed-out hand: «Dacă, în
    timpul „Timeout" al unuia dintre jucători, alți participanți au colectat „Fantezie", jocul
    continuă până când toate „Fantezie" disponibile au fost jucate. Abia atunci petrecerea este
    considerată încheiată. În alte cazuri, jocul se termină imediat după mâna în care jucătorul a
    trecut la „Timeout"» ("if others earned a Fantasyland during one player's timeout, play goes
    on until every Fantasyland available is played; only then is the set over. Otherwise the set
    ends right after the hand in which the player timed out"): the set ends after the first
    deal, the timed-out one on, after which nobody plays a Fantasyland (the button passes)."""
    moves = state.button_moves + (1 if after.button_moves else 0)
    ends = state.timeout_ends_set or (
        any(play.timed_out) and timeout_consequence(play.rules).set_ends_after_hand
    )
    early = ends and after.button_moves and not set_is_over(state.seat_count, moves)
    return SetProgress(moves, ends, early, early or set_is_over(state.seat_count, moves))


def dead_seats(play: OpenFaceDeal) -> tuple[int, ...]:
    """The seats scored dead whatever their rows: a Fantasyland hand set out of order, or a hand
    a timeout declared dead (001)."""
    return tuple(seat for seat in play.seats if play.dead[seat] or play.declared_dead[seat])


def dealt_streets(state: OpenFaceTable, seed: bytes) -> Streets:
    """``streets[street][seat]`` of the table's current deal, dealt from its ``seed`` (which
    the domain never reads: the caller holds it, or it is published): the deck shuffled with
    the deal's entropy, cut where the cut was, dealt by the deal's schedule
    (``sapsam.fairness.open_face_deal.deal_of_seed``, computed once a deal)."""
    play = state.play
    assert state.table_id is not None and play is not None and state.cut_position is not None
    return deal_of_seed(
        state.table_id,
        state.deal_number,
        seed,
        state.contributions,
        state.cut_position,
        play.dealer,
        play.schedule,
    )

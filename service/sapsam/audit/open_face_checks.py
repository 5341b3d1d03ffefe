"""What the open-face deal checks (``sapsam.audit.open_face_deals``) name and say: the checks
in order, the check each event belongs to, what a passed check says, the failure that stops the
replay, and the commands a timeout re-decides as by who made it (``timed_out_by``: the sweep
only past a recorded deadline, the operator at any time; a record of before the name as it
was checked then). Pure."""

from __future__ import annotations

from typing import Any, Final

from sapsam.domain.events import (
    DeadlinesExtended,
    DealScored,
    DealStarted,
    DealVoided,
    DeckCut,
    EntropyContributed,
    Event,
    SeatReplaced,
    SeedRevealed,
    SeriesCompleted,
)
from sapsam.domain.open_face.commands import PlaceForSeat, TimeOutFantasyland
from sapsam.domain.open_face.deal_state import OpenFaceDeal
from sapsam.domain.open_face.events import (
    TIMED_OUT_BY,
    TIMED_OUT_BY_OPERATOR,
    CardsPlaced,
    DiscardCommitted,
    DiscardsRevealed,
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandRevealsOpened,
    FantasylandTimedOut,
    StreetDealt,
)

__all__ = [
    "CHECK_OF",
    "OPEN_FACE_CHECKS",
    "PASSED",
    "ReplayError",
    "event_name",
    "fantasyland_timeout_command",
    "timed_out_by",
]

OPEN_FACE_CHECKS: Final = ("seed", "streets", "placements", "fantasyland", "discards", "scores")
"""The checks of an open-face deal, in the order the deal's events reach them."""

CHECK_OF: Final[dict[type[Event], str]] = {
    DealStarted: "seed",
    EntropyContributed: "seed",
    DeckCut: "seed",
    StreetDealt: "streets",
    CardsPlaced: "placements",
    FantasylandCommitted: "fantasyland",
    FantasylandRevealed: "fantasyland",
    FantasylandTimedOut: "fantasyland",
    FantasylandRevealsOpened: "fantasyland",
    DiscardCommitted: "discards",
    DiscardsRevealed: "discards",
    DeadlinesExtended: "placements",
    SeedRevealed: "seed",
    DealVoided: "seed",
    DealScored: "scores",
    SeriesCompleted: "scores",
    SeatReplaced: "scores",
}


class ReplayError(Exception):
    """An event that does not re-decide: the check it fails and why."""

    def __init__(self, check: str, detail: str) -> None:
        super().__init__(detail)
        self.check = check
        self.detail = detail


PASSED: Final[dict[str, str]] = {
    "seed": "the deal's seed matches its commitment; the deck follows from it, the entropy "
    "and the cut",
    "streets": "every street's per-seat digest matches the cards the seed dealt",
    "placements": "every placement legal, in turn, of the cards dealt to that seat "
    "(automatic moves as the rule set's policy places them)",
    "fantasyland": "every Fantasyland hand opened matches its commitment and its dealt cards "
    "(or, timed out, what the rule set's policy sets of them)",
    "discards": "every discard opened matches its commitment and is a card dealt to that seat "
    "on that street and not placed",
    "scores": "royalties, dead hands and totals recomputed; the set ends after as many button "
    "moves as seats (or at the first after a timeout, under 003's policy)",
}


def timed_out_by(
    event: CardsPlaced | FantasylandTimedOut | DiscardsRevealed, check: str
) -> str | None:
    """Who the event says timed the seat out (None: recorded before timeouts named it)."""
    by = event.timed_out_by
    if by is not None and by not in TIMED_OUT_BY:
        raise ReplayError(
            check, f"{event_name(event)} is timed out by {by!r}, neither the sweep nor the operator"
        )
    return by


def fantasyland_timeout_command(play: OpenFaceDeal, event: FantasylandTimedOut) -> Any:
    """The command a Fantasyland hand's timeout re-decides as. The operator's
    (``ForceSeatTimeout``): the seat's, deadline or not. The sweep's: only past a deadline that
    ran (no clock is replayed: the recorded deadline itself), the reveal deadline for a
    committed hand (every hand placed and set, ``FantasylandRevealsOpened`` recorded), else the
    first street's; where none ran the rules refuse it. Recorded before timeouts named who made
    them: a committed hand, or one where no deadline ran, as the operator's (the sweep's, past
    the deadline, is the same event then), else the sweep's."""
    by = timed_out_by(event, "fantasyland")
    committed = play.commitments[event.seat] is not None
    if by == TIMED_OUT_BY_OPERATOR or (
        by is None and (committed or play.fantasyland_deadline_ms is None)
    ):
        return PlaceForSeat((), 0, True, forced_seat=event.seat)
    if committed:
        due = play.reveal_deadline_ms
        return PlaceForSeat((), 0 if due is None else due, True)
    due = play.fantasyland_deadline_ms
    return TimeOutFantasyland(event.seat, 0 if due is None else due)


def event_name(event: Event) -> str:
    seat = getattr(event, "seat", None)
    street = getattr(event, "street", None)
    where = "" if seat is None else f" of seat {seat}"
    where += "" if street is None else f" on street {street}"
    return f"{type(event).__name__}{where}"

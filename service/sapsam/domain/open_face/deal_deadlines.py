"""An open-face deal's deadlines across outages: extended, never enforced, for time no server
served -- the closed game's rule (``sapsam.domain.table_deadlines``), applied to each deadline
open face runs.

A seat can act only while a server serves. A passed deadline that was already running when an
unserved window began, and that fell in it or within the grace after it, is moved
(``DeadlinesExtended``, the closed game's event, with an open-face ``stage``) instead of timing
the seat out; the deadline sweep's ``PlaceForSeat`` with ``timed_out`` decides it first. The
stages:

* ``fantasyland``: the Fantasyland hands not yet set, due by the first street's deadline;
* ``placing``: the seat on turn's placement of the street;
* ``revealing``: the Fantasyland hands committed and not yet opened, due by the reveal deadline
  (``FantasylandRevealsOpened``);
* ``discarding``: at Pineapple, the seats that have not opened their discards, due by the
  deadline set with the last placement (``TimeOutDiscards`` decides it first).

Pure: the windows and the grace come in the command, as for the closed game's ``TimeOutSeats``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sapsam.domain.events import DeadlinesExtended
from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase
from sapsam.domain.table_deadlines import UnservedWindow, extended_deadline, window_to_extend

__all__ = [
    "DISCARDING_STAGE",
    "FANTASYLAND_STAGE",
    "OPEN_FACE_STAGES",
    "PLACING_STAGE",
    "REVEALING_STAGE",
    "deadline_extensions",
]

FANTASYLAND_STAGE: Final = "fantasyland"
"""A Fantasyland hand to set by the first street's deadline."""
PLACING_STAGE: Final = "placing"
"""The seat on turn's placement."""
REVEALING_STAGE: Final = "revealing"
"""A committed Fantasyland hand to open by the reveal deadline (the closed game's stage name)."""
DISCARDING_STAGE: Final = "discarding"
"""Pineapple: the discards still to open once every hand is complete."""
OPEN_FACE_STAGES: Final = (FANTASYLAND_STAGE, PLACING_STAGE, REVEALING_STAGE, DISCARDING_STAGE)


def _due(deal: OpenFaceDeal, stage: str) -> tuple[tuple[int, ...], int | None, int | None]:
    """The seats due in ``stage``, its deadline and when that was set."""
    if stage == FANTASYLAND_STAGE:
        seats = tuple(seat for seat in deal.seats if deal.fantasyland_unset(seat))
        return seats, deal.fantasyland_deadline_ms, deal.fantasyland_deadline_set_ms
    if stage == REVEALING_STAGE:
        if not deal.reveals_open or not deal.reveals_due:
            return (), None, None
        seats = tuple(seat for seat in deal.seats if deal.awaits_reveal(seat))
        return seats, deal.reveal_deadline_ms, deal.reveal_deadline_set_ms
    if stage == DISCARDING_STAGE:
        if deal.phase is not OpenFacePhase.DISCARDS:
            return (), None, None
        seats = tuple(seat for seat in deal.seats if deal.awaits_discards(seat))
        return seats, deal.deadline_ms, deal.deadline_set_ms
    turn = deal.turn if deal.phase is OpenFacePhase.PLACING else None
    return (() if turn is None else (turn,)), deal.deadline_ms, deal.deadline_set_ms


def deadline_extensions(
    deal: OpenFaceDeal, now_ms: int, unserved: Sequence[UnservedWindow], grace_ms: int
) -> list[DeadlinesExtended]:
    """The extensions a timeout at ``now_ms`` decides instead, one per stage whose passed
    deadline an unserved window makes unfair to enforce; [] when none does (the timeout
    stands)."""
    if not unserved:
        return []
    extensions: list[DeadlinesExtended] = []
    for stage in OPEN_FACE_STAGES:
        seats, deadline, set_ms = _due(deal, stage)
        if not seats or deadline is None or now_ms < deadline:
            continue
        window = window_to_extend(deadline, set_ms, now_ms, unserved, grace_ms)
        if window is None:
            continue
        extensions.append(
            DeadlinesExtended(
                deal_number=deal.number,
                stage=stage,
                seats=seats,
                previous_deadline_ms=deadline,
                deadline_ms=extended_deadline(deadline, set_ms, window, grace_ms),
                reason=window.reason,
                unserved_from_ms=window.start_ms,
                unserved_until_ms=window.end_ms,
            )
        )
    return extensions

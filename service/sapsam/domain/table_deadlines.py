"""Deadlines that are fair across outages: when a deadline is extended rather than enforced.

Pure. A table's deadline runs in wall-clock time, but a seat can act only while some server
serves. The serving record (``sapsam.store.serving``) tells the sweeper when no server was
serving: *unserved windows* ``[start_ms, end_ms)``, each ending when a server began serving
again. A deadline that was already running when a window began, and that expired inside it or
within ``grace_ms`` after it ended, is not enforced: it is moved to ``end_ms + grace_ms``, so
every seat gets at least the grace period of serving time after an outage. The extension is an
event (``DeadlinesExtended``) with its reason and the window, so an audit sees why.

A deadline set after a window ended (a deal dealt after the restart) is never extended, however
short; and an extended deadline, at ``end_ms + grace_ms``, lies outside its own window, so it is
enforced when it comes, unless another outage covers it in turn.

A tournament's pause (``TOURNAMENT_PAUSED``) stops the clock rather than breaking it: a deadline
that was running when the pause began (or was set during it) is moved by the part of the pause
it ran through, so every seat gets back the time it had left, however long the pause and
wherever the deadline falls after it, and at least the grace period after the resume. (Extending
only deadlines that fell in the pause, to the resume plus the grace, took from a seat with 80 s
left at a 30 s pause the 30 s: a break held against the players who took it.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from sapsam.domain.events import DeadlinesExtended
from sapsam.domain.table_state import TablePhase, TableState

if TYPE_CHECKING:
    from sapsam.domain.commands import TimeOutSeats

SERVER_RESTART: Final = "server_restart"
"""No server served until a server process (re)started."""
DATABASE_OUTAGE: Final = "database_outage"
"""The servers could not reach the database: none could serve or record its heartbeat."""
TOURNAMENT_PAUSED: Final = "tournament_paused"
"""The table's tournament was paused by the operator (docs/tournaments.md): no deadline runs out
while it is, and one that fell in the pause is extended like one in an outage."""
EXTENSION_REASONS: Final = frozenset({SERVER_RESTART, DATABASE_OUTAGE, TOURNAMENT_PAUSED})


@dataclass(frozen=True)
class UnservedWindow:
    """A time no server served: from ``start_ms`` (the last heartbeat before it; 0 when none
    was ever recorded) to ``end_ms`` (when serving began again), and why."""

    start_ms: int
    end_ms: int
    reason: str = SERVER_RESTART


def window_to_extend(
    deadline_ms: int,
    set_ms: int | None,
    now_ms: int,
    unserved: Sequence[UnservedWindow],
    grace_ms: int,
) -> UnservedWindow | None:
    """The unserved window that makes a passed deadline unfair to enforce at ``now_ms``, if any.

    ``set_ms`` is when the deadline was set (``None``: unknown, taken as before any window). A
    window counts when the deadline was set before it ended and expired at or after its start,
    but before where the window moves it (``extended_deadline``: ``end_ms + grace_ms`` after an
    outage), and that moment has not passed yet (a sweep that comes later than that found the
    seats with their time served: it enforces).
    """
    for window in unserved:
        resumed = extended_deadline(deadline_ms, set_ms, window, grace_ms)
        if (
            (set_ms is None or set_ms < window.end_ms)
            and window.start_ms <= deadline_ms < resumed
            and now_ms < resumed
        ):
            return window
    return None


def extended_deadline(
    deadline_ms: int, set_ms: int | None, window: UnservedWindow, grace_ms: int
) -> int:
    """Where ``window`` moves a deadline it counts for: the end of an outage plus the grace; for
    a tournament's pause, the deadline moved by the part of the pause it ran through (the time
    the seat had left, given back after the resume), and never sooner than the grace after it."""
    after_grace = window.end_ms + grace_ms
    if window.reason != TOURNAMENT_PAUSED:
        return after_grace
    ran_from = window.start_ms if set_ms is None else max(window.start_ms, set_ms)
    return max(after_grace, deadline_ms + max(0, window.end_ms - ran_from))


def deadline_extension(state: TableState, command: TimeOutSeats) -> DeadlinesExtended | None:
    """The extension a ``TimeOutSeats`` decides instead of timeouts, when the table's passed
    deadline fell in or just after a time no server served; ``None`` otherwise."""
    deal = state.deal
    if deal is None or not command.unserved:
        return None
    if state.phase is TablePhase.ARRANGING:
        stage, deadline = "arranging", deal.arrange_deadline_ms
        due = [seat for seat, confirmed in enumerate(deal.confirmed) if not confirmed]
    elif state.phase is TablePhase.REVEALING:
        stage, deadline = "revealing", deal.reveal_deadline_ms
        due = [seat for seat, reveal in enumerate(deal.reveals) if reveal is None]
    elif state.phase is TablePhase.ANNOUNCING and deal.announcements is not None:
        # One seat is due: the one whose turn it is (docs/rules.md §2.8).
        turn = deal.announcements.turn
        stage, deadline = "announcing", deal.announcements.deadline_ms
        due = [] if turn is None else [turn]
    else:
        return None
    due = [seat for seat in due if deal.timeouts[seat] is None]
    if deadline is None or command.now_ms < deadline or not due:
        return None
    window = window_to_extend(
        deadline, deal.deadline_set_ms, command.now_ms, command.unserved, command.grace_ms
    )
    if window is None:
        return None
    return DeadlinesExtended(
        deal_number=deal.number,
        stage=stage,
        seats=tuple(due),
        previous_deadline_ms=deadline,
        deadline_ms=extended_deadline(deadline, deal.deadline_set_ms, window, command.grace_ms),
        reason=window.reason,
        unserved_from_ms=window.start_ms,
        unserved_until_ms=window.end_ms,
    )

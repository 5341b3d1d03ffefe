"""A paused tournament's hold on its tables: no deal starts there, no deadline runs out there.

While the operator has a tournament paused (``sapsam.app.tournament_control``) the players may
finish the deal in play, but the next one waits for the resume: ``StartDeal`` at one of its
tables is refused (FAILED_PRECONDITION, ``TOURNAMENT_PAUSED``) and writes nothing.

The check reads the phase of the table's tournament in the command's session. A table either
belongs to a tournament from before it exists (the round's seating records its row before the
table is created) or never does, so a table found to belong to none is remembered and never
asked about again: an ordinary table pays one statement in its life, not one per deal.

The deadline sweep asks the tournament service for a :class:`TableHold` of each table past its
deadline (``TournamentControl.table_hold``): a paused tournament's table is skipped, and the
pauses that ended count as windows in which no deadline is enforced (``table_deadlines``).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from sapsam.app.store_interface import StoreSession
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.table_deadlines import UnservedWindow

REMEMBERED_TABLES: Final = 16_384
"""Tables of no tournament remembered (the oldest forgotten first; asking again costs little)."""


@dataclass(frozen=True)
class TableHold:
    """What a tournament asks of the deadline sweep at one of its tables: ``paused`` (enforce
    nothing now), and the ended pauses a deadline falling in is extended past."""

    paused: bool
    pauses: tuple[UnservedWindow, ...] = ()


NO_HOLD: Final = TableHold(paused=False)
"""A table of no tournament, or of one never paused."""


class PausedTournamentGate:
    """Refuses a deal's start at a table of a paused tournament."""

    def __init__(self) -> None:
        self._of_no_tournament: OrderedDict[uuid.UUID, None] = OrderedDict()

    async def refuse_if_paused(self, session: StoreSession, table_id: uuid.UUID) -> None:
        """Raise ``TOURNAMENT_PAUSED`` when the table's tournament is paused."""
        if table_id in self._of_no_tournament:
            return
        phase = await session.tournament_phase_of_table(str(table_id))
        if phase is None:
            self._of_no_tournament[table_id] = None
            if len(self._of_no_tournament) > REMEMBERED_TABLES:
                self._of_no_tournament.popitem(last=False)
        elif phase == "PAUSED":
            raise DomainError(
                Reason.TOURNAMENT_PAUSED,
                "the tournament is paused: the next deal starts when the operator resumes it",
            )

"""A paused tournament's hold on its tables: no deal starts there, no deadline runs out there.

While the operator has a tournament paused (``sapsam.app.tournament_control``) the players may
finish the deal in play, but the next one waits for the resume: ``StartDeal`` at one of its
tables is refused (FAILED_PRECONDITION, ``TOURNAMENT_PAUSED``) and writes nothing.

The check reads the phase of the table's tournament in the command's session. A table either
belongs to a tournament from before it exists (the round's seating records its row before the
table is created) or never does, so each table's tournament (or none) is remembered and never
asked about again: an ordinary table pays one statement in its life, not one per deal.

A deal's start and a pause never cross: the check and the append are two statements, and a
pause committed between them would have been followed by the deal it should have held. So a
deal's start at a tournament's table holds the tournament's pause lock, shared, from before
its check until its append committed (:meth:`PausedTournamentGate.starting_deal`), and a pause
holds it exclusively over its own append (``TournamentControl.pause``): either the deal started
wholly before the pause was recorded, or the check runs after it and refuses. Deal starts at
the same tournament's tables do not wait for one another; an ordinary table takes no lock. The
lock is taken before the table's own lock (``TableRunner._execute``), never inside it: a
command of the table never waits on the database's lock while holding the table.

The deadline sweep asks the tournament service for a :class:`TableHold` of each table past its
deadline (``TournamentControl.table_hold``): a paused tournament's table is skipped, and the
pauses that ended count as windows in which no deadline is enforced (``table_deadlines``).
"""

from __future__ import annotations

import contextlib
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final

from sapsam.app.store_interface import Store, StoreSession
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
    """Refuses a deal's start at a table of a paused tournament, and keeps a pause from being
    recorded between a deal's check and its start."""

    def __init__(self) -> None:
        # Each table asked about, by its id's integer (a UUID's hash is Python code, and every
        # write asks): its tournament, or None for none (it never changes).
        self._tournament_of: OrderedDict[int, uuid.UUID | None] = OrderedDict()

    def _remember(self, table_id: uuid.UUID, tournament_id: uuid.UUID | None) -> None:
        self._tournament_of[table_id.int] = tournament_id
        if len(self._tournament_of) > REMEMBERED_TABLES:
            self._tournament_of.popitem(last=False)

    def of_no_tournament(self, table_id: uuid.UUID) -> bool:
        """True when the table is remembered as belonging to no tournament (which never
        changes); False when it belongs to one or was not asked about here."""
        return self._tournament_of.get(table_id.int, ...) is None

    async def _tournament(self, session: StoreSession, table_id: uuid.UUID) -> uuid.UUID | None:
        key = table_id.int
        if key in self._tournament_of:
            self._tournament_of.move_to_end(key)
            return self._tournament_of[key]
        # The phase first: it answers None for a store keeping no tournament read models.
        if await session.tournament_phase_of_table(str(table_id)) is None:
            tournament_id = None
        else:
            tournament_id = await session.tournament_of_table(str(table_id))
        self._remember(table_id, tournament_id)
        return tournament_id

    @contextlib.asynccontextmanager
    async def starting_deal(self, store: Store, table_id: uuid.UUID) -> AsyncIterator[None]:
        """Around a deal's start (its check and its append): at a tournament's table, hold the
        tournament's pause lock, shared, so that no pause is recorded in between."""
        key = table_id.int
        if key in self._tournament_of:
            tournament_id = self._tournament_of[key]
        else:
            async with store.session() as session:
                tournament_id = await self._tournament(session, table_id)
        if tournament_id is None:
            yield  # an ordinary table: no lock, no connection held
            return
        # Another pooled connection, held over the start: only at a tournament's table, once
        # per deal.
        async with (
            store.session() as session,
            session.tournament_pause_lock(tournament_id, shared=True),
        ):
            yield

    async def refuse_if_paused(self, session: StoreSession, table_id: uuid.UUID) -> None:
        """Raise ``TOURNAMENT_PAUSED`` when the table's tournament is paused."""
        if self._tournament_of.get(table_id.int, ...) is None:
            return  # of no tournament (remembered as such)
        phase = await session.tournament_phase_of_table(str(table_id))
        if phase is None:
            self._remember(table_id, None)
        elif phase == "PAUSED":
            raise DomainError(
                Reason.TOURNAMENT_PAUSED,
                "the tournament is paused: the next deal starts when the operator resumes it",
            )

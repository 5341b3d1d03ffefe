"""The operator's control of a running tournament: one handler per command.

* ``pause`` / ``resume`` (``TournamentPaused`` / ``TournamentResumed``): while paused no round
  is seated (the results process seats none; ``resume`` seats the round that completed
  meanwhile, in its own append), no deal starts at the tournament's tables
  (``sapsam.app.tournament_pause``; the pause's append holds the tournament's pause lock, so no
  deal start checked before it is appended after it) and no deadline runs out there:
  :meth:`table_hold` tells the deadline sweep to leave a paused tournament's tables alone, and to
  extend the deadlines that fell in an ended pause (or within the grace after it) as it extends
  those of a server outage.
* ``cancel`` (``TournamentCancelled``): the standings as they stand; nothing credited after it.
* ``forfeit`` (``PlayerForfeited``): the player sits in no later round.
* ``replace_seat``: a forfeited player's seat passes to a new player, first at the table
  (``SeatReplaced``, between deals: the table decides when) and then in the tournament
  (``SeatReassigned``, from the table's next deal). Both steps are idempotent under the request
  id, so a retry after a crash between them finishes the job.

The rules themselves (who may be re-seated, when a pause may begin …) are the aggregate's
(``sapsam.domain.tournament_control``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from typing import Any

from sapsam.app.store_interface import SecretChanges, StoreSession
from sapsam.app.tournament_pause import NO_HOLD, REMEMBERED_TABLES, TableHold
from sapsam.app.tournaments import Plan, TournamentOutcome, TournamentService
from sapsam.domain.events import DealStarted
from sapsam.domain.table_deadlines import TOURNAMENT_PAUSED, UnservedWindow
from sapsam.domain.tournament import (
    CancelTournament,
    ForfeitPlayer,
    PauseTournament,
    ReseatPlayer,
    ResumeTournament,
    TournamentPhase,
    TournamentState,
    decide,
)

OPERATOR = "operator"


class TournamentControl(TournamentService):
    """The tournament service with the operator's controls (the object servers and tools hold)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Re-seats wait here, not each on a pooled connection for the database's lock.
        self._reseating = asyncio.Lock()
        # Which tournament each table the deadline sweep asked about belongs to (None: none).
        self._tournament_of_table: OrderedDict[uuid.UUID, uuid.UUID | None] = OrderedDict()

    async def pause(
        self,
        tournament_id: uuid.UUID,
        reason: str,
        request_id: str,
        *,
        request_digest: bytes | None = None,
    ) -> TournamentOutcome:
        """Pause a started tournament."""
        # Exclusively over the append: a deal's start at one of the tournament's tables holds
        # the lock shared over its check and its append (sapsam.app.tournament_pause), so a deal
        # starts wholly before the pause is recorded or is refused after it, never in between.
        async with (
            self.store.session() as lock_session,
            lock_session.tournament_pause_lock(tournament_id, shared=False),
        ):
            command = PauseTournament(reason=reason, now_ms=self.clock())
            return await self._execute(
                tournament_id, OPERATOR, request_id, _fixed(command), request_digest=request_digest
            )

    async def resume(
        self,
        tournament_id: uuid.UUID,
        request_id: str,
        *,
        request_digest: bytes | None = None,
    ) -> TournamentOutcome:
        """End the pause; seat the next round when one completed during it, and open its tables."""
        now = self.clock()

        async def plan(
            state: TournamentState, session: StoreSession
        ) -> tuple[object, SecretChanges]:
            if (
                state.phase is TournamentPhase.PAUSED
                and state.round_complete
                and state.current_round < state.rounds
            ):
                seat, secrets = await self.next_round_command(session, state)
                return ResumeTournament(now_ms=now, next_round=seat), secrets
            return ResumeTournament(now_ms=now), SecretChanges()

        outcome = await self._execute(
            tournament_id, OPERATOR, request_id, plan, request_digest=request_digest
        )
        await self.ensure_round_tables(tournament_id)
        return outcome

    async def cancel(
        self,
        tournament_id: uuid.UUID,
        reason: str,
        request_id: str,
        *,
        request_digest: bytes | None = None,
    ) -> TournamentOutcome:
        """End the tournament before its last round, with the standings as they stand."""
        command = CancelTournament(reason=reason, now_ms=self.clock())
        return await self._execute(
            tournament_id, OPERATOR, request_id, _fixed(command), request_digest=request_digest
        )

    async def forfeit(
        self,
        tournament_id: uuid.UUID,
        player_id: str,
        reason: str,
        request_id: str,
        *,
        actor: str = OPERATOR,
        request_digest: bytes | None = None,
    ) -> TournamentOutcome:
        """Take ``player_id`` out of the rounds to come (``actor``: the player or the operator)."""
        command = ForfeitPlayer(player_id=player_id, reason=reason, now_ms=self.clock())
        return await self._execute(
            tournament_id, actor, request_id, _fixed(command), request_digest=request_digest
        )

    async def replace_seat(
        self,
        tournament_id: uuid.UUID,
        table_id: uuid.UUID,
        seat: int,
        player_id: str,
        request_id: str,
        *,
        request_digest: bytes | None = None,
    ) -> TournamentOutcome:
        """Give a forfeited player's seat at a current-round table to ``player_id``."""
        # One re-seat of a tournament at a time, here and in every other server process: its
        # two steps (the table's, then the tournament's) are two appends, and a second re-seat
        # checked between them (the same newcomer at another table, or another newcomer for
        # this seat) passed the tournament's check, changed its table, and was refused only at
        # its tournament step: the table and the tournament then disagreed on who held a seat.
        async with (
            self._reseating,
            self.store.session() as lock_session,
            lock_session.tournament_control_lock(tournament_id),
        ):
            return await self._replace_seat_locked(
                tournament_id, table_id, seat, player_id, request_id, request_digest
            )

    async def _replace_seat_locked(
        self,
        tournament_id: uuid.UUID,
        table_id: uuid.UUID,
        seat: int,
        player_id: str,
        request_id: str,
        request_digest: bytes | None,
    ) -> TournamentOutcome:
        async with self.store.session() as session:
            earlier = await session.find_processed_request(f"{OPERATOR}/{request_id}")
        if earlier is not None:
            # A retry: its first answer, or REQUEST_ID_REUSED for another payload, before the
            # table is touched (the plan is not run for a request id already processed).
            return await self._execute(
                tournament_id, OPERATOR, request_id, _never, request_digest=request_digest
            )
        state = await self.load(tournament_id)
        table = await self.tables.load(table_id)
        next_deal = table.next_deal_number
        # The tournament's refusals first, before the table records anything.
        decide(state, ReseatPlayer(table_id, seat, player_id, next_deal))
        replaced = await self.tables.replace_seat(
            table_id,
            seat,
            player_id,
            f"tournament/{tournament_id}/reseat/{request_id}",
            tournament_id=tournament_id,
            request_digest=request_digest,
        )
        from_deal = await self._deal_after(table_id, replaced.events[-1].version)

        async def plan(
            current: TournamentState, session: StoreSession
        ) -> tuple[object, SecretChanges]:
            return ReseatPlayer(table_id, seat, player_id, from_deal), SecretChanges()

        return await self._execute(
            tournament_id, OPERATOR, request_id, plan, request_digest=request_digest
        )

    async def _deal_after(self, table_id: uuid.UUID, replaced_version: int) -> int:
        """The first deal a ``SeatReplaced`` at ``replaced_version`` applies to: the one after
        the last deal started before it (read from the log, so a retry finds the same)."""
        last = 0
        for recorded in await self.tables.events(table_id, 1, replaced_version):
            event = self.tables.decode(recorded)
            if isinstance(event, DealStarted):
                last = event.deal_number
        return last + 1

    # -- what the table side asks ----------------------------------------------------------------

    async def table_hold(self, table_id: uuid.UUID) -> TableHold:
        """Whether a table's tournament is paused now, and its ended pauses (the deadline sweep
        asks this of each table past its deadline; a table of no tournament is never held)."""
        async with self.store.session() as session:
            if table_id in self._tournament_of_table:
                tournament_id = self._tournament_of_table[table_id]
                self._tournament_of_table.move_to_end(table_id)
            else:
                # A table's tournament never changes (its row precedes the table): asked once.
                tournament_id = await session.tournament_of_table(str(table_id))
                self._tournament_of_table[table_id] = tournament_id
                if len(self._tournament_of_table) > REMEMBERED_TABLES:
                    self._tournament_of_table.popitem(last=False)
            if tournament_id is None:
                return NO_HOLD
            state = await self.load(tournament_id, session)
        pauses = tuple(UnservedWindow(start, end, TOURNAMENT_PAUSED) for start, end in state.pauses)
        return TableHold(paused=state.phase is TournamentPhase.PAUSED, pauses=pauses)


async def _never(state: TournamentState, session: StoreSession) -> tuple[object, SecretChanges]:
    raise AssertionError("a processed request id is answered before any plan runs")


def _fixed(command: object) -> Plan:
    async def plan(state: TournamentState, session: StoreSession) -> tuple[object, SecretChanges]:
        return command, SecretChanges()

    return plan

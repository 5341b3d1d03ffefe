"""The operator's commands on a table: what the deadline would have done, done now.

Only the operator may make them (the API checks the credential before the request is read); each
is a plan for the runner (``sapsam.app.table_runner``), recorded under the actor ``operator``.

* ``force_time_out``: time one seat out now, with the very events the deadline sweeper records
  (``TimeOutSeats`` with ``forced_seat``, decided by ``sapsam.domain.table_play``; at an
  open-face table ``PlaceForSeat`` with ``forced_seat``, decided by
  ``sapsam.domain.open_face.deal_decide``); when it was the last seat the deal waited for, the
  seed is revealed and the deal scored in the same append, as after the sweeper.
* ``void_deal``: end the deal in progress unscored (``DealVoided``), publishing its secret seed
  in that event (``sapsam.domain.table_void``); the secret is forgotten in the same append.
* ``replace_seat``: give a seat to another player between deals (``SeatReplaced``,
  ``sapsam.domain.table_replace``); not at a tournament's table, whose seats the tournament
  assigns.
"""

from __future__ import annotations

import uuid

from sapsam.app.open_face_play import forced_move
from sapsam.app.store_interface import StoreSession
from sapsam.app.table_plans import Plan, SecretMissingError, TableOutcome
from sapsam.app.table_runner import TableRunner
from sapsam.domain.commands import ReplaceSeat, TimeOutSeats, VoidDeal
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.open_face.commands import PlaceForSeat
from sapsam.domain.open_face.table_state import OpenFaceTable, OpenFaceTablePhase
from sapsam.domain.table import TableState
from sapsam.domain.table_void import VOIDABLE_PHASES

OPERATOR: str = "operator"
"""The actor the operator's commands are recorded under (``api.common_messages.OPERATOR_ACTOR``)."""


class OperatorCommands(TableRunner):
    """The operator's table commands."""

    async def force_time_out(
        self,
        table_id: uuid.UUID,
        seat: int,
        request_id: str,
        *,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Time ``seat`` out now, whether or not its deadline passed (refused when the seat is
        not awaited: NOTHING_TIMED_OUT; outside arranging and revealing: WRONG_PHASE)."""
        now = self.clock()

        async def plan(state: TableState, session: StoreSession) -> Plan:
            if isinstance(state, OpenFaceTable):
                # The seat on turn placed for, or its Fantasyland hand timed out, now
                # (sapsam.domain.open_face.deal_decide); the service's moves that follow join.
                if state.phase is not OpenFaceTablePhase.PLAYING:
                    return Plan([PlaceForSeat((), now, True, forced_seat=seat)])
                seed = await self.secrets.seed_if_any(session, table_id, state.play)
                return Plan([forced_move(state, seed, seat, now)], seed_to_reveal=seed)
            seed = await self.secrets.seed_if_any(session, table_id, state.deal)
            command = TimeOutSeats(now_ms=now, forced_seat=seat)
            return Plan([command], seed_to_reveal=seed)

        return await self._execute(
            table_id, OPERATOR, request_id, plan, request_digest=request_digest
        )

    async def void_deal(
        self,
        table_id: uuid.UUID,
        reason: str,
        request_id: str,
        *,
        deal_number: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Void the deal in progress (``deal_number``, when given, must be it: WRONG_DEAL) with
        ``reason`` (refused outside a deal: WRONG_PHASE)."""

        async def plan(state: TableState, session: StoreSession) -> Plan:
            if isinstance(state, OpenFaceTable):
                return await self._void_open_face(state, table_id, reason, deal_number, session)
            deal = state.deal
            if (
                deal is None
                or state.phase not in VOIDABLE_PHASES
                or deal_number not in (None, deal.number)
            ):
                # decide gives the precise refusal; no secret is read for it.
                return Plan([VoidDeal(reason=reason, seed=b"", deal_number=deal_number)])
            try:
                seed = await self.secrets.seed(session, table_id, deal.number)
            except SecretMissingError:
                raise DomainError(
                    Reason.WRONG_PHASE, "this deal's seed is already published"
                ) from None
            return Plan([VoidDeal(reason=reason, seed=seed, deal_number=deal_number)])

        return await self._execute(
            table_id, OPERATOR, request_id, plan, request_digest=request_digest
        )

    async def _void_open_face(
        self,
        state: OpenFaceTable,
        table_id: uuid.UUID,
        reason: str,
        deal_number: int | None,
        session: StoreSession,
    ) -> Plan:
        """VoidDeal at an open-face table: the running deal's seed, read only when the deal can
        be voided (the domain gives the precise refusal otherwise)."""
        voidable = state.phase in (
            OpenFaceTablePhase.AWAITING_CUT,
            OpenFaceTablePhase.PLAYING,
            OpenFaceTablePhase.AWAITING_SEED,
        )
        if not voidable or deal_number not in (None, state.deal_number):
            return Plan([VoidDeal(reason=reason, seed=b"", deal_number=deal_number)])
        try:
            seed = await self.secrets.seed(session, table_id, state.deal_number)
        except SecretMissingError:
            raise DomainError(Reason.WRONG_PHASE, "this deal's seed is already published") from None
        return Plan([VoidDeal(reason=reason, seed=seed, deal_number=deal_number)])

    async def replace_seat(
        self,
        table_id: uuid.UUID,
        seat: int,
        player_id: str,
        request_id: str,
        *,
        tournament_id: uuid.UUID | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Give ``seat`` to ``player_id`` between deals (refused mid-deal: WRONG_PHASE; for a
        player already seated here: ALREADY_SEATED; at a tournament's table: WRONG_PHASE, unless
        ``tournament_id`` names that tournament, whose re-seat this is)."""

        async def plan(state: TableState, session: StoreSession) -> Plan:
            if await session.tournament_of_table(str(table_id)) != tournament_id:
                raise DomainError(
                    Reason.WRONG_PHASE,
                    "a tournament's table: its seats are the tournament's to assign"
                    " (ReplaceTournamentSeat)",
                )
            return Plan([ReplaceSeat(seat=seat, player_id=player_id)])

        return await self._execute(
            table_id, OPERATOR, request_id, plan, request_digest=request_digest
        )

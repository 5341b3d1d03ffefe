"""The operator's commands on a table: what the deadline would have done, done now.

Only the operator may make them (the API checks the credential before the request is read); each
is a plan for the runner (``sapsam.app.table_runner``), recorded under the actor ``operator``.

* ``force_time_out``: time one seat out now, with the very events the deadline sweeper records
  (``TimeOutSeats`` with ``forced_seat``, decided by ``sapsam.domain.table_play``); when it was the
  last seat the deal waited for, the seed is revealed and the deal scored in the same append, as
  after the sweeper.
"""

from __future__ import annotations

import uuid

from sapsam.app.store_interface import StoreSession
from sapsam.app.table_plans import Plan, SecretMissingError, TableOutcome
from sapsam.app.table_runner import TableRunner
from sapsam.domain.commands import TimeOutSeats
from sapsam.domain.table import TableState

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
            deal = state.deal
            seed = None
            if deal is not None:
                try:
                    seed = await self.secrets.seed(session, table_id, deal.number)
                except SecretMissingError:
                    seed = None  # the deal is past its seed: decide refuses precisely
            command = TimeOutSeats(now_ms=now, forced_seat=seat)
            return Plan([command], seed_to_reveal=seed)

        return await self._execute(
            table_id, OPERATOR, request_id, plan, request_digest=request_digest
        )

"""The commands that set a table up: open it, seat its players, draw its first dealer.

Each is one plan for the runner (``sapsam.app.table_runner``): what only the service may know
(the dealer lot's secret seed, kept in ``deal_secrets`` until it is drawn) joins the append.
"""

from __future__ import annotations

import uuid

from sapsam import fairness
from sapsam.app.secret_seeds import LOT_SECRET_NUMBER
from sapsam.app.store_interface import StoreSession
from sapsam.app.table_plans import (
    Plan,
    TableOutcome,
    fixed_plan,
    require_holder_or_operator,
)
from sapsam.app.table_runner import TableRunner
from sapsam.domain.commands import ChooseDealer, CreateTable, SeatPlayer
from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.open_face.commands import CreateOpenFaceTable
from sapsam.domain.open_face.table_state import OpenFaceTable, OpenFaceTablePhase
from sapsam.domain.table import TablePhase, TableState
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.ruleset import RuleSet

# Namespace for table ids derived from the creator and request id, so a retried CreateTable
# lands on the same stream and is recognised as the same request.
TABLE_ID_NAMESPACE = uuid.UUID("6f1c7a52-3c1e-4b8e-9d0a-5a7c2b9e41d3")


class TableSeating(TableRunner):
    """The table service's set-up commands (``sapsam.app.tables.TableService`` has them)."""

    async def create_table(
        self,
        rule_set: RuleSet | OpenFaceRules,
        seat_count: int,
        created_by: str,
        request_id: str,
        after_series: str = "close",
        *,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Open a table; its id is derived from the creator and request id (retries agree).

        ``after_series``: ``close`` ends the table with its series; ``new_series`` starts another.
        An open-face rule set creates an open-face table (``CreateOpenFaceTable``), which closes
        with its set: another ``after_series`` is refused (INVALID_ARGUMENT).
        """
        if isinstance(rule_set, OpenFaceRules) and after_series != "close":
            raise DomainError(
                Reason.INVALID_ARGUMENT,
                "an open-face table closes with its set: after_series must be close",
                field="after_series",
            )
        table_id = uuid.uuid5(TABLE_ID_NAMESPACE, f"{created_by}/{request_id}")
        lot_seed = fairness.new_seed()

        async def plan(state: TableState, session: StoreSession) -> Plan:
            lot_commitment = fairness.lot_commitment(table_id, lot_seed)
            if isinstance(rule_set, OpenFaceRules):
                open_face = CreateOpenFaceTable(
                    table_id, rule_set, seat_count, lot_commitment, created_by
                )
                return Plan([open_face], keep_secret=(LOT_SECRET_NUMBER, lot_seed))
            command = CreateTable(
                table_id=table_id,
                rule_set=rule_set,
                seat_count=seat_count,
                lot_commitment=lot_commitment,
                created_by=created_by,
                after_series=after_series,
            )

            return Plan([command], keep_secret=(LOT_SECRET_NUMBER, lot_seed))

        outcome = await self._execute(
            table_id, created_by, request_id, plan, new_table=True, request_digest=request_digest
        )
        if not outcome.replayed:
            self.secrets.remember(table_id, LOT_SECRET_NUMBER, lot_seed)
        return outcome

    async def join(
        self,
        table_id: uuid.UUID,
        player_id: str,
        seat: int | None,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Seat a player (at ``seat``, or the lowest free seat)."""
        command = SeatPlayer(player_id=player_id, seat=seat)
        return await self._execute(
            table_id,
            player_id,
            request_id,
            fixed_plan(command),
            expected_version=expected_version,
            request_digest=request_digest,
        )

    async def choose_dealer(
        self,
        table_id: uuid.UUID,
        actor: str,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Draw the first dealer by lot, with the seed committed when the table was created."""

        async def plan(state: TableState, session: StoreSession) -> Plan:
            require_holder_or_operator(state, actor)
            awaiting = (
                state.phase is OpenFaceTablePhase.AWAITING_DEALER
                if isinstance(state, OpenFaceTable)
                else state.phase is TablePhase.AWAITING_DEALER
            )
            if not awaiting:
                # decide names the phase precisely; no secret is read for a refused command.
                return Plan([ChooseDealer(lot_seed=b"")])
            return Plan(
                [
                    ChooseDealer(
                        lot_seed=await self.secrets.seed(session, table_id, LOT_SECRET_NUMBER)
                    )
                ]
            )

        return await self._execute(
            table_id,
            actor,
            request_id,
            plan,
            expected_version=expected_version,
            request_digest=request_digest,
        )

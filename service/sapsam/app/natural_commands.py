"""The natural declaration command (docs/rules.md §2.9.1): a seat commits to ``none`` or a
natural before its arrangement. Its opening travels with the reveal
(``sapsam.app.deal_commands.DealCommands.reveal``)."""

from __future__ import annotations

import uuid

from sapsam.app.table_plans import SeatDealt, TableOutcome
from sapsam.app.table_runner import TableRunner
from sapsam.domain.commands import DeclareNatural, PlayerSignature


class NaturalCommands(TableRunner):
    """The table service's ``DeclareNatural`` (``sapsam.app.tables.TableService`` has it)."""

    async def declare_natural(
        self,
        table_id: uuid.UUID,
        player_id: str,
        commitment: bytes,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
        signature: PlayerSignature | None = None,
        player_keys: tuple[bytes, ...] = (),
    ) -> TableOutcome:
        """Record a seat's declaration commitment (the hash only), in ``deal_number`` if given;
        signed as :meth:`DealCommands.commit` is."""
        command = DeclareNatural(
            player_id=player_id,
            commitment=commitment,
            deal_number=deal_number,
            signature=signature,
            player_keys=player_keys,
        )

        def declare(seat: SeatDealt) -> list[object]:
            return [command]

        return await self._seat_move(
            table_id, player_id, request_id, declare, expected_version, request_digest
        )

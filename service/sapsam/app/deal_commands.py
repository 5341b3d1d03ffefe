"""The commands of a deal: start it, mix in entropy, cut and deal, commit, confirm, reveal, time
out the seats past their deadline.

Each is one plan for the runner (``sapsam.app.table_runner``). What only the service may know
joins the append: a deal's fresh secret seed (kept in ``deal_secrets``, never in the log until
revealed), each seat's dealt cards, the current time. Follow-up commands that the rules make
automatic are decided in the same append: the deal right after the cut, and the seed reveal and
scoring right after the last reveal or timeout. So a table is never left waiting for the service.
"""

from __future__ import annotations

import uuid

from sapsam import fairness
from sapsam.app.open_face_play import timed_out_move
from sapsam.app.secret_seeds import current_deal_number, dealt_hands, next_deal_number
from sapsam.app.store_interface import StoreSession
from sapsam.app.table_plans import (
    Plan,
    SeatDealt,
    TableOutcome,
    require_holder_or_operator,
)
from sapsam.app.table_runner import TableRunner
from sapsam.domain.commands import (
    AnnounceSurrender,
    CommitArrangement,
    ConfirmArrangement,
    ContributeEntropy,
    CutDeck,
    DealCards,
    PlayerSignature,
    RevealArrangement,
    StartDeal,
    TimeOutSeats,
)
from sapsam.domain.open_face.commands import PlaceForSeat
from sapsam.domain.open_face.table_state import OpenFaceTable
from sapsam.domain.table import TablePhase, TableState, decide, fold
from sapsam.domain.table_deadlines import UnservedWindow
from sapsam.rules.arrangement import Arrangement


class DealCommands(TableRunner):
    """The table service's deal commands (``sapsam.app.tables.TableService`` has them)."""

    async def start_deal(
        self,
        table_id: uuid.UUID,
        actor: str,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Begin the next deal: a fresh secret seed, only its commitment in the log."""
        seed = self.deal_seeds()

        async def plan(state: TableState, session: StoreSession) -> Plan:
            require_holder_or_operator(state, actor)
            await self.paused_tournaments.refuse_if_paused(session, table_id)
            number = next_deal_number(state)
            command = StartDeal(seed_commitment=fairness.seed_commitment(table_id, number, seed))

            return Plan([command], keep_secret=(number, seed))

        # No pause of the table's tournament is recorded between the check and the append.
        async with self.paused_tournaments.starting_deal(self.store, table_id):
            outcome = await self._execute(
                table_id,
                actor,
                request_id,
                plan,
                expected_version=expected_version,
                request_digest=request_digest,
            )
        if not outcome.replayed:
            started = current_deal_number(outcome.state)
            if started is not None:
                self.secrets.remember(table_id, started, seed)
        return outcome

    async def contribute_entropy(
        self,
        table_id: uuid.UUID,
        player_id: str,
        entropy: bytes,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Mix a seat's bytes into this deal's shuffle."""
        command = ContributeEntropy(player_id=player_id, entropy=entropy)

        def contribute(seat: SeatDealt) -> list[object]:
            return [command]

        return await self._seat_move(
            table_id, player_id, request_id, contribute, expected_version, request_digest
        )

    async def cut(
        self,
        table_id: uuid.UUID,
        player_id: str,
        position: int,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
    ) -> TableOutcome:
        """Cut the deck (the seat on the dealer's right), and deal at once."""

        async def plan(state: TableState, session: StoreSession) -> Plan:
            cut = CutDeck(player_id=player_id, position=position)
            if isinstance(state, OpenFaceTable):
                # Open face deals street by street: the first street joins the cut's append
                # (app.open_face_play), once the cut is decided.
                decide(state, cut)
                seed = await self.secrets.seed(session, table_id, state.deal_number)
                return Plan([cut], seed_to_reveal=seed)
            # Validate the cut before using the secret seed for anything.
            cut_state = fold(decide(state, cut), state)
            deal = cut_state.deal
            assert deal is not None
            seed = await self.secrets.seed(session, table_id, deal.number)
            record = fairness.deal_record(
                seed,
                deal.contributions,
                table_id,
                deal.number,
                position,
                deal.dealer,
                state.seat_count,
            )
            return Plan([cut, DealCards(deal_record=record, now_ms=self.clock())])

        return await self._execute(
            table_id,
            player_id,
            request_id,
            plan,
            expected_version=expected_version,
            request_digest=request_digest,
        )

    async def commit(
        self,
        table_id: uuid.UUID,
        player_id: str,
        commitment: bytes,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
        scheme: int = 1,
        signature: PlayerSignature | None = None,
        player_keys: tuple[bytes, ...] = (),
        confirm: bool = False,
    ) -> TableOutcome:
        """Record a seat's arrangement commitment (the hash only, of ``scheme``), in
        ``deal_number`` if given; ``signature`` must be by one of ``player_keys`` (the player's
        registered keys), and is required when there are any. With ``confirm``, the seat's
        confirmation is decided on the committed state and joins the same append: the events of
        :meth:`commit` then :meth:`confirm`, all or none."""
        command = CommitArrangement(
            player_id=player_id,
            commitment=commitment,
            deal_number=deal_number,
            scheme=scheme,
            signature=signature,
            player_keys=player_keys,
        )

        def commit(seat: SeatDealt) -> list[object]:
            if not confirm:
                return [command]
            then = ConfirmArrangement(player_id, now_ms=self.clock(), deal_number=deal_number)
            return [command, then]

        return await self._seat_move(
            table_id, player_id, request_id, commit, expected_version, request_digest
        )

    async def confirm(
        self,
        table_id: uuid.UUID,
        player_id: str,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
    ) -> TableOutcome:
        """Lock a seat's last commitment, in ``deal_number`` if given."""

        def confirm(seat: SeatDealt) -> list[object]:
            return [
                ConfirmArrangement(
                    player_id=player_id, now_ms=self.clock(), deal_number=deal_number
                )
            ]

        return await self._seat_move(
            table_id, player_id, request_id, confirm, expected_version, request_digest
        )

    async def announce_surrender(
        self,
        table_id: uuid.UUID,
        player_id: str,
        surrender: bool,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
        signature: PlayerSignature | None = None,
        player_keys: tuple[bytes, ...] = (),
    ) -> TableOutcome:
        """Announce play or surrender for a seat, on its turn (docs/rules.md §2.8); signed as
        :meth:`commit`."""

        def announce(seat: SeatDealt) -> list[object]:
            return [
                AnnounceSurrender(
                    player_id=player_id,
                    surrender=surrender,
                    now_ms=self.clock(),
                    deal_number=deal_number,
                    signature=signature,
                    player_keys=player_keys,
                )
            ]

        return await self._seat_move(
            table_id, player_id, request_id, announce, expected_version, request_digest
        )

    async def reveal(
        self,
        table_id: uuid.UUID,
        player_id: str,
        arrangement: Arrangement,
        nonce: bytes,
        request_id: str,
        *,
        expected_version: int | None = None,
        request_digest: bytes | None = None,
        deal_number: int | None = None,
        signature: PlayerSignature | None = None,
        player_keys: tuple[bytes, ...] = (),
        natural: str | None = None,
        natural_nonce: bytes = b"",
    ) -> TableOutcome:
        """Show a seat's arrangement (in ``deal_number`` if given; signed as :meth:`commit`),
        opening its natural declaration with it at a table with naturals; after the last reveal
        the seed is published and scored."""

        async def dealt(state: TableState, session: StoreSession) -> SeatDealt:
            deal = None if isinstance(state, OpenFaceTable) else state.deal
            seat = state.seat_of(player_id)
            if (
                deal is None
                or seat is None
                or state.phase is not TablePhase.REVEALING
                or deal_number not in (None, deal.number)
            ):
                # Let decide give the precise refusal (not seated, wrong phase, wrong deal, ...).
                return SeatDealt()
            seed = await self.secrets.seed(session, table_id, deal.number)
            return SeatDealt(seed, dealt_hands(state, seed)[seat])

        def reveal(seat: SeatDealt) -> list[object]:
            return [
                RevealArrangement(
                    player_id,
                    arrangement,
                    nonce,
                    seat.cards,
                    deal_number,
                    signature,
                    player_keys,
                    natural,
                    natural_nonce,
                )
            ]

        return await self._seat_move(
            table_id, player_id, request_id, reveal, expected_version, request_digest, dealt
        )

    async def time_out(
        self,
        table_id: uuid.UUID,
        request_id: str,
        unserved: tuple[UnservedWindow, ...] = (),
        grace_ms: int = 0,
    ) -> TableOutcome:
        """Record every seat past its deadline now (the server's sweeper calls this), or extend
        the deadline when it fell in (or just after) one of the ``unserved`` windows."""
        now = self.clock()

        async def plan(state: TableState, session: StoreSession) -> Plan:
            if isinstance(state, OpenFaceTable):
                # The seat on turn is placed for by the rule set's timeout policy.
                seed = await self.secrets.seed_if_any(session, table_id, state.play)
                # An outage is never held against a seat: the domain extends a deadline that
                # fell while no server served instead (sapsam.domain.open_face.deal_deadlines).
                if seed is None:
                    return Plan([PlaceForSeat((), now, True, unserved, grace_ms)])
                move = timed_out_move(state, seed, now, unserved, grace_ms)
                return Plan([move], seed_to_reveal=seed)
            seed = await self.secrets.seed_if_any(session, table_id, state.deal)
            command = TimeOutSeats(now_ms=now, unserved=unserved, grace_ms=grace_ms)
            return Plan([command], seed_to_reveal=seed)

        return await self._execute(table_id, "service", request_id, plan)

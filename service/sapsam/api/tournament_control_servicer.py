"""The TournamentService RPCs of the operator's control: pause, resume, cancel, forfeit, re-seat.

Part of ``TournamentServicer`` (``sapsam.api.tournament_servicer``), in the same order of checks:
the caller's right (the access table: all but ForfeitTournamentPlayer are the operator's; a
player forfeits only itself, checked first here), the request's form (INVALID_ARGUMENT: resource
names, the reason), existence (NOT_FOUND), then the aggregate's decision
(``sapsam.domain.tournament_control``). A refused call records nothing; a repeated
``request_id`` returns the original outcome.
"""

from __future__ import annotations

import uuid

import grpc

from sapsam.api import auth, resources
from sapsam.api.api_error import ApiError
from sapsam.api.players import PlayerDirectory
from sapsam.api.receipt_messages import receipt_message
from sapsam.api.request_digest import request_digest
from sapsam.app.tournament_control import TournamentControl
from sapsam.domain.tournament_control import check_reason
from sapsam_proto.v1 import tournament_pb2, tournament_service_pb2


class TournamentControlRpcs:
    """The operator's control RPCs; mixed into ``TournamentServicer``, which supplies ``_view``."""

    _tournaments: TournamentControl
    _players: PlayerDirectory

    async def _view(self, tournament_id: uuid.UUID) -> tournament_pb2.Tournament:
        raise NotImplementedError  # pragma: no cover - TournamentServicer's

    async def _known_player(self, named: str) -> str:
        player_id = str(resources.parse_player(named, "player"))
        if await self._players.get(player_id) is None:
            raise ApiError("PLAYER_NOT_FOUND", f"no player {named}", "player")
        return player_id

    async def _forfeiting(self, caller: auth.Caller, named: str) -> str:
        """Who forfeits: the named player (it must exist), else the calling player."""
        if named:
            return await self._known_player(named)
        if caller.player_id is None:
            raise ApiError("PLAYERS_ONLY", "the operator must name the player", "player")
        return caller.player_id

    async def PauseTournament(  # noqa: N802 - the generated method name
        self, request: tournament_service_pb2.PauseTournamentRequest, context: grpc.ServicerContext
    ) -> tournament_service_pb2.PauseTournamentResponse:
        """Pause a started tournament (operator only)."""
        request_id = resources.scoped_request_id("PauseTournament", request.request_id)
        tournament_id = resources.parse_tournament(request.tournament, "tournament")
        check_reason(request.reason)
        outcome = await self._tournaments.pause(
            tournament_id, request.reason, request_id, request_digest=request_digest(request)
        )
        return tournament_service_pb2.PauseTournamentResponse(
            tournament=await self._view(tournament_id), receipt=receipt_message(outcome.receipt)
        )

    async def ResumeTournament(  # noqa: N802 - the generated method name
        self,
        request: tournament_service_pb2.ResumeTournamentRequest,
        context: grpc.ServicerContext,
    ) -> tournament_service_pb2.ResumeTournamentResponse:
        """Resume a paused tournament (operator only)."""
        request_id = resources.scoped_request_id("ResumeTournament", request.request_id)
        tournament_id = resources.parse_tournament(request.tournament, "tournament")
        outcome = await self._tournaments.resume(
            tournament_id, request_id, request_digest=request_digest(request)
        )
        return tournament_service_pb2.ResumeTournamentResponse(
            tournament=await self._view(tournament_id), receipt=receipt_message(outcome.receipt)
        )

    async def CancelTournament(  # noqa: N802 - the generated method name
        self,
        request: tournament_service_pb2.CancelTournamentRequest,
        context: grpc.ServicerContext,
    ) -> tournament_service_pb2.CancelTournamentResponse:
        """Cancel a tournament before its end (operator only)."""
        request_id = resources.scoped_request_id("CancelTournament", request.request_id)
        tournament_id = resources.parse_tournament(request.tournament, "tournament")
        check_reason(request.reason)
        outcome = await self._tournaments.cancel(
            tournament_id, request.reason, request_id, request_digest=request_digest(request)
        )
        return tournament_service_pb2.CancelTournamentResponse(
            tournament=await self._view(tournament_id), receipt=receipt_message(outcome.receipt)
        )

    async def ForfeitTournamentPlayer(  # noqa: N802 - the generated method name
        self,
        request: tournament_service_pb2.ForfeitTournamentPlayerRequest,
        context: grpc.ServicerContext,
    ) -> tournament_service_pb2.ForfeitTournamentPlayerResponse:
        """A player leaves the tournament (itself, or anyone for the operator)."""
        caller = auth.current_caller()
        if request.player:
            # Who is named, by id (its spelling checked first): never by comparing the text of
            # two names, nor by a display name (players may share one).
            named = str(resources.parse_player(request.player, "player"))
            if not caller.is_operator and named != caller.player_id:
                raise ApiError("OPERATOR_ONLY", "only the operator may forfeit another player")
        request_id = resources.scoped_request_id("ForfeitTournamentPlayer", request.request_id)
        tournament_id = resources.parse_tournament(request.tournament, "tournament")
        check_reason(request.reason)
        player_id = await self._forfeiting(caller, request.player)
        outcome = await self._tournaments.forfeit(
            tournament_id,
            player_id,
            request.reason,
            request_id,
            actor="operator" if caller.is_operator else player_id,
            request_digest=request_digest(request),
        )
        return tournament_service_pb2.ForfeitTournamentPlayerResponse(
            tournament=await self._view(tournament_id), receipt=receipt_message(outcome.receipt)
        )

    async def ReplaceTournamentSeat(  # noqa: N802 - the generated method name
        self,
        request: tournament_service_pb2.ReplaceTournamentSeatRequest,
        context: grpc.ServicerContext,
    ) -> tournament_service_pb2.ReplaceTournamentSeatResponse:
        """Give a forfeited player's seat to another player (operator only)."""
        request_id = resources.scoped_request_id("ReplaceTournamentSeat", request.request_id)
        tournament_id = resources.parse_tournament(request.tournament, "tournament")
        seat = resources.parse_seat(request.seat, "seat")
        player_id = await self._known_player(request.player)
        outcome = await self._tournaments.replace_seat(
            tournament_id,
            seat.table_id,
            seat.seat,
            player_id,
            request_id,
            request_digest=request_digest(request),
        )
        return tournament_service_pb2.ReplaceTournamentSeatResponse(
            tournament=await self._view(tournament_id), receipt=receipt_message(outcome.receipt)
        )

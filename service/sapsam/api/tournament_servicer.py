"""The TournamentService servicer: parse the request, call the tournament service, map back.

Checks run in the TableService's order, so a refused call writes nothing: the caller's right
(UNAUTHENTICATED, PERMISSION_DENIED: creating and starting are the operator's, checked by the
auth interceptor from ``sapsam.api.access``; a player registers only itself, checked first here),
the request's form (INVALID_ARGUMENT), existence (NOT_FOUND), then the aggregate's decision.
A repeated ``request_id`` returns the original outcome. Tournament events hold no secrets (a
round's seating seed is in the log only once that round is seated), so every read is public.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from functools import partial
from typing import Any, Final

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from sapsam.api import auth, resources, views
from sapsam.api.api_error import ApiError
from sapsam.api.live_feed import EventFeed
from sapsam.api.players import PlayerDirectory
from sapsam.api.receipt_messages import receipt_message
from sapsam.api.request_digest import request_digest
from sapsam.api.stream_channels import TournamentChannel
from sapsam.api.tournament_control_servicer import TournamentControlRpcs
from sapsam.api.watch import watch
from sapsam.app import tournament_queries as queries
from sapsam.app.store_interface import LeaderboardLine, Store
from sapsam.app.tournament_control import TournamentControl
from sapsam.app.tournaments import (
    TournamentNotFoundError,
    TournamentOutcome,
    TournamentSettings,
    stream_id_for,
)
from sapsam.domain.tournament import TournamentPhase, TournamentState, evolve
from sapsam.domain.tournament_events import RoundSeated
from sapsam.log.records import RecordedEvent
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.presets import every_open_face_preset
from sapsam.rules.ruleset import MAX_NAME_LENGTH, RuleSet
from sapsam_proto.v1 import (
    tournament_pb2,
    tournament_service_pb2,
    tournament_service_pb2_grpc,
)

DEFAULT_PAGE_SIZE: Final = 50
MAX_PAGE_SIZE: Final = 100
MAX_NEIGHBOURS: Final = 20
_MAX_BIGINT: Final = 2**63 - 1
"""Numbers from a page token go to SQL as bigint: larger ones are a damaged token, not INTERNAL."""
_PERIOD = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])$")

_PHASES_BY_STATUS: Final[dict[int, list[str] | None]] = {
    tournament_pb2.TOURNAMENT_STATUS_UNSPECIFIED: None,
    tournament_pb2.TOURNAMENT_STATUS_REGISTRATION: ["REGISTRATION"],
    tournament_pb2.TOURNAMENT_STATUS_RUNNING: ["RUNNING", "BETWEEN_ROUNDS"],
    tournament_pb2.TOURNAMENT_STATUS_COMPLETE: ["COMPLETE"],
    tournament_pb2.TOURNAMENT_STATUS_PAUSED: ["PAUSED"],
    tournament_pb2.TOURNAMENT_STATUS_CANCELLED: ["CANCELLED"],
}
_RESEATING: Final = {
    tournament_pb2.RESEATING_UNSPECIFIED: "random",
    tournament_pb2.RESEATING_RANDOM: "random",
    tournament_pb2.RESEATING_STANDINGS: "standings",
}
_TIE_BREAK: Final = {
    tournament_pb2.TIE_BREAK_UNSPECIFIED: "none",
    tournament_pb2.TIE_BREAK_NONE: "none",
    tournament_pb2.TIE_BREAK_DEALS_WON: "deals_won",
}


def parse_tournament(value: str, field: str) -> uuid.UUID:
    """The tournament id of ``tournaments/{tournament}`` (canonical spelling only)."""
    return resources.parse_tournament(value, field)


def _milliseconds(stamp: Timestamp, field: str) -> int:
    """A request's timestamp in Unix milliseconds; INVALID_ARGUMENT if it is no valid time."""
    try:
        return int(stamp.ToMilliseconds())
    except ValueError:  # seconds outside years 1 to 9999, or nanos outside 0 to 999,999,999
        raise ApiError(
            "INVALID_ARGUMENT",
            f"{field} must be a valid time: years 1 to 9999, nanos 0 to 999,999,999",
            field,
        ) from None


def _outcome_version(outcome: TournamentOutcome) -> int:
    # The stream's version after the command: its last event's, or (nothing appended) the state's.
    return outcome.events[-1].version if outcome.events else outcome.state.version


def _require_operator(caller: auth.Caller) -> None:
    if not caller.is_operator:
        raise ApiError("OPERATOR_ONLY", "only the operator may do this")


def _check_may_name(caller: auth.Caller, named: str, action: str) -> None:
    # Before any other field is read: a player may name itself or no one; naming another player
    # is the operator's right, refused whatever else the request holds. Who is named, by id (its
    # spelling checked first, BAD_RESOURCE_NAME): never by comparing the text of two names.
    if not named or caller.is_operator:
        return
    if str(resources.parse_player(named, "player")) != caller.player_id:
        raise ApiError("OPERATOR_ONLY", f"only the operator may {action} another player")


def _page_size(value: int) -> int:
    size = value or DEFAULT_PAGE_SIZE
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise ApiError("BAD_PAGE_SIZE", f"page_size must be 0 to {MAX_PAGE_SIZE}", "page_size")
    return size


def _encode_token(values: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(values, sort_keys=True).encode()).decode()


def _decode_token(token: str, expected: dict[str, Any]) -> dict[str, Any] | None:
    """The token's values, checked to belong to the same query (``expected`` keys match)."""
    if not token:
        return None
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
        if not isinstance(decoded, dict) or any(decoded.get(k) != v for k, v in expected.items()):
            raise ValueError("another query")
        return decoded
    # RecursionError: a token of deeply nested JSON (json gives up on the depth).
    except (ValueError, RecursionError, binascii.Error, UnicodeDecodeError):
        raise ApiError(
            "BAD_PAGE_TOKEN",
            "page_token is not one this server issued for this query",
            "page_token",
        ) from None


def _offset(token: dict[str, Any] | None) -> int:
    if token is None:
        return 0
    offset = token.get("offset")
    if not isinstance(offset, int) or not 0 <= offset <= _MAX_BIGINT:  # SQL OFFSET is bigint
        raise ApiError("BAD_PAGE_TOKEN", "page_token is damaged", "page_token")
    return offset


class TournamentServicer(
    TournamentControlRpcs, tournament_service_pb2_grpc.TournamentServiceServicer
):
    """Every TournamentService RPC over one ``TournamentControl`` and the players (the operator's
    control RPCs in ``sapsam.api.tournament_control_servicer``)."""

    def __init__(
        self,
        tournaments: TournamentControl,
        players: PlayerDirectory,
        feed: EventFeed,
        lagging_reads: Callable[[], Store] | None = None,
    ) -> None:
        self._tournaments = tournaments
        self._players = players
        self._feed = feed
        # Where a read that may lag goes (GetLeaderboard): a standby within its bound, if any
        # (``sapsam.store.standby_reads``).
        self._lagging_reads = lagging_reads or (lambda: tournaments.store)

    # -- views ---------------------------------------------------------------------------------

    def _message(
        self, state: TournamentState, recorded: Sequence[RecordedEvent]
    ) -> tournament_pb2.Tournament:
        seated = []
        for item in recorded:
            if item.type == RoundSeated.TYPE:
                event = self._tournaments.decode(item)
                assert isinstance(event, RoundSeated)
                seated.append(event)
        return views.tournament_message(state, seated)

    async def _view(self, tournament_id: uuid.UUID) -> tournament_pb2.Tournament:
        recorded = await self._tournaments.events(tournament_id)
        if not recorded:
            raise TournamentNotFoundError(tournament_id)
        state = TournamentState()
        for item in recorded:
            state = evolve(state, self._tournaments.decode(item))
        return self._message(state, recorded)

    async def _player_for(self, caller: auth.Caller, named: str) -> str:
        """The player a registration is for: the caller, or (operator only) the named one."""
        if named:
            player_id = str(resources.parse_player(named, "player"))
            if not caller.is_operator and player_id != caller.player_id:
                raise ApiError("OPERATOR_ONLY", "only the operator may register another player")
            if await self._players.get(player_id) is None:
                raise ApiError("PLAYER_NOT_FOUND", f"no player {named}", "player")
            return player_id
        if caller.player_id is None:
            raise ApiError("PLAYERS_ONLY", "the operator must name the player", "player")
        return caller.player_id

    # -- commands --------------------------------------------------------------------------------

    async def CreateTournament(  # noqa: N802 - the generated method name
        self,
        request: tournament_service_pb2.CreateTournamentRequest,
        context: grpc.ServicerContext,
    ) -> tournament_service_pb2.CreateTournamentResponse:
        """Create a tournament (operator only)."""
        _require_operator(auth.current_caller())  # the access table checked it already
        request_id = resources.scoped_request_id("CreateTournament", request.request_id)
        which = request.WhichOneof("rules")
        rule_set: RuleSet | OpenFaceRules
        open_face = every_open_face_preset()
        if which == "rule_set_preset" and request.rule_set_preset in open_face:
            # An open-face or Pineapple preset, as CreateTable takes one: each table plays one
            # set a round.
            rule_set = open_face[request.rule_set_preset]
        else:
            rule_set = views.rule_set_for_request(
                request.rule_set_preset if which == "rule_set_preset" else None,
                request.rule_set if which == "rule_set" else None,
                None,
            )
        if not request.HasField("registration_close_time"):
            raise ApiError(
                "MISSING_FIELD", "registration_close_time is required", "registration_close_time"
            )
        opens = (
            _milliseconds(request.registration_open_time, "registration_open_time")
            if request.HasField("registration_open_time")
            else self._tournaments.clock()
        )
        closes = _milliseconds(request.registration_close_time, "registration_close_time")
        if request.reseating not in _RESEATING:
            raise ApiError("INVALID_ARGUMENT", "unknown reseating", "reseating")
        if request.tie_break not in _TIE_BREAK:
            raise ApiError("INVALID_ARGUMENT", "unknown tie_break", "tie_break")
        settings = TournamentSettings(
            name=request.display_name,
            rule_set=rule_set,
            seats_per_table=request.seats_per_table,
            rounds=request.rounds,
            deals_per_round=request.deals_per_round,
            registration_opens_ms=opens,
            registration_closes_ms=closes,
            max_entrants=request.max_entrants,
            reseating=_RESEATING[request.reseating],
            tie_break=_TIE_BREAK[request.tie_break],
        )
        outcome = await self._tournaments.create(
            settings, views.OPERATOR_ACTOR, request_id, request_digest=request_digest(request)
        )
        return tournament_service_pb2.CreateTournamentResponse(
            tournament=await self._view(outcome.tournament_id),
            receipt=receipt_message(outcome.receipt),
        )

    async def RegisterTournamentPlayer(  # noqa: N802 - the generated method name
        self,
        request: tournament_service_pb2.RegisterTournamentPlayerRequest,
        context: grpc.ServicerContext,
    ) -> tournament_service_pb2.RegisterTournamentPlayerResponse:
        """Register the caller (or, for the operator, a named player)."""
        _check_may_name(auth.current_caller(), request.player, "register")
        request_id = resources.scoped_request_id("RegisterTournamentPlayer", request.request_id)
        tournament_id = parse_tournament(request.tournament, "tournament")
        player_id = await self._player_for(auth.current_caller(), request.player)
        outcome = await self._tournaments.register(
            tournament_id, player_id, request_id, request_digest=request_digest(request)
        )
        return tournament_service_pb2.RegisterTournamentPlayerResponse(
            version=_outcome_version(outcome), receipt=receipt_message(outcome.receipt)
        )

    async def UnregisterTournamentPlayer(  # noqa: N802 - the generated method name
        self,
        request: tournament_service_pb2.UnregisterTournamentPlayerRequest,
        context: grpc.ServicerContext,
    ) -> tournament_service_pb2.UnregisterTournamentPlayerResponse:
        """Withdraw the caller (or, for the operator, a named player) before the start."""
        _check_may_name(auth.current_caller(), request.player, "unregister")
        request_id = resources.scoped_request_id("UnregisterTournamentPlayer", request.request_id)
        tournament_id = parse_tournament(request.tournament, "tournament")
        player_id = await self._player_for(auth.current_caller(), request.player)
        outcome = await self._tournaments.unregister(
            tournament_id, player_id, request_id, request_digest=request_digest(request)
        )
        return tournament_service_pb2.UnregisterTournamentPlayerResponse(
            version=_outcome_version(outcome), receipt=receipt_message(outcome.receipt)
        )

    async def StartTournament(  # noqa: N802 - the generated method name
        self,
        request: tournament_service_pb2.StartTournamentRequest,
        context: grpc.ServicerContext,
    ) -> tournament_service_pb2.StartTournamentResponse:
        """Start the tournament (operator only)."""
        _require_operator(auth.current_caller())  # the access table checked it already
        request_id = resources.scoped_request_id("StartTournament", request.request_id)
        tournament_id = parse_tournament(request.tournament, "tournament")
        outcome = await self._tournaments.start(
            tournament_id, views.OPERATOR_ACTOR, request_id, request_digest=request_digest(request)
        )
        return tournament_service_pb2.StartTournamentResponse(
            tournament=await self._view(outcome.tournament_id),
            receipt=receipt_message(outcome.receipt),
        )

    # -- reads -----------------------------------------------------------------------------------

    async def GetTournament(  # noqa: N802 - the generated method name
        self, request: tournament_service_pb2.GetTournamentRequest, context: grpc.ServicerContext
    ) -> tournament_service_pb2.GetTournamentResponse:
        """A tournament's public state."""
        tournament_id = parse_tournament(request.name, "name")
        return tournament_service_pb2.GetTournamentResponse(
            tournament=await self._view(tournament_id)
        )

    async def ListTournaments(  # noqa: N802 - the generated method name
        self, request: tournament_service_pb2.ListTournamentsRequest, context: grpc.ServicerContext
    ) -> tournament_service_pb2.ListTournamentsResponse:
        """A page of tournaments, newest first."""
        size = _page_size(request.page_size)
        status = int(request.status)
        if status not in _PHASES_BY_STATUS:
            raise ApiError("INVALID_ARGUMENT", "unknown tournament status", "status")
        token = _decode_token(request.page_token, {"query": "tournaments", "status": status})
        after = None
        if token is not None:
            time, last = token.get("time"), token.get("id")
            if not isinstance(time, int) or not isinstance(last, str) or abs(time) > _MAX_BIGINT:
                raise ApiError("BAD_PAGE_TOKEN", "page_token is damaged", "page_token")
            try:  # the id reaches SQL as a uuid: anything else is a damaged token, not a bug
                after = (time, str(uuid.UUID(last)))
            except ValueError:
                raise ApiError("BAD_PAGE_TOKEN", "page_token is damaged", "page_token") from None
        ids = await queries.tournament_page(
            self._tournaments.store, _PHASES_BY_STATUS[status], after, size + 1
        )
        tournaments = [await self._view(uuid.UUID(item)) for item, _ in ids[:size]]
        next_token = ""
        if len(ids) > size:
            last_id, last_time = ids[size - 1]
            next_token = _encode_token(
                {"query": "tournaments", "status": status, "time": last_time, "id": last_id}
            )
        return tournament_service_pb2.ListTournamentsResponse(
            tournaments=tournaments, next_page_token=next_token
        )

    async def GetStandings(  # noqa: N802 - the generated method name
        self, request: tournament_service_pb2.GetStandingsRequest, context: grpc.ServicerContext
    ) -> tournament_service_pb2.GetStandingsResponse:
        """A page of the standings, best first; equal totals share a place."""
        tournament_id = parse_tournament(request.tournament, "tournament")
        size = _page_size(request.page_size)
        key = {"query": "standings", "tournament": str(tournament_id)}
        offset = _offset(_decode_token(request.page_token, key))
        state = await self._tournaments.load(tournament_id)
        rows, total = await queries.standings(
            self._tournaments.store, tournament_id, state.tie_break.value, offset, size
        )
        names = await self._players.display_names(row.player_id for row in rows)
        standings = [
            tournament_pb2.TournamentStanding(
                player=resources.player_name(row.player_id),
                display_name=names.get(row.player_id, ""),
                total=row.total,
                deals_won=row.deals_won,
                deals_played=row.deals_played,
                place=row.place,
                forfeited=row.player_id in state.forfeited,
            )
            for row in rows
        ]
        next_token = (
            _encode_token({**key, "offset": offset + size}) if offset + size < total else ""
        )
        return tournament_service_pb2.GetStandingsResponse(
            standings=standings,
            next_page_token=next_token,
            total_size=total,
            final=state.phase in (TournamentPhase.COMPLETE, TournamentPhase.CANCELLED),
        )

    async def GetLeaderboard(  # noqa: N802 - the generated method name
        self, request: tournament_service_pb2.GetLeaderboardRequest, context: grpc.ServicerContext
    ) -> tournament_service_pb2.GetLeaderboardResponse:
        """A page of a leaderboard across tournaments, and the caller's neighbourhood."""
        size = _page_size(request.page_size)
        if request.period and not _PERIOD.fullmatch(request.period):  # "$" would allow a "\n"
            raise ApiError("INVALID_ARGUMENT", "period must be YYYY-MM", "period")
        if not 0 <= request.neighbours <= MAX_NEIGHBOURS:
            raise ApiError(
                "INVALID_ARGUMENT", f"neighbours must be 0 to {MAX_NEIGHBOURS}", "neighbours"
            )
        if len(request.rule_set_name) > MAX_NAME_LENGTH or not request.rule_set_name.isprintable():
            # As a rule set's own name must be; a NUL would also fail in PostgreSQL's text.
            raise ApiError(
                "INVALID_ARGUMENT",
                f"rule_set_name must be at most {MAX_NAME_LENGTH} printable characters",
                "rule_set_name",
            )
        rule_set = request.rule_set_name or None
        period = request.period or None
        key = {"query": "leaderboard", "rule_set": rule_set, "period": period}
        offset = _offset(_decode_token(request.page_token, key))
        caller = auth.current_caller()
        board = await queries.leaderboard(
            self._lagging_reads(),
            rule_set,
            period,
            offset,
            size,
            caller.player_id,
            request.neighbours,
        )
        rows, total, around = board.lines, board.total, board.around
        names = await self._players.display_names(row.player_id for row in [*rows, *around])

        def entry(row: LeaderboardLine) -> tournament_pb2.LeaderboardEntry:
            return tournament_pb2.LeaderboardEntry(
                player=resources.player_name(row.player_id),
                display_name=names.get(row.player_id, ""),
                total=row.total,
                deals_played=row.deals_played,
                tournaments_played=row.tournaments_played,
                place=row.place,
            )

        next_token = (
            _encode_token({**key, "offset": offset + size}) if offset + size < total else ""
        )
        return tournament_service_pb2.GetLeaderboardResponse(
            entries=[entry(row) for row in rows],
            next_page_token=next_token,
            total_size=total,
            around_me=[entry(row) for row in around],
        )

    def WatchTournament(  # noqa: N802 - the generated method name
        self,
        request: tournament_service_pb2.WatchTournamentRequest,
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[tournament_service_pb2.WatchTournamentResponse]:
        """The tournament's events after ``after_version``, then live, until it is complete
        (``sapsam.api.watch``): the stream ``watch`` makes, handed to grpc as it is."""
        tournament_id = parse_tournament(request.tournament, "tournament")
        if request.after_version < 0:
            raise ApiError("INVALID_ARGUMENT", "after_version must be 0 or more", "after_version")
        feed = self._feed
        stream_id = stream_id_for(tournament_id)
        return watch(
            feed,
            stream_id,
            lambda: TournamentChannel(self._tournaments, tournament_id, feed, feed.buffer_limit),
            request.after_version,
            # NOT_FOUND first, unless another watcher here has seen it exists
            opening=None
            if feed.has_events(stream_id)
            else partial(self._tournaments.load, tournament_id),
        )


def add_tournament_service(servicer: TournamentServicer | None, server: grpc.aio.Server) -> None:
    """Register the servicer on a server (nothing when there is none, e.g. in shell tests)."""
    if servicer is not None:
        tournament_service_pb2_grpc.add_TournamentServiceServicer_to_server(servicer, server)

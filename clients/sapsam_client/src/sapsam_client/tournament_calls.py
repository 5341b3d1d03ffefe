"""The SDK's TournamentService calls a player makes (a part of ``sapsam_client.client.Client``):
read a tournament, list them, enter one. The operator's controls stay with the ``sapsam`` CLI."""

from __future__ import annotations

from collections.abc import Iterator

from sapsam_client.connection import Connection, request_id
from sapsam_proto.v1 import tournament_pb2, tournament_service_pb2

TOURNAMENT_PREFIX = "tournaments/"


def tournament_name(value: str) -> str:
    """``tournaments/{id}`` for a tournament's id or resource name."""
    return value if value.startswith(TOURNAMENT_PREFIX) else f"{TOURNAMENT_PREFIX}{value}"


class TournamentCalls(Connection):
    """The TournamentService calls of a :class:`~sapsam_client.client.Client`."""

    def get_tournament(self, tournament: str) -> tournament_pb2.Tournament:
        """The tournament as it stands: status, rounds seated, forfeits, the pause."""
        return self.call(
            self.tournaments.GetTournament,
            tournament_service_pb2.GetTournamentRequest(name=tournament_name(tournament)),
            tournament_service_pb2.GetTournamentResponse,
        ).tournament

    def list_tournaments(
        self,
        status: tournament_pb2.TournamentStatus.ValueType = (
            tournament_pb2.TOURNAMENT_STATUS_UNSPECIFIED
        ),
    ) -> Iterator[tournament_pb2.Tournament]:
        """Every tournament (newest first), optionally only those in ``status``, page after
        page."""
        token = ""
        while True:
            page = self.call(
                self.tournaments.ListTournaments,
                tournament_service_pb2.ListTournamentsRequest(page_token=token, status=status),
                tournament_service_pb2.ListTournamentsResponse,
            )
            yield from page.tournaments
            token = page.next_page_token
            if not token:
                return

    def enter_tournament(self, tournament: str) -> int:
        """Register the client's player in a tournament open for registration; the
        tournament's version after it."""
        response = self.call(
            self.tournaments.RegisterTournamentPlayer,
            tournament_service_pb2.RegisterTournamentPlayerRequest(
                request_id=request_id(), tournament=tournament_name(tournament)
            ),
            tournament_service_pb2.RegisterTournamentPlayerResponse,
        )
        return int(response.version)

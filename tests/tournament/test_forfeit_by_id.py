"""A forfeit names its player by id, never by display name nor by comparing names as text: two
entrants share the display name "Ann" over a real gRPC socket and through the CLI; each forfeit
takes out the one player its id names and no one else."""

from __future__ import annotations

import grpc
import pytest
from test_tournament_api import OPERATOR, create, reason_of
from test_tournament_cli import sapsam
from test_tournament_control_api import enter_all, forfeit, start

from sapsam.api.server import RunningServer
from sapsam.cli import tournament_bots
from sapsam_proto.v1 import tournament_service_pb2, tournament_service_pb2_grpc


def _bots_named_ann(target: str) -> list[tournament_bots.TournamentBot]:
    from sapsam_client import connect

    bots = []
    for display_name in ("Ann", "Ann", "Bob", "Cy", "Di"):
        client = connect(target)
        registration = client.register(display_name)
        bots.append(
            tournament_bots.TournamentBot(
                registration.display_name, registration.player, registration.token
            )
        )
        client.close()
    return bots


def test_a_forfeit_takes_out_the_player_its_id_names(
    server: RunningServer, database_url: str
) -> None:
    target = f"127.0.0.1:{server.port}"
    bots = _bots_named_ann(target)
    ann, other_ann = bots[0], bots[1]
    assert ann.display_name == other_ann.display_name and ann.player != other_ann.player
    with grpc.insecure_channel(target) as channel:
        stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        tournament = create(stub, seats_per_table=2, rounds=3, deals_per_round=1).name
        enter_all(stub, tournament, bots)
        start(stub, tournament)
        # The other Ann is not Ann, whatever the name says; nor is a malformed name, refused
        # for its spelling before anything else.
        for named, expected in (
            (other_ann.player, (grpc.StatusCode.PERMISSION_DENIED, "OPERATOR_ONLY")),
            (ann.player.upper(), (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RESOURCE_NAME")),
            ("Ann", (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RESOURCE_NAME")),
        ):
            with pytest.raises(grpc.RpcError) as caught:
                stub.ForfeitTournamentPlayer(forfeit(tournament, named), metadata=ann.metadata())
            assert reason_of(caught.value) == expected, named
        # Ann names herself: she leaves, the other Ann stays.
        left = stub.ForfeitTournamentPlayer(
            forfeit(tournament, ann.player), metadata=ann.metadata()
        ).tournament
        assert list(left.forfeited_players) == [ann.player]
    # The operator's CLI: "Ann" names two players, so it is refused with both ids, and nothing
    # is written; the id is what names one of them.
    ambiguous = sapsam(
        "tournament",
        "forfeit",
        tournament,
        "Ann",
        "--reason",
        "ill",
        "--database-url",
        database_url,
    )
    assert ambiguous.returncode == 2, ambiguous.stdout
    assert "2 players are named 'Ann'" in ambiguous.stderr and other_ann.player in ambiguous.stderr
    by_id = sapsam(
        "tournament",
        "forfeit",
        tournament,
        other_ann.player,
        "--reason",
        "ill",
        "--database-url",
        database_url,
    )
    assert by_id.returncode == 0, by_id.stderr
    assert by_id.stdout.startswith("Ann has left")
    with grpc.insecure_channel(target) as channel:
        stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        shown = stub.GetTournament(
            tournament_service_pb2.GetTournamentRequest(name=tournament), metadata=OPERATOR
        )
    assert sorted(shown.tournament.forfeited_players) == sorted([ann.player, other_ann.player])

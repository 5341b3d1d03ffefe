"""TournamentService over a real gRPC socket: twelve bots play a 3-table, 2-round tournament, and
every refusal is a clear error with its reason and no events."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import grpc
import psycopg
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status
from tournament_play import OPERATOR_TOKEN

from sapsam.api.server import RunningServer
from sapsam.audit.database import verify_table_online
from sapsam.cli import tournament_bots
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import DealScored
from sapsam.domain.tournament_seating import seat_randomly
from sapsam.store.offline_reads import read_stream
from sapsam_proto.v1 import (
    tournament_pb2,
    tournament_service_pb2,
    tournament_service_pb2_grpc,
)

OPERATOR = (("authorization", f"Bearer {OPERATOR_TOKEN}"),)
FAR_FUTURE = Timestamp(seconds=4_102_444_800)


def reason_of(error: grpc.RpcError) -> tuple[grpc.StatusCode, str]:
    status = rpc_status.from_call(error)
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return error.code(), info.reason
    raise AssertionError("no ErrorInfo")


def event_count(database_url: str) -> int:
    with psycopg.connect(database_url) as connection:
        row = connection.execute("SELECT count(*) FROM events").fetchone()
    assert row is not None
    return int(row[0])


def create(stub: Any, metadata: Any = OPERATOR, **changes: Any) -> tournament_pb2.Tournament:
    values: dict[str, Any] = {
        "request_id": str(uuid.uuid4()),
        "display_name": "Bots cup",
        "rule_set_preset": "pagat",
        "seats_per_table": 4,
        "rounds": 2,
        "deals_per_round": 2,
        "registration_close_time": FAR_FUTURE,
        "max_entrants": 16,
    }
    values.update(changes)
    request = tournament_service_pb2.CreateTournamentRequest(**values)
    return stub.CreateTournament(request, metadata=metadata).tournament


def test_twelve_bots_play_a_three_table_two_round_tournament(
    server: RunningServer, database_url: str
) -> None:
    target = f"127.0.0.1:{server.port}"
    with grpc.insecure_channel(target) as channel:
        stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        tournament = create(stub, reseating=tournament_pb2.RESEATING_STANDINGS)
        assert len(tournament.seating_commitments) == 2 and not tournament.seated_rounds
        bots = tournament_bots.register_bots(target, 12)
        for bot in bots:
            tournament_bots.enter(channel, bot, tournament.name)
        watched: list[tournament_pb2.TournamentEvent] = []
        watch = stub.WatchTournament(
            tournament_service_pb2.WatchTournamentRequest(tournament=tournament.name),
            metadata=bots[0].metadata(),
        )
        watcher = threading.Thread(target=lambda: watched.extend(r.event for r in watch))
        watcher.start()
        threads = tournament_bots.run_bots(target, bots, tournament.name)
        started = stub.StartTournament(
            tournament_service_pb2.StartTournamentRequest(
                request_id="start", tournament=tournament.name
            ),
            metadata=OPERATOR,
        ).tournament
        tournament_bots.wait_for(threads, bots, timeout=240)
        watcher.join(60)
        assert not watcher.is_alive(), "the watch did not end with the tournament"
        final = stub.GetTournament(
            tournament_service_pb2.GetTournamentRequest(name=tournament.name), metadata=OPERATOR
        ).tournament
        pages = []
        token = ""
        while True:
            page = stub.GetStandings(
                tournament_service_pb2.GetStandingsRequest(
                    tournament=tournament.name, page_size=5, page_token=token
                ),
                metadata=bots[3].metadata(),
            )
            pages.append(page)
            token = page.next_page_token
            if not token:
                break
        board = stub.GetLeaderboard(
            tournament_service_pb2.GetLeaderboardRequest(rule_set_name="pagat", neighbours=2),
            metadata=bots[5].metadata(),
        )
    assert final.status == tournament_pb2.TOURNAMENT_STATUS_COMPLETE
    assert [len(r.tables) for r in final.seated_rounds] == [3, 3]
    assert all(
        len(t.players) == 4 and t.deals_credited == 2 for r in final.seated_rounds for t in r.tables
    )
    # The seating draw verifies: round 1 is the committed draw over the entrants.
    entrants = [name.removeprefix("players/") for name in final.players]
    first = final.seated_rounds[0]
    seatings = tuple(
        tuple(p.removeprefix("players/") for p in table.players) for table in first.tables
    )
    tournament_id = uuid.UUID(final.name.removeprefix("tournaments/"))
    assert seatings == seat_randomly(tournament_id, 1, first.seating_seed, entrants, 4)
    assert started.seated_rounds[0].seating_seed == first.seating_seed
    # Standings equal the sum of the verified deals.
    expected = dict.fromkeys(entrants, 0)
    with psycopg.connect(database_url, autocommit=True) as connection:
        for round_message in final.seated_rounds:
            for table in round_message.tables:
                table_id = uuid.UUID(table.table.removeprefix("tables/"))
                assert verify_table_online(connection, table_id).ok
                for recorded in read_stream(connection, f"table-{table_id}"):
                    event = DEFAULT_CODEC.decode(
                        recorded.type, recorded.schema_version, recorded.data
                    )
                    if isinstance(event, DealScored):
                        for player, delta in zip(table.players, event.totals, strict=True):
                            expected[player.removeprefix("players/")] += delta
    standings = [line for page in pages for line in page.standings]
    assert len(standings) == 12 and pages[0].total_size == 12 and pages[-1].final
    assert {s.player.removeprefix("players/"): s.total for s in standings} == expected
    # Shared places exactly where totals tie; otherwise the place is the position.
    for index, line in enumerate(standings):
        if index and line.total == standings[index - 1].total:
            assert line.place == standings[index - 1].place
        else:
            assert line.place == index + 1
    # The leaderboard (one tournament so far) agrees, and shows the caller's neighbourhood.
    assert {e.player: e.total for e in board.entries} == {s.player: s.total for s in standings}
    assert bots[5].player in [entry.player for entry in board.around_me]
    assert 3 <= len(board.around_me) <= 5
    # The watch saw every event in order, ending with the completion.
    assert [event.version for event in watched] == list(range(1, final.version + 1))
    assert watched[-1].type == "TournamentCompleted"
    assert sum(event.type == "DealCredited" for event in watched) == 12


def test_refusals_have_reasons_and_write_nothing(server: RunningServer, database_url: str) -> None:
    target = f"127.0.0.1:{server.port}"
    with grpc.insecure_channel(target) as channel:
        stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        bots = tournament_bots.register_bots(target, 5)

        def refused(call: Any, request: Any, metadata: Any) -> tuple[grpc.StatusCode, str]:
            before = event_count(database_url)
            with pytest.raises(grpc.RpcError) as caught:
                call(request, metadata=metadata)
            assert event_count(database_url) == before
            return reason_of(caught.value)

        create_request = tournament_service_pb2.CreateTournamentRequest(
            request_id="x",
            display_name="Mine",
            seats_per_table=4,
            rounds=1,
            deals_per_round=1,
            registration_close_time=FAR_FUTURE,
            max_entrants=8,
        )
        assert refused(stub.CreateTournament, create_request, bots[0].metadata()) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "OPERATOR_ONLY",
        )
        tournament = create(stub, rounds=1, deals_per_round=1)
        start = tournament_service_pb2.StartTournamentRequest(
            request_id="start", tournament=tournament.name
        )
        for bot in bots[:3]:
            tournament_bots.enter(channel, bot, tournament.name)
        assert refused(stub.StartTournament, start, OPERATOR) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "TOO_FEW_PLAYERS",
        )
        assert refused(stub.StartTournament, start, bots[0].metadata()) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "OPERATOR_ONLY",
        )
        again = tournament_service_pb2.RegisterTournamentPlayerRequest(
            request_id="again", tournament=tournament.name
        )
        assert refused(stub.RegisterTournamentPlayer, again, bots[0].metadata()) == (
            grpc.StatusCode.ALREADY_EXISTS,
            "ALREADY_REGISTERED",
        )
        tournament_bots.enter(channel, bots[3], tournament.name)
        stub.StartTournament(start, metadata=OPERATOR)
        twice = tournament_service_pb2.StartTournamentRequest(
            request_id="start-again", tournament=tournament.name
        )
        assert refused(stub.StartTournament, twice, OPERATOR) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "ALREADY_STARTED",
        )
        late = tournament_service_pb2.RegisterTournamentPlayerRequest(
            request_id="late", tournament=tournament.name
        )
        assert refused(stub.RegisterTournamentPlayer, late, bots[4].metadata()) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "REGISTRATION_CLOSED",
        )
        leave = tournament_service_pb2.UnregisterTournamentPlayerRequest(
            request_id="leave", tournament=tournament.name
        )
        assert refused(stub.UnregisterTournamentPlayer, leave, bots[0].metadata()) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "PLAYER_SEATED",
        )
        missing = tournament_service_pb2.GetTournamentRequest(name=f"tournaments/{uuid.uuid4()}")
        assert refused(stub.GetTournament, missing, OPERATOR) == (
            grpc.StatusCode.NOT_FOUND,
            "TOURNAMENT_NOT_FOUND",
        )
        bad = tournament_service_pb2.GetStandingsRequest(tournament="tables/x")
        assert refused(stub.GetStandings, bad, OPERATOR) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_RESOURCE_NAME",
        )
        # Lists: newest first, paged, filtered by status.
        other = create(stub, display_name="Later cup")
        listed = stub.ListTournaments(
            tournament_service_pb2.ListTournamentsRequest(page_size=1), metadata=OPERATOR
        )
        assert [t.name for t in listed.tournaments] == [other.name] and listed.next_page_token
        rest = stub.ListTournaments(
            tournament_service_pb2.ListTournamentsRequest(
                page_size=1, page_token=listed.next_page_token
            ),
            metadata=OPERATOR,
        )
        assert [t.name for t in rest.tournaments] == [tournament.name]
        running = stub.ListTournaments(
            tournament_service_pb2.ListTournamentsRequest(
                status=tournament_pb2.TOURNAMENT_STATUS_RUNNING
            ),
            metadata=OPERATOR,
        )
        assert [t.name for t in running.tournaments] == [tournament.name]
        bad_token = tournament_service_pb2.ListTournamentsRequest(
            page_token=listed.next_page_token, status=tournament_pb2.TOURNAMENT_STATUS_COMPLETE
        )
        assert refused(stub.ListTournaments, bad_token, OPERATOR) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_PAGE_TOKEN",
        )
        # A retried start returns the original response and appends nothing.
        before = event_count(database_url)
        replay = stub.StartTournament(start, metadata=OPERATOR).tournament
        assert event_count(database_url) == before and replay.current_round == 1

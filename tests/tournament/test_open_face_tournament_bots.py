"""Tournament bots at an open-face tournament over a real server (issue #18): four bots at two
2-seat ``ofc_turbo`` tables play the round's set with the SDK's open-face bot, every deal and the
tournament verify, and ``sapsam tournament watch``'s picture counts each table's deals credited
and says its set is over (no "n/m", which a Fantasyland deal would overrun)."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import grpc
import psycopg
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from tournament_play import OPERATOR_TOKEN

from sapsam.api.server import RunningServer
from sapsam.app.tables import TableService
from sapsam.audit.database import verify_table_online
from sapsam.audit.tournament_audit import verify_tournament
from sapsam.cli import tournament_bots
from sapsam.cli.tournament_picture import Picture
from sapsam_proto.v1 import (
    table_service_pb2,
    table_service_pb2_grpc,
    tournament_pb2,
    tournament_service_pb2,
    tournament_service_pb2_grpc,
)

OPERATOR = (("authorization", f"Bearer {OPERATOR_TOKEN}"),)
FAR_FUTURE = Timestamp(seconds=4_102_444_800)


def create_turbo_cup(
    stub: tournament_service_pb2_grpc.TournamentServiceStub,
    display_name: str,
    *,
    rounds: int,
    entrants: int,
) -> tournament_pb2.Tournament:
    """An ``ofc_turbo`` tournament of 2-seat tables, two deals a round, open to ``entrants``."""
    return stub.CreateTournament(
        tournament_service_pb2.CreateTournamentRequest(
            request_id=str(uuid.uuid4()),
            display_name=display_name,
            rule_set_preset="ofc_turbo",
            seats_per_table=2,
            rounds=rounds,
            deals_per_round=2,
            registration_close_time=FAR_FUTURE,
            max_entrants=entrants,
        ),
        metadata=OPERATOR,
    ).tournament


def start(
    stub: tournament_service_pb2_grpc.TournamentServiceStub, tournament: tournament_pb2.Tournament
) -> tournament_pb2.Tournament:
    """The tournament as StartTournament answers it (its first round seated)."""
    return stub.StartTournament(
        tournament_service_pb2.StartTournamentRequest(
            request_id="start", tournament=tournament.name
        ),
        metadata=OPERATOR,
    ).tournament


def test_four_bots_play_an_open_face_tournament(server: RunningServer, database_url: str) -> None:
    target = f"127.0.0.1:{server.port}"
    with grpc.insecure_channel(target) as channel:
        stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        tournament = create_turbo_cup(stub, "OFC bots cup", rounds=1, entrants=4)
        bots = tournament_bots.register_bots(target, 4)
        for bot in bots:
            tournament_bots.enter(channel, bot, tournament.name)
        threads = tournament_bots.run_bots(target, bots, tournament.name)
        start(stub, tournament)
        tournament_bots.wait_for(threads, bots, timeout=60)
        final = stub.GetTournament(
            tournament_service_pb2.GetTournamentRequest(name=tournament.name), metadata=OPERATOR
        ).tournament
        picture = Picture(channel, tournament.name, OPERATOR, stuck_after=60)
        lines = picture.read()
        stream = stub.WatchTournament(
            tournament_service_pb2.WatchTournamentRequest(tournament=tournament.name),
            metadata=OPERATOR,
            timeout=30,
        )
        said = [picture.describe(response.event) for response in stream]
    assert final.status == tournament_pb2.TOURNAMENT_STATUS_COMPLETE
    assert all(len(bot.tables_played) == 1 for bot in bots)
    (seated,) = final.seated_rounds
    assert len(seated.tables) == 2
    # A set of two deals at least (one per seat, more after a Fantasyland).
    assert all(table.deals_credited >= 2 for table in seated.tables)
    tournament_id = uuid.UUID(final.name.removeprefix("tournaments/"))
    with psycopg.connect(database_url, autocommit=True) as connection:
        for table in seated.tables:
            assert verify_table_online(
                connection, uuid.UUID(table.table.removeprefix("tables/"))
            ).ok
        report = verify_tournament(connection, tournament_id)
    assert report.holds
    assert report.deals_verified == sum(table.deals_credited for table in seated.tables)
    # The picture: deals credited and the set over, never "n/m".
    assert "one open-face set a table" in lines[0] and "1 round complete" in lines[0]
    ends = [line for line in said if ": set over after deal " in line]
    assert len(ends) == 2 and all(line.endswith("deals credited)") for line in ends), said
    for table, line in zip(seated.tables, lines[1:], strict=True):
        assert f"({table.deals_credited} deals credited, set over;" in line
        assert line.endswith(": done") and "/" not in line.split("(")[1].split(";")[0]


def test_bots_at_tables_whose_seats_are_given_late_play_them(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A round is listed before its tables' seats are given (``ensure_round_tables`` opens each
    table, then seats its players one by one): here each seat is given 0.5 s late, so every bot
    reads its table with its seat still empty. Each waits for it and plays the set, both rounds
    (round 1 seated by StartTournament, round 2 by the results process). A bot that found its
    seat empty used to leave the table, and the set waited for it forever (the ofc_turbo demo
    hung, one run in a few under load, until 51337ff)."""
    join = TableService.join

    async def late_join(self: TableService, *args: Any, **kwargs: Any) -> Any:
        request_id = args[3] if len(args) > 3 else kwargs.get("request_id", "")
        if str(request_id).startswith("tournament-seat/"):
            await asyncio.sleep(0.5)
        return await join(self, *args, **kwargs)

    monkeypatch.setattr(TableService, "join", late_join)
    target = f"127.0.0.1:{server.port}"
    with grpc.insecure_channel(target) as channel:
        stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        tournament = create_turbo_cup(stub, "OFC late seats cup", rounds=2, entrants=4)
        bots = tournament_bots.register_bots(target, 4)
        for bot in bots:
            tournament_bots.enter(channel, bot, tournament.name)
        threads = tournament_bots.run_bots(target, bots, tournament.name)
        start(stub, tournament)
        tournament_bots.wait_for(threads, bots, timeout=90)
        final = stub.GetTournament(
            tournament_service_pb2.GetTournamentRequest(name=tournament.name), metadata=OPERATOR
        ).tournament
    assert final.status == tournament_pb2.TOURNAMENT_STATUS_COMPLETE
    assert all(len(bot.tables_played) == 2 for bot in bots)


def test_open_face_bots_wait_out_a_pause(server: RunningServer, database_url: str) -> None:
    """Paused before the first deal, the table starts none until the operator resumes; then the
    set is played to its end and the tournament verifies."""
    target = f"127.0.0.1:{server.port}"
    with grpc.insecure_channel(target) as channel:
        stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        tournament = create_turbo_cup(stub, "OFC pause cup", rounds=1, entrants=2)
        bots = tournament_bots.register_bots(target, 2)
        for bot in bots:
            tournament_bots.enter(channel, bot, tournament.name)
        started = start(stub, tournament)
        stub.PauseTournament(
            tournament_service_pb2.PauseTournamentRequest(
                request_id=str(uuid.uuid4()), tournament=tournament.name, reason="fire drill"
            ),
            metadata=OPERATOR,
        )
        threads = tournament_bots.run_bots(target, bots, tournament.name)
        table = started.seated_rounds[0].tables[0].table
        tables = table_service_pb2_grpc.TableServiceStub(channel)
        time.sleep(1.5)  # three of the bots' paused tries
        held = tables.GetTable(
            table_service_pb2.GetTableRequest(name=table), metadata=OPERATOR
        ).table
        assert held.deal_number == 0 and all(thread.is_alive() for thread in threads)
        stub.ResumeTournament(
            tournament_service_pb2.ResumeTournamentRequest(
                request_id=str(uuid.uuid4()), tournament=tournament.name
            ),
            metadata=OPERATOR,
        )
        tournament_bots.wait_for(threads, bots, timeout=60)
        final = stub.GetTournament(
            tournament_service_pb2.GetTournamentRequest(name=tournament.name), metadata=OPERATOR
        ).tournament
    assert final.status == tournament_pb2.TOURNAMENT_STATUS_COMPLETE
    assert all(bot.tables_played == [table] for bot in bots)
    with psycopg.connect(database_url, autocommit=True) as connection:
        report = verify_tournament(connection, uuid.UUID(final.name.removeprefix("tournaments/")))
    assert report.holds and report.deals_verified >= 2


def test_re_seating_at_an_open_face_table_is_refused_as_at_a_closed_one(
    server: RunningServer,
) -> None:
    """ReplaceTournamentSeat at an open-face tournament table before its first deal: the same
    clear refusal a closed table gets (it answered INTERNAL: the open-face table has no
    ``deal``), and nothing recorded."""
    target = f"127.0.0.1:{server.port}"
    with grpc.insecure_channel(target) as channel:
        stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        tournament = create_turbo_cup(stub, "OFC re-seat cup", rounds=1, entrants=2)
        bots = tournament_bots.register_bots(target, 3)
        players, newcomer = bots[:2], bots[2]
        for bot in players:
            tournament_bots.enter(channel, bot, tournament.name)
        started = start(stub, tournament)
        seated = started.seated_rounds[0].tables[0]
        stub.ForfeitTournamentPlayer(
            tournament_service_pb2.ForfeitTournamentPlayerRequest(
                request_id=str(uuid.uuid4()),
                tournament=tournament.name,
                player=seated.players[1],
                reason="had to leave",
            ),
            metadata=OPERATOR,
        )
        before = stub.GetTournament(
            tournament_service_pb2.GetTournamentRequest(name=tournament.name), metadata=OPERATOR
        ).tournament
        with pytest.raises(grpc.RpcError) as refused:
            stub.ReplaceTournamentSeat(
                tournament_service_pb2.ReplaceTournamentSeatRequest(
                    request_id=str(uuid.uuid4()),
                    tournament=tournament.name,
                    seat=f"{seated.table}/seats/1",
                    player=newcomer.player,
                ),
                metadata=OPERATOR,
            )
        after = stub.GetTournament(
            tournament_service_pb2.GetTournamentRequest(name=tournament.name), metadata=OPERATOR
        ).tournament
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "re-seated between two deals of the round" in (refused.value.details() or "")
    assert after.version == before.version

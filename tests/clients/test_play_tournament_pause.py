"""Players of a paused tournament are told so, and go on when it resumes: ``sapsam-play`` (on a
pty) and ``sapsam-bot --tournament`` (following its player from round to round) at a
tournament's table, paused by the operator before the first deal; each says "the tournament is
paused (since …); waiting for the operator to resume", then that it resumed, and the deal is
played; the resume is said before the deal it lets start, not under its row prompt. What they
say of a cancellation and a forfeit is :class:`TournamentNotices`' (pure)."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from bot_process import BotProcess, bot_env
from google.protobuf.timestamp_pb2 import Timestamp
from pty_child import pty_child

from sapsam_client import connect
from sapsam_client.tokens import SavedPlayer, save_player
from sapsam_client.tournament_play import TournamentNotices
from sapsam_proto.v1 import tournament_pb2, tournament_service_pb2, tournament_service_pb2_grpc

PAUSED = r"the tournament is paused \(since \d\d:\d\d:\d\d UTC: fire drill\); waiting for the"
PLAY_ENV = {"PYTHONUNBUFFERED": "1", "PATH": "/usr/bin:/bin", "TERM": "dumb"} | (
    {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
)


@pytest.fixture
def tournament_stub(address: str) -> Iterator[tournament_service_pb2_grpc.TournamentServiceStub]:
    with grpc.insecure_channel(address) as channel:
        yield tournament_service_pb2_grpc.TournamentServiceStub(channel)


def test_sapsam_play_and_a_tournament_bot_are_told_of_a_pause_and_go_on(
    address: str,
    tmp_path: Path,
    tournament_stub: tournament_service_pb2_grpc.TournamentServiceStub,
    operator_metadata: tuple[tuple[str, str], ...],
) -> None:
    stub, operator = tournament_stub, operator_metadata
    registered = []
    for name in ("Ann", "Bot"):
        client = connect(address)
        registered.append(client.register(name))
        client.close()
    ann, bot = registered
    created = stub.CreateTournament(
        tournament_service_pb2.CreateTournamentRequest(
            request_id=str(uuid.uuid4()),
            display_name="Pause cup",
            rule_set_preset="pagat",
            seats_per_table=2,
            rounds=1,
            deals_per_round=1,
            registration_close_time=Timestamp(seconds=4_102_444_800),
            max_entrants=4,
        ),
        metadata=operator,
    ).tournament
    for player in (ann, bot):
        stub.RegisterTournamentPlayer(
            tournament_service_pb2.RegisterTournamentPlayerRequest(
                request_id=str(uuid.uuid4()), tournament=created.name, player=player.player
            ),
            metadata=operator,
        )
    started = stub.StartTournament(
        tournament_service_pb2.StartTournamentRequest(
            request_id=str(uuid.uuid4()), tournament=created.name
        ),
        metadata=operator,
    ).tournament
    table = started.seated_rounds[0].tables[0].table
    stub.PauseTournament(
        tournament_service_pb2.PauseTournamentRequest(
            request_id=str(uuid.uuid4()), tournament=created.name, reason="fire drill"
        ),
        metadata=operator,
    )
    token_file = tmp_path / "tokens.json"
    save_player(token_file, address, SavedPlayer(ann.player, ann.display_name, ann.token))
    follower = BotProcess(
        [
            *("--server", address, "--tournament", created.name),
            *("--token", bot.token, "--player", bot.player, "--no-state"),
        ],
        bot_env(tmp_path / "bot"),
    )
    command = [sys.executable, "-m", "sapsam_client.terminal", "--server", address]
    command += ["--table", table, "--token-file", str(token_file)]
    # The tournament read once, at the start, and then not for an hour: the resume must be told
    # when the deal it lets start begins, before the cards and the row prompt (it was told at
    # the next 2-second read, often under the prompt already shown, which it then hid).
    command += ["--tournament-check-seconds", "3600"]
    with pty_child(command, PLAY_ENV) as person:
        screen = person.terminal
        screen.expect(PAUSED, timeout=60)
        follower.wait_for(PAUSED)
        stub.ResumeTournament(
            tournament_service_pb2.ResumeTournamentRequest(
                request_id=str(uuid.uuid4()), tournament=created.name
            ),
            metadata=operator,
        )
        screen.expect("the tournament resumed: play goes on", timeout=60)
        assert "your cards" not in screen.before
        screen.expect(r"front \(3 cards, Enter = suggestion\)> ", timeout=60)
        screen.sendline("")  # the suggestion
        screen.expect(r"Confirm these rows\? ")
        screen.sendline("y")
        screen.expect("the series is over; thanks for playing", timeout=120)
        assert person.exit_code() == 0
    follower.wait_for("the tournament resumed: play goes on")
    follower.wait_for(r"round 1: tables/")
    assert follower.finish() == 0, follower.output()
    follower.wait_for("the tournament is over: this bot played 1 table")


def _view(status: int, **fields: object) -> tournament_pb2.Tournament:
    return tournament_pb2.Tournament(name="tournaments/t", status=status, **fields)  # type: ignore[arg-type]


def test_the_notices_say_each_turn_of_the_tournament_once() -> None:
    notices = TournamentNotices("tournaments/t", "players/ann")
    running = tournament_pb2.TOURNAMENT_STATUS_RUNNING
    paused = tournament_pb2.TOURNAMENT_STATUS_PAUSED
    assert notices.changes(_view(running)) == []  # running, as expected: nothing to say
    at = Timestamp(seconds=1_790_000_000)  # 2026-09-21 14:13:20 UTC
    pause = _view(paused, pause_time=at, status_reason="fire drill")
    assert notices.changes(pause) == [
        "the tournament is paused (since 14:13:20 UTC: fire drill); waiting for the operator"
        " to resume"
    ]
    assert notices.changes(pause) == []  # said once
    assert notices.changes(_view(running)) == ["the tournament resumed: play goes on"]
    forfeited = _view(running, forfeited_players=["players/bob", "players/ann"])
    [out] = notices.changes(forfeited)
    assert out.startswith("you are out of the tournament (forfeited)")
    assert notices.changes(forfeited) == []
    cancelled = _view(tournament_pb2.TOURNAMENT_STATUS_CANCELLED, status_reason="venue closed")
    assert notices.changes(cancelled) == [
        "the tournament was cancelled (venue closed): its standings as they stood are final,"
        " and no deal played from now on counts"
    ]
    assert notices.changes(cancelled) == []
    # Cancelled during a pause: the cancellation, not a resume.
    other = TournamentNotices("tournaments/t", "players/ann")
    other.changes(pause)
    [said] = other.changes(cancelled)
    assert said.startswith("the tournament was cancelled")
    # Another player's forfeit is not this player's.
    assert TournamentNotices("tournaments/t", "players/cy").changes(forfeited) == []

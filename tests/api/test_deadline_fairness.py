"""An outage does not change scores: a server SIGKILLed across a reveal deadline, restarted after
the deadline passed, extends the deadline (an event in the log, with its reason) instead of
fouling the seat that could not reveal while no server served; the seat then reveals, and the
deal verifies offline, extension included."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_client import OPERATOR_TOKEN, Api, Player
from test_two_processes import free_port, serve_command

from sapsam import fairness
from sapsam.cli import main
from sapsam.domain.events import DeadlinesExtended, DealScored, SeatTimedOut
from sapsam.rules.cards import parse_cards
from sapsam.rules.solver import solve
from sapsam_proto.v1 import rule_set_pb2, table_pb2, table_service_pb2

REVEAL_SECONDS = 2
GRACE_SECONDS = 60


class Server:
    """A `sapsam serve` process with a given deadline grace."""

    def __init__(self, database_url: str) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            serve_command(
                database_url,
                self.port,
                "--deadline-grace-seconds",
                str(GRACE_SECONDS),
            ),
            env={**os.environ, "SAPSAM_OPERATOR_TOKEN": OPERATOR_TOKEN},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def api(self, database_url: str) -> Api:
        import grpc

        channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        grpc.channel_ready_future(channel).result(timeout=60)
        return Api(channel, database_url)

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: nothing is stopped gracefully, no heartbeat is written
        self.process.wait()


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        if server.process.poll() is None:
            server.kill()


def request() -> str:
    return str(uuid.uuid4())


def wait_for(condition, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.2)


def test_a_deadline_that_fell_while_no_server_served_is_extended(
    database_url: str,
    servers: list[Server],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = Server(database_url)
    servers.append(first)
    api = first.api(database_url)
    creator = api.register("creator")
    table = api.call(
        "CreateTable",
        table_service_pb2.CreateTableRequest(
            request_id=request(),
            seat_count=2,
            series_length=1,
            rule_set=rule_set_pb2.RuleSet(reveal_seconds=REVEAL_SECONDS),
        ),
        creator.token,
    ).table.name
    table_id = uuid.UUID(table.removeprefix("tables/"))
    players: list[Player] = []
    for name in ("ann", "bob"):
        player = api.register(name)
        player.seat = api.call(
            "JoinTable",
            table_service_pb2.JoinTableRequest(request_id=request(), table=table),
            player.token,
        ).seat
        players.append(player)
    api.call(
        "ChooseDealer",
        table_service_pb2.ChooseDealerRequest(request_id=request(), table=table),
        players[0].token,
    )
    api.call(
        "StartDeal",
        table_service_pb2.StartDealRequest(request_id=request(), table=table),
        players[0].token,
    )
    cutter_seat = api.call(
        "GetTable", table_service_pb2.GetTableRequest(name=table), players[0].token
    ).table.cutter_seat
    cutter = next(player for player in players if player.seat == cutter_seat)
    api.call(
        "CutDeck",
        table_service_pb2.CutDeckRequest(request_id=request(), seat=cutter.seat, position=13),
        cutter.token,
    )
    chosen = {}
    for player in players:
        cards = parse_cards(
            list(
                api.call(
                    "GetMyHand", table_service_pb2.GetMyHandRequest(seat=player.seat), player.token
                ).cards
            )
        )
        arrangement, nonce = solve(cards), os.urandom(16)
        chosen[player.seat] = (arrangement, nonce)
        commitment = fairness.arrangement_commitment(
            table_id, 1, player.position, arrangement, nonce
        )
        api.call(
            "CommitArrangement",
            table_service_pb2.CommitArrangementRequest(
                request_id=request(), seat=player.seat, commitment=commitment
            ),
            player.token,
        )
    for player in players:
        api.call(
            "ConfirmArrangement",
            table_service_pb2.ConfirmArrangementRequest(request_id=request(), seat=player.seat),
            player.token,
        )

    def reveal(through: Api, player: Player) -> None:
        arrangement, nonce = chosen[player.seat]
        through.call(
            "RevealArrangement",
            table_service_pb2.RevealArrangementRequest(
                request_id=request(),
                seat=player.seat,
                arrangement=table_pb2.Arrangement(
                    front=[str(card) for card in arrangement.front],
                    middle=[str(card) for card in arrangement.middle],
                    back=[str(card) for card in arrangement.back],
                ),
                nonce=nonce,
            ),
            player.token,
        )

    # Ann reveals; bob has confirmed and would reveal next, but the server dies.
    reveal(api, players[0])
    deadline = api.call(
        "GetTable", table_service_pb2.GetTableRequest(name=table), players[0].token
    ).table.deadline_time.ToMilliseconds()
    first.kill()
    # No server serves while bob's reveal deadline passes.
    wait_for(lambda: time.time() * 1000 > deadline + 1_000)
    second = Server(database_url)
    servers.append(second)
    api = second.api(database_url)
    # The restarted server's sweeper extends the deadline instead of fouling bob.
    wait_for(lambda: any(isinstance(e, DeadlinesExtended) for e in api.logged_events(table)))
    events = api.logged_events(table)
    assert not any(isinstance(event, SeatTimedOut) for event in events)
    (extended,) = [event for event in events if isinstance(event, DeadlinesExtended)]
    assert extended.reason == "server_restart" and extended.stage == "revealing"
    assert extended.seats == (players[1].position,)
    assert extended.previous_deadline_ms == deadline
    assert extended.unserved_from_ms <= deadline < extended.unserved_until_ms
    assert extended.deadline_ms == extended.unserved_until_ms + GRACE_SECONDS * 1000
    # Bob reveals within the grace: the deal is scored on both hands, neither fouled.
    reveal(api, players[1])
    events = api.logged_events(table)
    (scored,) = [event for event in events if isinstance(event, DealScored)]
    assert scored.fouls == (False, False)
    assert not any(isinstance(event, SeatTimedOut) for event in events)
    # The deal, extension included, exports and verifies offline (all its checks hold; no key is
    # pinned here, so the verdict is INTERNALLY CONSISTENT ONLY: exit 4).
    export = tmp_path / "deal.json"
    arguments = ["--database-url", database_url]
    assert main(["audit", "export", "--table", str(table_id), "-o", str(export), *arguments]) == 0
    assert main(["audit", "verify", str(export)]) == 4
    capsys.readouterr()
    assert main(["audit", "replay", str(export)]) == 0
    told = capsys.readouterr().out
    assert "the revealing deadline was extended by" in told
    assert "it fell while no server was serving (server restart)" in told

"""A paused tournament's tables are held, not stuck: past their deadline they are listed apart
(GetStuckTables' ``held``, "held: tournament paused" in ``sapsam tables stuck``) and the health
detail ``sapsam.tables.stuck`` never alerts on them; resumed, the same table is stuck again.
Over a real server, its stuck-table check running every 0.2 s."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from test_tournament_api import OPERATOR, create
from test_tournament_cli import sapsam
from test_tournament_control_api import enter_all, pause, resume, start
from tournament_play import OPERATOR_TOKEN, Services

from sapsam.api.server import RunningServer, ServerConfig, start_server
from sapsam.api.stuck_tables_health import STUCK_HEALTH_NAME
from sapsam.audit.sample_play import start_and_deal
from sapsam.cli import tournament_bots
from sapsam.cli.bootstrap import build_services
from sapsam_proto.v1 import (
    operator_service_pb2,
    operator_service_pb2_grpc,
    tournament_service_pb2_grpc,
)

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@pytest.fixture
def checking_server(database_url: str) -> Iterator[RunningServer]:
    running = start_server(
        ServerConfig(listen="127.0.0.1:0", operator_token=OPERATOR_TOKEN, grace_seconds=2),
        build_services(database_url, pool_size=12, stuck_check_seconds=0.2),
    )
    yield running
    running.stop()


def _health_becomes(channel: grpc.Channel, expected: int) -> None:
    """Wait for the stuck-table check (every 0.2 s) to report ``expected``."""
    stub = health_pb2_grpc.HealthStub(channel)
    give_up = time.monotonic() + 20
    status = None
    while time.monotonic() < give_up:
        try:
            status = stub.Check(health_pb2.HealthCheckRequest(service=STUCK_HEALTH_NAME)).status
        except grpc.RpcError:
            status = None  # not reported yet
        if status == expected:
            return
        time.sleep(0.05)
    raise AssertionError(f"{STUCK_HEALTH_NAME} stayed {status}, not {expected}")


async def test_a_paused_tournaments_table_is_held_not_stuck(
    checking_server: RunningServer, services: Services
) -> None:
    target = f"127.0.0.1:{checking_server.port}"
    url = services.database_url
    with grpc.insecure_channel(target) as channel:
        stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        operator = operator_service_pb2_grpc.OperatorServiceStub(channel)
        bots = tournament_bots.register_bots(target, 2)
        tournament = create(stub, seats_per_table=2, rounds=2, deals_per_round=1).name
        enter_all(stub, tournament, bots)
        table = start(stub, tournament).seated_rounds[0].tables[0].table
        await start_and_deal(services.tables, uuid.UUID(table.removeprefix("tables/")), 1)
        # As if its arranging deadline had passed an hour ago with nobody timing it out (the
        # read model's deadline moved back; the log's, 90 s ahead, keeps the sweeper away).
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(
                "UPDATE table_state SET deadline_ms = deadline_ms - 3600000 WHERE table_id = %s",
                [table.removeprefix("tables/")],
            )

        def stuck() -> operator_service_pb2.GetStuckTablesResponse:
            request = operator_service_pb2.GetStuckTablesRequest()
            return operator.GetStuckTables(request, metadata=OPERATOR)

        _health_becomes(channel, NOT_SERVING)
        found = stuck()
        assert [line.table for line in found.tables] == [table] and not found.held
        assert found.tables[0].held == ""
        # Paused: the same table, as late, is held. The alert ends; the list says why.
        stub.PauseTournament(pause(stub, tournament, "lunch"), metadata=OPERATOR)
        _health_becomes(channel, SERVING)
        found = stuck()
        assert not found.tables and [line.table for line in found.held] == [table]
        assert found.held[0].held == "tournament paused" and found.held[0].past_deadline
        cli = sapsam("tables", "stuck", "--database-url", url)
        assert cli.returncode == 0, cli.stderr
        assert cli.stdout.startswith("no stuck tables\n")
        assert f"held     {table}  ARRANGING" in cli.stdout
        assert "(held: tournament paused)" in cli.stdout and "overdue " not in cli.stdout
        # Waiting longer than 1 s: a fast run gets here within a second of the deal (seen: the
        # "waiting" line missing from a run of the whole suite on an idle machine).
        time.sleep(1.1)
        waited = sapsam(
            "tables", "stuck", "--waiting-longer-than", "1", "--json", "--database-url", url
        )
        listed = json.loads(waited.stdout)
        assert listed["overdue"] == [] and listed["waiting"] == []
        assert {(line["kind"], line["held"]) for line in listed["held"]} == {
            ("overdue", "tournament paused"),
            ("waiting", "tournament paused"),
        }
        # Resumed: nothing holds it any more, and it is stuck again.
        stub.ResumeTournament(resume(tournament), metadata=OPERATOR)
        _health_becomes(channel, NOT_SERVING)
        found = stuck()
        assert [line.table for line in found.tables] == [table] and not found.held

"""`sapsam serve --read-database-url`: the reads that may lag go to a streaming standby while it
is at most `--read-max-lag-seconds` behind, and to the primary otherwise (sapsam.store.
standby_reads). A real primary and standby (initdb, pg_basebackup -R: cluster/postgres.py)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import psycopg
import pytest
from api_client import Api, bearer
from grpc_health.v1 import health_pb2, health_pb2_grpc
from test_metrics_endpoint import scrape, value
from test_two_processes import free_port

from cluster.postgres import ReplicatedPostgres
from sapsam_proto.v1 import (
    table_service_pb2,
    tournament_service_pb2,
    tournament_service_pb2_grpc,
)

MAX_LAG = 3.0


def serve(database_url: str, folder: Path, *options: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable, "-m", "sapsam.cli", "serve", "--database-url", database_url,
            "--listen", f"127.0.0.1:{port}", "--data-dir", str(folder / "data"),
            "--grace-seconds", "0.5", "--log-format", "json", *options,
        ],
        stdout=subprocess.DEVNULL,
        stderr=(folder / "server.log").open("ab"),
    )  # fmt: skip
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (folder / "server.log").read_text()[-2000:]
            try:
                if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return process, port
            except grpc.RpcError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def replicated() -> Iterator[ReplicatedPostgres]:
    # Not under pytest's own folder (mode 0700): as root the servers run as the postgres user.
    folder = Path(tempfile.mkdtemp(prefix="sapsam-standby-test-"))
    folder.chmod(0o755)
    servers = ReplicatedPostgres.planned(folder / "postgres")
    try:
        servers.create()
        yield servers
    finally:
        servers.destroy()
        shutil.rmtree(folder, ignore_errors=True)


def create_table(api: Api, token: str) -> str:
    request = table_service_pb2.CreateTableRequest(
        request_id=str(uuid.uuid4()), rule_set_preset="pagat", seat_count=2, series_length=1
    )
    return str(api.call("CreateTable", request, token).table.name)


def listed(api: Api, token: str) -> set[str]:
    answer = api.call("ListTables", table_service_pb2.ListTablesRequest(page_size=100), token)
    return {table.name for table in answer.tables}


def test_lists_read_the_standby_within_the_bound_and_the_primary_past_it(
    replicated: ReplicatedPostgres, tmp_path: Path
) -> None:
    primary, standby = replicated.primary.url(), replicated.standby.url()
    metrics_port = free_port()
    process, port = serve(
        primary,
        tmp_path,
        "--read-database-url",
        standby,
        "--read-max-lag-seconds",
        str(MAX_LAG),
        "--metrics-listen",
        f"127.0.0.1:{metrics_port}",
    )
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            api = Api(channel, primary)
            token = api.register("lister").token
            first = create_table(api, token)
            deadline = time.monotonic() + 20
            while first not in listed(api, token):
                assert time.monotonic() < deadline
                time.sleep(0.1)
            # A leaderboard is a read that may lag too: it goes to the standby once the server
            # has measured it current.
            while True:
                before = scrape(metrics_port)
                lag = value(before, "sapsam_standby_lag_seconds")
                if lag is not None and lag < 1.0:
                    break
                assert time.monotonic() < deadline, f"the standby's lag: {lag}"
                time.sleep(0.1)
            tournaments = tournament_service_pb2_grpc.TournamentServiceStub(channel)
            board = tournaments.GetLeaderboard(
                tournament_service_pb2.GetLeaderboardRequest(), metadata=bearer(token)
            )
            assert list(board.entries) == []
            after = scrape(metrics_port)
            on_standby = [
                value(samples, "sapsam_lagging_reads_total", database="standby") or 0
                for samples in (before, after)
            ]
            assert on_standby[1] - on_standby[0] >= 1
            with psycopg.connect(standby, autocommit=True) as connection:
                connection.execute("SELECT pg_wal_replay_pause()")
                paused_at = time.monotonic()
                second = create_table(api, token)
                acknowledged = time.monotonic()
                # The table is there: every command and GetTable read the primary.
                got = api.call("GetTable", table_service_pb2.GetTableRequest(name=second), token)
                assert got.table.name == second
                answers: list[tuple[float, bool]] = []
                while time.monotonic() < acknowledged + MAX_LAG + 1.0:
                    began = time.monotonic()
                    answers.append((began, second in listed(api, token)))
                    time.sleep(0.1)
                # Scraped while still paused: once resumed, the next measurement (every 0.5 s)
                # finds the standby current again, and a scrape after it saw a lag near 0.
                samples = scrape(metrics_port)
                connection.execute("SELECT pg_wal_replay_resume()")
            # The standby dies: the lists go to the primary at the next measurement.
            replicated.standby.stop("immediate")
            stopped = time.monotonic()
            while value(scrape(metrics_port), "sapsam_standby_lag_seconds") is not None:
                assert time.monotonic() - stopped < 5, "the dead standby still had the reads"
                time.sleep(0.1)
            assert second in listed(api, token)
    finally:
        stop(process)
    # Within the bound the list came from the paused standby: the new table was missing ...
    assert any(not found for began, found in answers if began < paused_at + MAX_LAG)
    # ... and once the standby was further behind than the bound, the primary answered.
    late = [found for began, found in answers if began > acknowledged + MAX_LAG]
    assert late and all(late)
    # The metrics say where the reads went, and how far behind the paused standby was.
    assert value(samples, "sapsam_lagging_reads_total", database="standby")
    assert value(samples, "sapsam_lagging_reads_total", database="primary")
    lag = value(samples, "sapsam_standby_lag_seconds")
    assert lag is not None and lag > MAX_LAG


def test_a_standby_out_of_reach_sends_the_reads_to_the_primary(
    database_url: str, tmp_path: Path
) -> None:
    nowhere = f"postgresql://postgres@127.0.0.1:{free_port()}/sapsam?connect_timeout=1"
    process, port = serve(database_url, tmp_path, "--read-database-url", nowhere)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            api = Api(channel, database_url)
            token = api.register("lister").token
            table = create_table(api, token)
            assert table in listed(api, token)
    finally:
        stop(process)


def test_a_read_url_without_a_database_url_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sapsam.cli", "serve", "--read-database-url", "postgresql://x/y"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "SAPSAM_DATA_DIR": str(tmp_path)},
        timeout=60,
    )
    assert done.returncode == 2
    assert "--read-database-url needs --database-url" in done.stderr

"""`sapsam serve --metrics-listen`: a real server process, configured by its environment alone
(as deploy/ runs it), scraped over HTTP while it serves calls and a stream."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from api_client import OPERATOR_TOKEN, Api, Watcher, bearer
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families
from test_two_processes import free_port

from sapsam.api.metrics_endpoint import METRIC_NAMES, STANDBY_METRIC_NAMES
from sapsam.app.store_interface import DEADLINES_PROCESS, RESULTS_PROCESS
from sapsam_proto.v1 import (
    operator_service_pb2,
    operator_service_pb2_grpc,
    table_service_pb2,
)

TABLES = "/sapsam.v1.TableService/"
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> Samples:
    """Every sample of the endpoint, by name and sorted labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        assert answer.status == 200
        text = answer.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def names(samples: Samples) -> set[str]:
    found = {name for name, _ in samples}
    for suffix in ("_bucket", "_sum", "_count"):
        found |= {name.removesuffix(suffix) for name in found if name.endswith(suffix)}
    return found


@pytest.fixture
def served(database_url: str, tmp_path: Path) -> Iterator[tuple[int, int]]:
    """A `sapsam serve` given no flag at all: every setting from the environment."""
    port, metrics_port = free_port(), free_port()
    token_file = tmp_path / "operator-token"
    token_file.write_text(OPERATOR_TOKEN + "\n", encoding="utf-8")
    environment = {
        **os.environ,
        "DATABASE_URL": database_url,
        "SAPSAM_LISTEN": f"127.0.0.1:{port}",
        "SAPSAM_METRICS_LISTEN": f"127.0.0.1:{metrics_port}",
        "SAPSAM_OPERATOR_TOKEN_FILE": str(token_file),
        "SAPSAM_DATA_DIR": str(tmp_path / "data"),
        "SAPSAM_GRACE_SECONDS": "0.5",
        "SAPSAM_LOG_FORMAT": "json",
    }
    environment.pop("SAPSAM_OPERATOR_TOKEN", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "sapsam.cli", "serve"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, "the server exited"
                try:
                    if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                        break
                except grpc.RpcError:
                    pass
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        yield port, metrics_port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            assert process.wait(60) == 0
        finally:
            if process.poll() is None:
                process.kill()


def test_a_scrape_shows_the_calls_streams_pool_appends_and_database_gauges(
    served: tuple[int, int], database_url: str
) -> None:
    port, metrics_port = served
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        api = Api(channel, database_url)
        table, players = api.seated_table(2, "pagat")
        watcher = Watcher(api, table, players[0].token)
        watcher.wait_for(lambda: len(watcher.messages) > 0)
        # A refused call: counted under its status.
        with pytest.raises(grpc.RpcError) as refused:
            api.call("GetTable", table_service_pb2.GetTableRequest(name="nonsense"), "")
        refused_status = refused.value.code().name
        # The operator's token came from SAPSAM_OPERATOR_TOKEN_FILE.
        operator = operator_service_pb2_grpc.OperatorServiceStub(channel)
        operator.GetStuckTables(
            operator_service_pb2.GetStuckTablesRequest(), metadata=bearer(OPERATOR_TOKEN)
        )
        samples = scrape(metrics_port)
        assert value(samples, "sapsam_open_streams", method=TABLES + "WatchTable") == 1
        watcher.cancel()
        appended_events = api.event_count()

    registered = {"method": "/sapsam.v1.PlayerService/RegisterPlayer", "status": "OK"}
    assert value(samples, "sapsam_rpc_calls_total", **registered) == 3  # creator, 2 players
    assert value(samples, "sapsam_rpc_duration_seconds_count", **registered) == 3
    assert value(samples, "sapsam_rpc_duration_seconds_bucket", **registered, le="+Inf") == 3
    assert (value(samples, "sapsam_rpc_duration_seconds_sum", **registered) or 0) > 0
    assert value(samples, "sapsam_rpc_calls_total", method=TABLES + "JoinTable", status="OK") == 2
    refused_labels = {"method": TABLES + "GetTable", "status": refused_status}
    assert value(samples, "sapsam_rpc_calls_total", **refused_labels) == 1
    operator_labels = {"method": "/sapsam.v1.OperatorService/GetStuckTables", "status": "OK"}
    assert value(samples, "sapsam_rpc_calls_total", **operator_labels) == 1
    assert value(samples, "sapsam_events_appended_total") == appended_events
    assert (value(samples, "sapsam_appends_total") or 0) >= 4  # create, 2 joins, dealer
    assert value(samples, "sapsam_database_up") == 1
    assert value(samples, "sapsam_pool_max_connections") == 16
    assert value(samples, "sapsam_pool_connections", state="in_use") is not None

    # The stream's end (the server hears of the cancel after the client let go: waited for, as a
    # scrape that found every name at once could come before it), and the gauges read in the
    # background (the database's, the stuck tables', the checkpoint's once one is signed): every
    # exported name shows up.
    # (The standby's come with --read-database-url alone: tests/api/test_standby_reads.py.)
    exported = set(METRIC_NAMES) - set(STANDBY_METRIC_NAMES)
    watched = {"method": TABLES + "WatchTable", "status": "CANCELLED"}
    deadline = time.monotonic() + 60
    while True:
        samples = scrape(metrics_port)
        stream_ended = (
            value(samples, "sapsam_rpc_calls_total", **watched) is not None
            and value(samples, "sapsam_open_streams", method=TABLES + "WatchTable") == 0
        )
        if names(samples) >= exported and stream_ended:
            assert not names(samples) & set(STANDBY_METRIC_NAMES)
            break
        missing = exported - names(samples)
        assert time.monotonic() < deadline, f"never exported: {sorted(missing)}, {stream_ended=}"
        time.sleep(0.5)
    assert value(samples, "sapsam_open_streams", method=TABLES + "WatchTable") == 0
    assert value(samples, "sapsam_rpc_calls_total", **watched) == 1
    assert value(samples, "sapsam_stuck_tables") == 0
    assert value(samples, "sapsam_deadlines_overdue") == 0
    assert (value(samples, "sapsam_log_position") or 0) >= appended_events
    assert (value(samples, "sapsam_checkpoint_lag_events") or 0) >= 0
    for process in (DEADLINES_PROCESS, RESULTS_PROCESS):
        assert value(samples, "sapsam_background_failing_tables", process=process) == 0


def test_metrics_with_workers_are_refused(database_url: str) -> None:
    listen = f"127.0.0.1:{free_port()}"
    serve = [sys.executable, "-m", "sapsam.cli", "serve", "--workers", "2", "--listen", listen]
    done = subprocess.run(
        [*serve, "--metrics-listen", "127.0.0.1:9", "--database-url", database_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--metrics-listen serves one process's metrics" in done.stderr


def test_ready_and_live_answer_over_http_what_the_health_service_answers(
    served: tuple[int, int],
) -> None:
    """A health checker that speaks HTTP only (HAProxy 2.6: cluster/haproxy.py) asks /ready."""
    _, metrics_port = served
    for path in ("/ready", "/live"):
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}{path}", timeout=10) as answer:
            assert (answer.status, answer.read()) == (200, b"SERVING\n")

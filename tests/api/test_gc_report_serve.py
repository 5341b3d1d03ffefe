"""`sapsam serve --gc-report DIR`: a serving process logs its collector's pauses, and collects
the young generations by count while it serves (sapsam.api.collector, sapsam.api.gc_pauses)."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from test_two_processes import free_port, serve_command


def test_a_serving_process_logs_its_collections_to_the_report_folder(
    database_url: str, tmp_path: Path
) -> None:
    port = free_port()
    process = subprocess.Popen(
        serve_command(database_url, port, "--gc-report", str(tmp_path)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            deadline = time.monotonic() + 60
            served = 0
            while served < 2000:  # enough calls for young collections (10,000 objects each)
                assert process.poll() is None, "the server exited"
                assert time.monotonic() < deadline, "no young collection was logged"
                try:
                    health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    served += 1
                except grpc.RpcError:
                    time.sleep(0.1)  # not serving yet
        time.sleep(1.5)  # the report is appended once a second
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
    pauses = [
        json.loads(line)
        for path in tmp_path.glob("gc-*.jsonl")
        for line in path.read_text().splitlines()
    ]
    assert pauses, "no collection was logged"
    assert {pause["generation"] for pause in pauses} <= {0, 1}  # no full collection by count
    assert all(pause["wall_ms"] >= 0 and pause["cpu_ms"] >= 0 for pause in pauses)

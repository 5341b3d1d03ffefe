"""`sapsam serve --log-format`: a real server process writes its log as one JSON object a line
(time, level, logger, message and a call's fields; the default when stderr is not a terminal) or
as lines for a person (`text`)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import grpc
from api_client import OPERATOR_TOKEN
from grpc_health.v1 import health_pb2, health_pb2_grpc
from test_two_processes import free_port, serve_command

from sapsam_client import connect

TEXT_LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR|CRITICAL) +\[\d+\] \S+: "
)


def _serve_and_register(database_url: str, data_dir: Path, *options: str) -> str:
    """Start `sapsam serve`, register a player through it, stop it; its stderr."""
    port = free_port()
    with tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(
            serve_command(database_url, port, "--grace-seconds", "0.5", *options),
            env={
                **os.environ,
                "SAPSAM_OPERATOR_TOKEN": OPERATOR_TOKEN,
                "SAPSAM_DATA_DIR": str(data_dir),
            },
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                health = health_pb2_grpc.HealthStub(channel)
                deadline = time.monotonic() + 60
                while True:
                    assert process.poll() is None, "the server exited"
                    try:
                        answer = health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                        if answer.status == health_pb2.HealthCheckResponse.SERVING:
                            break
                    except grpc.RpcError:
                        pass
                    assert time.monotonic() < deadline, "the server did not start"
                    time.sleep(0.1)
            client = connect(f"127.0.0.1:{port}")
            client.register("Ann")
            client.close()
            process.send_signal(signal.SIGTERM)
            assert process.wait(60) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        stderr.seek(0)
        return stderr.read()


def test_json_is_one_object_a_line_with_the_call_fields_and_the_default_off_a_terminal(
    database_url: str, tmp_path: Path
) -> None:
    for options in ((), ("--log-format", "json")):
        log = _serve_and_register(database_url, tmp_path, *options)
        lines = [json.loads(line) for line in log.splitlines() if line.strip()]
        assert lines, log
        for line in lines:
            assert list(line)[:4] == ["time", "level", "logger", "message"], line
            assert isinstance(line["pid"], int)
        calls = [line for line in lines if line["logger"] == "sapsam.api.calls"]
        registered = [line for line in calls if line["method"].endswith("/RegisterPlayer")]
        assert len(registered) == 1, calls
        call = registered[0]
        assert call["level"] == "INFO" and call["status"] == "OK"
        assert call["message"] == f"{call['method']} OK"
        assert {"table", "seat", "duration_ms"} <= set(call)
        assert any(line["logger"] != "sapsam.api.calls" for line in lines)  # start-up, stop


def test_text_is_a_line_for_a_person(database_url: str, tmp_path: Path) -> None:
    log = _serve_and_register(database_url, tmp_path, "--log-format", "text")
    lines = [line for line in log.splitlines() if line.strip()]
    assert lines and all(TEXT_LINE.match(line) for line in lines), log
    registered = [line for line in lines if "/RegisterPlayer OK " in line]
    assert len(registered) == 1, log
    assert re.search(r"INFO +\[\d+\] sapsam\.api\.calls: \S+/RegisterPlayer OK \d+\.\d ms$",
                     registered[0])  # fmt: skip
    assert not any(line.lstrip().startswith("{") for line in lines)


def test_an_unknown_log_format_is_refused_before_anything_starts(database_url: str) -> None:
    completed = subprocess.run(
        serve_command(database_url, free_port(), "--log-format", "xml"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert "--log-format" in completed.stderr and "'text'" in completed.stderr

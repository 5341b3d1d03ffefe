"""`sapsam-bot` as processes against a real server, a TLS connection through the SDK, and the
client package working without the server package installed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sapsam.api.server import ServerConfig, start_server
from sapsam.cli.bootstrap import build_services
from sapsam_client import Seat, connect, solver_arranger
from sapsam_proto.v1 import table_pb2

BOT = [sys.executable, "-m", "sapsam_client.bot"]


def test_bot_processes_join_a_table_and_play_its_series(address: str) -> None:
    host = connect(address)
    host.register("host")
    table = host.create_table(2, series_length=3).name
    bots = [
        subprocess.Popen(
            [*BOT, "--server", address, "--table", table, "--strategy", strategy, "--seed", "5"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for strategy in ("solver", "random")
    ]
    outputs = [bot.communicate(timeout=120)[0] for bot in bots]
    assert [bot.returncode for bot in bots] == [0, 0], outputs
    for output in outputs:
        deals = re.findall(r"^tables/\S+/seats/(\d): deal (\d) ([+-]\d+)", output, re.MULTILINE)
        assert [int(deal) for _, deal, _ in deals] == [1, 2, 3]
        assert "standings:" in output
    final = host.get_table(table)
    assert final.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    assert sorted(seat.display_name for seat in final.seats) == ["bot", "bot"]


def test_a_bot_creates_a_table_and_fills_it(address: str) -> None:
    completed = subprocess.run(
        [
            *BOT,
            *("--server", address, "--create", "--seat-count", "3", "--seats-here", "3"),
            *("--deals", "2", "--strategy", "random", "--seed", "1", "--preset", "two_four"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    table = re.search(r"^table: (tables/\S+)$", completed.stdout, re.MULTILINE)
    assert table is not None
    standings = completed.stdout.split("standings:", 1)[1].strip().splitlines()
    assert len(standings) == 3
    assert sum(int(line.split()[-1]) for line in standings) == 0
    listed = connect(address)
    listed.register("reader")
    done = listed.get_table(table.group(1))
    assert done.status == table_pb2.TABLE_STATUS_COMPLETED
    assert done.rule_set.name == "pagat_two_four"  # the version-1 name is an alias


def test_the_client_runs_without_the_server_package(tmp_path: Path) -> None:
    # A `sapsam` package that refuses to import stands in front of the real one.
    shadow = tmp_path / "shadow" / "sapsam"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('the server is not installed')\n")
    environment = {**os.environ, "PYTHONPATH": str(shadow.parent)}
    probe = (
        "import uuid, sapsam_client\n"
        "from sapsam_client import Rows, arrangement_commitment, connect, SapsamError\n"
        "from sapsam_client.rules import rules_available\n"
        "rows = Rows.of('2s 2h Ad'.split(), '7c 7d 9s 5h 3d'.split(), 'Tc Jc Qc Kc Ac'.split())\n"
        "digest = arrangement_commitment(uuid.UUID('5a9c7e3e-1f2b-4c8d-9e0f-112233445566'), 2, 0,"
        " rows, bytes(16))\n"
        "print(digest.hex(), rules_available())\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], env=environment, capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == [
        "c6d42de35bd04e3683928a0b63338e12a592854189700f567fe94a5702485454",
        "False",
    ]
    # The bot needs the rules for its strategies, and says how to get them.
    bot = subprocess.run(
        [*BOT, "--table", "tables/5a9c7e3e-1f2b-4c8d-9e0f-112233445566"],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bot.returncode == 2
    assert "pip install 'sapsam-client[rules]'" in bot.stderr


def test_the_sdk_plays_over_tls(database_url: str, tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    running = start_server(
        ServerConfig(listen="127.0.0.1:0", tls_cert=cert, tls_key=key, grace_seconds=1),
        build_services(database_url, pool_size=4),
    )
    try:
        target = f"localhost:{running.port}"
        clients = [connect(target, root_certificates=cert) for _ in range(2)]
        for index, client in enumerate(clients):
            client.register(f"tls {index}")
        table = clients[0].create_table(2, series_length=1)
        seats: list[Seat] = [client.join_table(table.name) for client in clients]
        threads = [
            threading.Thread(target=seat.play_series, args=(solver_arranger,)) for seat in seats
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert clients[1].get_table(table.name).phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE
    finally:
        running.stop()

"""`make cluster`'s configuration, without starting it (cluster/; the topology under load is
`make cluster-test`): HAProxy's configuration checks the replicas' /ready over HTTP/1.1 and sends
calls over HTTP/2; the replicas' database URLs follow a promotion (libpq's
target_session_attrs); the Makefile and docs/operations.md say how to run both."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from cluster.haproxy import Backend, haproxy_config
from cluster.topology import Cluster
from sapsam.api.metrics_endpoint import READY_PATH

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = [Backend("sapsam1", 50061, 9471, 8081), Backend("sapsam2", 50062, 9472, 8082)]


def test_haproxy_speaks_http2_both_ways_and_checks_ready_over_http1() -> None:
    text = haproxy_config(50051, BACKENDS, "/tmp/haproxy.sock")
    assert "bind 127.0.0.1:50051 proto h2" in text
    assert f"option httpchk GET {READY_PATH}" in text
    assert "http-check expect status 200" in text
    for backend in BACKENDS:
        line = (
            f"server {backend.name} 127.0.0.1:{backend.grpc_port} proto h2"
            f" check check-proto h1 port {backend.metrics_port}"
        )
        assert line in text
    # A call that reached no replica, or got no answer, goes to another; no timeout ends a stream.
    assert "retry-on conn-failure empty-response" in text and "option redispatch" in text
    assert "timeout server 1h" in text and "timeout client 1h" in text


def test_browsers_frontend_passes_http1_to_each_replicas_http_port() -> None:
    """Connect and gRPC-web (SAPSAM_HTTP): HTTP/1.1 on both sides, checked by the same /ready."""
    assert "frontend http" not in haproxy_config(50051, BACKENDS)
    text = haproxy_config(50051, BACKENDS, http_listen_port=8080)
    http = text[text.index("frontend http") :]
    assert "bind 127.0.0.1:8080\n" in http and "proto h2" not in http
    assert f"option httpchk GET {READY_PATH}" in http
    for backend in BACKENDS:
        line = (
            f"server {backend.name} 127.0.0.1:{backend.http_port} check port {backend.metrics_port}"
        )
        assert line in http
    with pytest.raises(ValueError, match="HTTP port"):
        haproxy_config(50051, [Backend("sapsam1", 50061, 9471)], http_listen_port=8080)


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed")
def test_haproxy_accepts_the_configuration(tmp_path: Path) -> None:
    path = tmp_path / "haproxy.cfg"
    path.write_text(
        haproxy_config(50051, BACKENDS, str(tmp_path / "haproxy.sock"), http_listen_port=8080)
    )
    done = subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[WARNING]" not in done.stdout + done.stderr


def test_haproxy_needs_a_replica() -> None:
    with pytest.raises(ValueError, match="at least one replica"):
        haproxy_config(50051, [])


def test_the_replicas_write_where_writes_are_taken_and_read_the_standby_first(
    tmp_path: Path,
) -> None:
    cluster = Cluster(tmp_path / "cluster")  # planned only: nothing starts
    primary, standby = cluster.postgres.primary.port, cluster.postgres.standby.port
    writes = conninfo_to_dict(cluster.database_url)
    assert writes["host"] == "127.0.0.1,127.0.0.1"
    assert writes["port"] == f"{primary},{standby}"
    assert writes["target_session_attrs"] == "read-write"
    reads = conninfo_to_dict(cluster.read_database_url)
    assert reads["port"] == f"{standby},{primary}"
    assert reads["target_session_attrs"] == "prefer-standby"
    assert len({node.grpc_port for node in cluster.nodes} | {cluster.listen_port}) == 4
    assert not (tmp_path / "cluster").exists()


def test_the_makefile_and_the_guide_say_how_to_run_the_cluster() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "\ncluster: " in makefile and "-m cluster.run" in makefile
    assert "\ncluster-test: " in makefile and "pytest cluster/tests" in makefile
    guide = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    for words in ("make cluster", "make cluster-test", "pg_ctl promote", "target_session_attrs"):
        assert words in guide, words

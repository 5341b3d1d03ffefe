"""`/ready` and `/live` on the metrics port answer what the gRPC health service answers, asked on
the server's loop: for health checkers that speak HTTP only (HAProxy 2.6 cannot send a gRPC
health check's body; cluster/haproxy.py)."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from api_client import Api
from grpc_health.v1 import health, health_pb2
from test_standby_reads import serve
from test_two_processes import free_port

from sapsam.api.metrics_endpoint import (
    LIVE_PATH,
    READY_PATH,
    READY_SERVICE,
    MetricsEndpoint,
    MetricsSources,
)
from sapsam.api.stuck_tables_health import StuckTablesGauge

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture
async def endpoint() -> AsyncIterator[MetricsEndpoint]:
    # No pool: only /metrics reads it, and these tests do not scrape.
    served = MetricsEndpoint("127.0.0.1:0", MetricsSources(None, StuckTablesGauge()), lambda: 0)  # type: ignore[arg-type]
    served.start()
    try:
        yield served
    finally:
        await served.stop()


async def test_ready_and_live_follow_the_health_service(endpoint: MetricsEndpoint) -> None:
    port = endpoint.port
    assert await asyncio.to_thread(get, port, READY_PATH) == (503, "STARTING\n")
    servicer = health.aio.HealthServicer()
    await servicer.set(READY_SERVICE, SERVING)
    endpoint.serving.attach(servicer)
    assert await asyncio.to_thread(get, port, READY_PATH) == (200, "SERVING\n")
    assert await asyncio.to_thread(get, port, LIVE_PATH) == (200, "SERVING\n")
    assert await asyncio.to_thread(get, port, READY_PATH + "?anything") == (200, "SERVING\n")
    await servicer.set(READY_SERVICE, NOT_SERVING)
    assert await asyncio.to_thread(get, port, READY_PATH) == (503, "NOT_SERVING\n")
    assert await asyncio.to_thread(get, port, LIVE_PATH) == (200, "SERVING\n")
    await servicer.set(READY_SERVICE, SERVING)
    await servicer.enter_graceful_shutdown()  # the first thing a graceful stop does
    assert await asyncio.to_thread(get, port, READY_PATH) == (503, "NOT_SERVING\n")
    assert await asyncio.to_thread(get, port, LIVE_PATH) == (503, "NOT_SERVING\n")
    status, text = await asyncio.to_thread(get, port, "/healthz")
    assert status == 404 and "/ready" in text


async def test_a_service_the_health_servicer_does_not_know_is_not_ready(
    endpoint: MetricsEndpoint,
) -> None:
    servicer = health.aio.HealthServicer()  # knows "" only
    endpoint.serving.attach(servicer)
    assert await asyncio.to_thread(get, endpoint.port, READY_PATH) == (503, "SERVICE_UNKNOWN\n")
    assert await asyncio.to_thread(get, endpoint.port, LIVE_PATH) == (200, "SERVING\n")


def test_a_loop_that_does_not_answer_is_neither_ready_nor_live() -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    endpoint = MetricsEndpoint("127.0.0.1:0", MetricsSources(None, StuckTablesGauge()), lambda: 0)  # type: ignore[arg-type]

    async def attach() -> None:
        servicer = health.aio.HealthServicer()
        await servicer.set(READY_SERVICE, SERVING)
        endpoint.serving.attach(servicer)

    asyncio.run_coroutine_threadsafe(attach(), loop).result(5)
    assert endpoint.serving.status(READY_SERVICE) == "SERVING"
    loop.call_soon_threadsafe(time.sleep, 1.0)  # the loop is stuck for a second
    time.sleep(0.05)
    assert endpoint.serving.status(READY_SERVICE, timeout=0.2) == "NOT_ANSWERING"
    time.sleep(1.0)
    assert endpoint.serving.status(READY_SERVICE) == "SERVING"
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()
    assert endpoint.serving.status(READY_SERVICE) == "STOPPED"


def test_a_draining_server_is_not_ready_but_still_serves_calls(
    database_url: str, tmp_path: Path
) -> None:
    """`--drain-seconds`: on SIGTERM /ready says 503 at once, calls are still served for that
    long (a balancer checking /ready takes the process out meanwhile), then it stops."""
    metrics_port = free_port()
    process, port = serve(
        database_url,
        tmp_path,
        "--drain-seconds",
        "3",
        "--metrics-listen",
        f"127.0.0.1:{metrics_port}",
    )
    try:
        assert get(metrics_port, READY_PATH) == (200, "SERVING\n")
        process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        while get(metrics_port, READY_PATH)[0] != 503:
            assert time.monotonic() - signalled < 2.5, "/ready never said 503"
            time.sleep(0.05)
        assert get(metrics_port, READY_PATH) == (503, "NOT_SERVING\n")
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            # A call that writes, answered while draining (once stopping, it would be refused).
            api = Api(channel, database_url)
            assert api.register("late caller").token
        assert process.wait(60) == 0
        assert time.monotonic() - signalled >= 3.0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

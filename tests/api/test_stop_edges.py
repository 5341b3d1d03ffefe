"""The stop's edges, on a grpc.aio server on a socket with the real interceptors (status, call
log, stop, errors) around a handful of plain handlers: a fault during the grace period stays
INTERNAL; a unary call still running at the cut-off is answered SERVER_STOPPING, not CANCELLED;
a stream that ends on its own during the stop ends OK; and the call log records a stream that
reached its deadline as DEADLINE_EXCEEDED, not CANCELLED."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest
from api_client import error_reason
from grpc import aio

from sapsam.api.call_log import LOGGER_NAME, CallLogInterceptor
from sapsam.api.interception import ErrorInterceptor, StatusSender
from sapsam.api.stopping import StopGate, StoppingInterceptor

SERVICE = "sapsam.test.Stop"


class Handlers:
    """The plain handlers, each told the gate (the test's stand-in for the server's stop)."""

    def __init__(self, gate: StopGate) -> None:
        self.gate = gate
        self.started = asyncio.Event()

    async def fail_while_stopping(self, request: bytes, context: Any) -> bytes:
        self.gate.begin_stop(60)
        raise RuntimeError("a real fault")

    async def wait_forever(self, request: bytes, context: Any) -> bytes:
        self.started.set()
        await asyncio.Event().wait()
        return b""

    async def end_during_stop(self, request: bytes, context: Any) -> AsyncIterator[bytes]:
        yield b"one"
        self.gate.begin_stop(60)
        yield b"last"

    async def until_deadline(self, request: bytes, context: Any) -> AsyncIterator[bytes]:
        yield b"one"
        await asyncio.Event().wait()


def _serving(
    body: Callable[[aio.Channel, Handlers], Awaitable[None]],
) -> None:
    async def run() -> None:
        gate = StopGate()
        handlers = Handlers(gate)
        server = aio.server(
            interceptors=(
                StatusSender(),
                CallLogInterceptor(),
                StoppingInterceptor(gate),
                ErrorInterceptor(),
            )
        )
        server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    SERVICE,
                    {
                        "Fail": grpc.unary_unary_rpc_method_handler(handlers.fail_while_stopping),
                        "Wait": grpc.unary_unary_rpc_method_handler(handlers.wait_forever),
                        "Ends": grpc.unary_stream_rpc_method_handler(handlers.end_during_stop),
                        "Lasts": grpc.unary_stream_rpc_method_handler(handlers.until_deadline),
                    },
                ),
            )
        )
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                await body(channel, handlers)
        finally:
            await server.stop(0)

    asyncio.run(run())


def test_a_fault_during_the_grace_period_stays_internal() -> None:
    async def body(channel: aio.Channel, handlers: Handlers) -> None:
        with pytest.raises(aio.AioRpcError) as raised:
            await channel.unary_unary(f"/{SERVICE}/Fail")(b"", timeout=10)
        assert error_reason(raised.value)[:2] == (grpc.StatusCode.INTERNAL, "INTERNAL")

    _serving(body)


def test_a_unary_call_running_at_the_cut_off_is_answered_server_stopping() -> None:
    async def body(channel: aio.Channel, handlers: Handlers) -> None:
        call = asyncio.ensure_future(channel.unary_unary(f"/{SERVICE}/Wait")(b"", timeout=10))
        await asyncio.wait_for(handlers.started.wait(), 10)
        handlers.gate.begin_stop(0)  # the cut-off is now; the server cuts off what runs
        assert handlers.gate.cut_off_unary_calls() == 1
        with pytest.raises(aio.AioRpcError) as raised:
            await call
        assert error_reason(raised.value)[:2] == (grpc.StatusCode.UNAVAILABLE, "SERVER_STOPPING")

    _serving(body)


def test_a_stream_that_ends_on_its_own_during_the_stop_ends_ok() -> None:
    async def body(channel: aio.Channel, handlers: Handlers) -> None:
        call = channel.unary_stream(f"/{SERVICE}/Ends")(b"", timeout=10)
        assert [response async for response in call] == [b"one", b"last"]
        assert await call.code() == grpc.StatusCode.OK

    _serving(body)


def test_the_call_log_records_a_stream_that_reached_its_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def body(channel: aio.Channel, handlers: Handlers) -> None:
        call = channel.unary_stream(f"/{SERVICE}/Lasts")(b"", timeout=0.5)
        with pytest.raises(aio.AioRpcError) as raised:
            async for _ in call:
                pass
        assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        for _ in range(100):  # the server logs the call once its task ends
            if any(record.name == LOGGER_NAME for record in caplog.records):
                break
            await asyncio.sleep(0.02)

    with caplog.at_level("INFO", LOGGER_NAME):
        _serving(body)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == LOGGER_NAME]
    assert [line["status"] for line in lines] == ["DEADLINE_EXCEEDED"]

"""grpc.aio runs every interceptor's intercept_service on every call: the chain must not build its
handlers again each time (sapsam.api.interception.CallInterceptor keeps them per method)."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from sapsam.api.call_log import CallLogInterceptor
from sapsam.api.interception import CallInterceptor, ErrorInterceptor, StatusSender


async def _echo(request: Any, context: Any) -> Any:
    return request


async def _stream(request: Any, context: Any) -> Any:
    yield request


class _Details:
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


async def _handler_through(
    chain: list[CallInterceptor], served: grpc.RpcMethodHandler, method: str
) -> grpc.RpcMethodHandler | None:
    """What grpc.aio finds for ``method``: the first interceptor, continuing to the next."""

    async def step(index: int, details: Any) -> grpc.RpcMethodHandler | None:
        if index == len(chain):
            return served
        return await chain[index].intercept_service(lambda inner: step(index + 1, inner), details)

    return await step(0, _Details(method))


def test_each_call_gets_the_handler_built_for_its_method_once() -> None:
    chain: list[CallInterceptor] = [StatusSender(), CallLogInterceptor(), ErrorInterceptor()]
    unary = grpc.unary_unary_rpc_method_handler(_echo)
    stream = grpc.unary_stream_rpc_method_handler(_stream)

    async def run() -> None:
        first = await _handler_through(chain, unary, "/t.S/Get")
        again = await _handler_through(chain, unary, "/t.S/Get")
        assert first is not None and first is again
        assert first.unary_unary is not _echo  # wrapped, not bypassed
        streamed = await _handler_through(chain, stream, "/t.S/Watch")
        assert streamed is not None and streamed is not first
        assert streamed is await _handler_through(chain, stream, "/t.S/Watch")
        # Another handler for the method (a server re-registered) is wrapped afresh.
        other = grpc.unary_unary_rpc_method_handler(_echo)
        rewrapped = await _handler_through(chain, other, "/t.S/Get")
        assert rewrapped is not None and rewrapped is not first

    asyncio.run(run())


def test_an_unknown_method_stays_unknown() -> None:
    interceptor = ErrorInterceptor()

    async def none(details: Any) -> None:
        return None

    assert asyncio.run(interceptor.intercept_service(none, _Details("/t.S/Nope"))) is None

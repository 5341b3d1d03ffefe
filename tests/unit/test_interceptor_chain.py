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


class _Written:
    """What a stream's coroutine writes to (``grpc.aio.ServicerContext.write``)."""

    def __init__(self) -> None:
        self.responses: list[Any] = []

    async def write(self, response: Any) -> None:
        self.responses.append(response)


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


class _Recording(CallInterceptor):
    """Records its stream hooks in ``seen``; ``replace`` turns an error it sees into another."""

    def __init__(self, name: str, seen: list[str], replace: bool = False) -> None:
        super().__init__()
        self.name, self.seen, self.replace = name, seen, replace

    async def around(self, method: str, request: Any, context: Any, proceed: Any) -> Any:
        return await proceed()

    async def stream_opening(self, method: str, request: Any, context: Any) -> Any:
        self.seen.append(f"open {self.name}")
        return self.name

    async def stream_ended(
        self, method: str, request: Any, context: Any, opened: Any, error: BaseException | None
    ) -> None:
        self.seen.append(f"end {opened} {type(error).__name__}")
        if self.replace and isinstance(error, ValueError):
            raise KeyError(self.name)


async def _failing_stream(request: Any, context: Any) -> Any:
    yield request
    raise ValueError("the servicer's")


def test_a_stream_opens_outermost_first_and_ends_innermost_first_each_seeing_the_last_error() -> (
    None
):
    seen: list[str] = []
    chain: list[CallInterceptor] = [
        _Recording("outer", seen),
        _Recording("middle", seen, replace=True),
        _Recording("inner", seen),
    ]

    async def run() -> list[Any]:
        handler = await _handler_through(
            chain, grpc.unary_stream_rpc_method_handler(_failing_stream), "/t.S/Watch"
        )
        assert handler is not None
        written = _Written()
        try:
            await handler.unary_stream("hello", written)
        except KeyError as error:
            written.responses.append(error)
        return written.responses

    received = asyncio.run(run())
    assert received[0] == "hello"
    assert isinstance(received[1], KeyError) and received[1].args == ("middle",)
    assert seen == [
        "open outer",
        "open middle",
        "open inner",
        "end inner ValueError",
        "end middle ValueError",
        "end outer KeyError",
    ]


class _Refusing(_Recording):
    async def stream_opening(self, method: str, request: Any, context: Any) -> Any:
        self.seen.append(f"refuse {self.name}")
        raise PermissionError(self.name)


def test_a_stream_refused_on_opening_ends_only_what_opened_before() -> None:
    seen: list[str] = []
    chain: list[CallInterceptor] = [_Recording("outer", seen), _Refusing("inner", seen)]

    async def run() -> None:
        handler = await _handler_through(
            chain, grpc.unary_stream_rpc_method_handler(_failing_stream), "/t.S/Watch"
        )
        assert handler is not None
        written = _Written()
        try:
            await handler.unary_stream("hello", written)
        finally:
            assert written.responses == []  # a refused stream sends nothing

    try:
        asyncio.run(run())
    except PermissionError as error:
        assert error.args == ("inner",)
    else:
        raise AssertionError("the refusal did not end the stream")
    assert seen == ["open outer", "refuse inner", "end outer PermissionError"]


class _Gone(_Written):
    """A call grpc can no longer write to (the client left)."""

    async def write(self, response: Any) -> None:
        raise ConnectionError("the call is over")


def test_a_response_that_cannot_be_written_ends_the_stream_as_a_stopped_generator() -> None:
    seen: list[str] = []
    chain: list[CallInterceptor] = [_Recording("outer", seen), _Recording("inner", seen)]

    async def run() -> None:
        handler = await _handler_through(
            chain, grpc.unary_stream_rpc_method_handler(_failing_stream), "/t.S/Watch"
        )
        assert handler is not None
        await handler.unary_stream("hello", _Gone())

    try:
        asyncio.run(run())
    except ConnectionError:
        pass  # grpc is given the write's own error, as when it wrote the response itself
    else:
        raise AssertionError("the write's error was lost")
    assert seen[-2:] == ["end inner GeneratorExit", "end outer GeneratorExit"]

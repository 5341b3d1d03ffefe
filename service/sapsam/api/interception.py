"""A base for the asyncio server's interceptors, and how a call's status travels out of them.

grpc's ``grpc.aio.ServerInterceptor`` only sees the method name and metadata before a handler is
chosen; to act on the request, the servicer context and the outcome, an interceptor has to wrap
the handler's behaviour. :class:`CallInterceptor` does that once for both call shapes we serve
(one response, a response stream), so each interceptor implements just ``around`` and
``around_stream``. They run in the call's own task, so a context variable set in ``around`` is
visible to the servicer (and, through ``sapsam.api.blocking``, to its synchronous part).

A status travels as an exception, :class:`StatusError`, and only :class:`StatusSender`, the
outermost interceptor, sends it: grpc.aio sends a status the moment ``context.abort`` is called
and refuses a second one, while an outer interceptor must still be able to change the answer
(the stop turns a call it cut off into SERVER_STOPPING) and the call log must see it.

The innermost wrapper also bridges servicer methods that are still synchronous: a plain ``def``
runs on the blocking bridge, a generator is drained through it (``sapsam.api.blocking``); an
``async def`` or an async generator runs on the loop.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from grpc import aio

from sapsam.api import errors
from sapsam.api.blocking import iterate_blocking, run_blocking

Proceed = Callable[[], Awaitable[Any]]
ProceedStream = Callable[[], AsyncIterator[Any]]
Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]]


@dataclass(frozen=True)
class PlainStatus(grpc.Status):  # type: ignore[misc]
    """A status without details, for what grpc or a generated base class decided itself."""

    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str], ...] = ()


class StatusError(Exception):
    """The call ends with ``status``; :class:`StatusSender` sends it."""

    def __init__(self, status: grpc.Status) -> None:
        super().__init__(f"{status.code.name}: {status.details}")
        self.status = status

    @property
    def code(self) -> grpc.StatusCode:
        """The status code the call ends with."""
        code: grpc.StatusCode = self.status.code
        return code


def ended_with(error: BaseException, context: aio.ServicerContext) -> grpc.StatusCode:
    """The status code a call that raised ``error`` ends with (so far)."""
    if isinstance(error, StatusError):
        return error.code
    if isinstance(error, aio.AbortError):  # a servicer aborted by itself: the status is sent
        code: grpc.StatusCode | None = context.code()
        return code or grpc.StatusCode.UNKNOWN
    return grpc.StatusCode.UNKNOWN


async def _awaited(handler: Callable[..., Any], request: Any, context: Any) -> Any:
    if inspect.iscoroutinefunction(handler):
        return await handler(request, context)
    return await run_blocking(handler, request, context)  # a synchronous servicer method


def _streamed(handler: Callable[..., Any], request: Any, context: Any) -> AsyncIterator[Any]:
    if inspect.isasyncgenfunction(handler):
        responses: AsyncIterator[Any] = handler(request, context)
        return responses
    if inspect.iscoroutinefunction(handler):  # grpc.aio's write() style (health's Watch)
        return _written(handler, request, context)
    return iterate_blocking(handler, request, context)  # a synchronous generator


async def _written(handler: Callable[..., Any], request: Any, context: Any) -> AsyncIterator[Any]:
    """A handler that sends its responses itself (``context.write``), as a stream of none."""
    await handler(request, context)
    return
    yield  # an async generator that yields nothing


class CallInterceptor(aio.ServerInterceptor, abc.ABC):  # type: ignore[misc]
    """Runs :meth:`around` or :meth:`around_stream` around every call's behaviour."""

    @abc.abstractmethod
    async def around(
        self, method: str, request: Any, context: aio.ServicerContext, proceed: Proceed
    ) -> Any:
        """Run the call (``await proceed()``) and return its single response."""

    @abc.abstractmethod
    def around_stream(
        self,
        method: str,
        request: Any,
        context: aio.ServicerContext,
        proceed: ProceedStream,
    ) -> AsyncIterator[Any]:
        """Run a response-streaming call (``proceed()``), yielding its responses (an async
        generator)."""

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        """Wrap the chosen handler's behaviour; unknown methods stay unknown (UNIMPLEMENTED)."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        codecs = {
            "request_deserializer": handler.request_deserializer,
            "response_serializer": handler.response_serializer,
        }
        if handler.request_streaming and handler.response_streaming:
            # grpc's reflection (async); sapsam itself serves no request streams.
            inner_bidi = handler.stream_stream

            async def bidi(requests: Any, context: aio.ServicerContext) -> AsyncIterator[Any]:
                responses = self.around_stream(
                    method, requests, context, lambda: _streamed(inner_bidi, requests, context)
                )
                async for response in responses:
                    yield response

            return grpc.stream_stream_rpc_method_handler(bidi, **codecs)
        if handler.request_streaming:
            raise TypeError(f"{method}: sapsam serves no request streams")
        if handler.response_streaming:
            inner_stream = handler.unary_stream

            async def streamed(request: Any, context: aio.ServicerContext) -> AsyncIterator[Any]:
                responses = self.around_stream(
                    method, request, context, lambda: _streamed(inner_stream, request, context)
                )
                async for response in responses:
                    yield response

            return grpc.unary_stream_rpc_method_handler(streamed, **codecs)
        inner = handler.unary_unary

        async def single(request: Any, context: aio.ServicerContext) -> Any:
            return await self.around(
                method, request, context, lambda: _awaited(inner, request, context)
            )

        return grpc.unary_unary_rpc_method_handler(single, **codecs)


class StatusSender(CallInterceptor):
    """The outermost interceptor: sends the status the layers inside decided.

    A :class:`StatusError` is sent as it is; any other exception that got this far is mapped
    (``errors.status_for_exception``: ErrorInfo always, INTERNAL for the unexpected); a status a
    servicer sent itself (``context.abort``) stands.
    """

    async def _send(self, method: str, error: Exception, context: aio.ServicerContext) -> None:
        if isinstance(error, aio.AbortError):
            raise error
        status = (
            error.status
            if isinstance(error, StatusError)
            else errors.status_for_exception(error, method)
        )
        await context.abort_with_status(status)

    async def around(
        self, method: str, request: Any, context: aio.ServicerContext, proceed: Proceed
    ) -> Any:
        """Run the call; send the status it ended with."""
        try:
            return await proceed()
        except Exception as error:
            await self._send(method, error, context)

    async def around_stream(
        self,
        method: str,
        request: Any,
        context: aio.ServicerContext,
        proceed: ProceedStream,
    ) -> AsyncIterator[Any]:
        """Stream the call's responses; send the status it ended with."""
        try:
            async for response in proceed():
                yield response
        except Exception as error:
            await self._send(method, error, context)


class ErrorInterceptor(CallInterceptor):
    """The innermost interceptor: whatever a servicer raises becomes the status
    ``errors.status_for_exception`` gives it (a :class:`StatusError`)."""

    def _mapped(self, method: str, error: Exception, context: aio.ServicerContext) -> StatusError:
        if isinstance(error, StatusError):
            return error
        # The generated base servicer sets UNIMPLEMENTED before raising NotImplementedError;
        # that status stands.
        code = context.code()
        if code is not None and code != grpc.StatusCode.OK:
            return StatusError(PlainStatus(code, str(context.details() or "")))
        return StatusError(errors.status_for_exception(error, method))

    async def around(
        self, method: str, request: Any, context: aio.ServicerContext, proceed: Proceed
    ) -> Any:
        """Run the call; an exception becomes its mapped status."""
        try:
            return await proceed()
        except aio.AbortError:
            raise
        except Exception as error:
            raise self._mapped(method, error, context) from None

    async def around_stream(
        self, method: str, request: Any, context: aio.ServicerContext, proceed: ProceedStream
    ) -> AsyncIterator[Any]:
        """Stream the call's responses; an exception ends the stream with its mapped status."""
        try:
            async for response in proceed():
                yield response
        except aio.AbortError:
            raise
        except Exception as error:
            raise self._mapped(method, error, context) from None

"""A base for the asyncio server's interceptors, and how a call's status travels out of them.

grpc's ``grpc.aio.ServerInterceptor`` only sees the method name and metadata before a handler is
chosen; to act on the request, the servicer context and the outcome, an interceptor has to wrap
the handler's behaviour. :class:`CallInterceptor` does that once for both call shapes we serve
(one response, a response stream), so each interceptor implements just ``around`` and, for
streams, ``stream_opening`` and ``stream_ended``. They run in the call's own task, so a context
variable set in ``around`` or ``stream_opening`` is visible to the servicer.

A stream's interceptors are plain calls made by the one coroutine that drains the servicer's
stream and writes its responses, not a context manager each: every open stream kept each
interceptor's context manager, its generator, its exit method and its arguments alive for as
long as it stayed open, about forty objects a stream that every full collection walks
(docs/performance.md, "bench/capacity.py").

A status travels as an exception, :class:`StatusError`, and only :class:`StatusSender`, the
outermost interceptor, sends it: grpc.aio sends a status the moment ``context.abort`` is called
and refuses a second one, while an outer interceptor must still be able to change the answer
(the stop turns a call it cut off into SERVER_STOPPING) and the call log must see it.

Every servicer method runs on the loop: an ``async def`` is awaited, an async generator drained;
a plain ``def`` is simply called: one that returns an async iterator (``WatchTable``: the stream
it made, one generator less per response) has that drained, any other (no I/O, as a test's stub)
is iterated.
"""

from __future__ import annotations

import abc
import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from grpc import aio

from sapsam.api import errors

Proceed = Callable[[], Awaitable[Any]]
_GUARDED = "_sapsam_guarded_stream"  # on a guarded stream: its interceptors and the servicer's
Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]]
_TOLERANT = "_sapsam_tolerant_deserializer"  # on a deserializer already wrapped by ``_tolerant``


class UndecodableRequest:
    """The request grpc hands over when its bytes were not the method's message (see
    :func:`_tolerant`); :class:`ErrorInterceptor` answers it INVALID_ARGUMENT."""


UNDECODABLE: Any = UndecodableRequest()


def _tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """``deserializer``, returning :data:`UNDECODABLE` where it would raise.

    grpc.aio decodes the request before any interceptor runs and answers a failure UNKNOWN,
    without ErrorInfo, an entry in the call log, authentication or limits; with the failure
    turned into a value, the call passes every interceptor like any other and is refused inside.
    """
    if deserializer is None or getattr(deserializer, _TOLERANT, False):
        return deserializer
    decode = deserializer

    def tolerant(data: bytes) -> Any:
        try:
            return decode(data)
        except Exception:  # whatever the bytes make the parser raise, the client sent them
            return UNDECODABLE

    setattr(tolerant, _TOLERANT, True)
    return tolerant


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
    return handler(request, context)  # a synchronous method: no I/O, nothing to wait for


def _streamed(handler: Callable[..., Any], request: Any, context: Any) -> AsyncIterator[Any]:
    if inspect.isasyncgenfunction(handler):
        responses: AsyncIterator[Any] = handler(request, context)
        return responses
    if inspect.iscoroutinefunction(handler):  # grpc.aio's write() style (health's Watch)
        return _written(handler, request, context)
    made = handler(request, context)
    if hasattr(made, "__aiter__"):  # a plain method that returns the stream it made (WatchTable)
        stream: AsyncIterator[Any] = made
        return stream
    return _iterated(made)  # a synchronous generator: no I/O


async def _iterated(responses: Any) -> AsyncIterator[Any]:
    for response in responses:
        yield response


async def _written(handler: Callable[..., Any], request: Any, context: Any) -> AsyncIterator[Any]:
    """A handler that sends its responses itself (``context.write``), as a stream of none."""
    await handler(request, context)
    return
    yield  # an async generator that yields nothing


class CallInterceptor(aio.ServerInterceptor, abc.ABC):  # type: ignore[misc]
    """Runs :meth:`around` around every unary call, :meth:`guard_stream` around every stream."""

    @abc.abstractmethod
    async def around(
        self, method: str, request: Any, context: aio.ServicerContext, proceed: Proceed
    ) -> Any:
        """Run the call (``await proceed()``) and return its single response."""

    async def stream_opening(self, method: str, request: Any, context: aio.ServicerContext) -> Any:
        """Before a response stream's first response: raise to refuse it. What it returns is
        handed to :meth:`stream_ended` (what to undo; here nothing)."""
        return None

    async def stream_ended(
        self,
        method: str,
        request: Any,
        context: aio.ServicerContext,
        opened: Any,
        error: BaseException | None,
    ) -> None:
        """After a stream this interceptor opened (``opened``: what :meth:`stream_opening`
        returned) ended: ``error`` None if it ended normally, else what it raised (as the
        interceptors inside left it). Raise to end it with another exception instead; returning
        lets ``error`` (or the normal end) stand."""

    @contextlib.asynccontextmanager
    async def guard_stream(
        self, method: str, request: Any, context: aio.ServicerContext
    ) -> AsyncIterator[None]:
        """:meth:`stream_opening` and :meth:`stream_ended` as a context manager around a stream
        (for servers that enter each interceptor by itself: the Connect one)."""
        opened = await self.stream_opening(method, request, context)
        try:
            yield
        except BaseException as error:
            await self.stream_ended(method, request, context, opened, error)
            raise
        await self.stream_ended(method, request, context, opened, None)

    def __init__(self) -> None:
        # grpc.aio runs intercept_service on every call: the handler wrapped for a method is
        # kept, keyed by the method and the inner handler it wraps (each layer keeps its own,
        # so the inner one is the same object on every call). Only served methods get here.
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        """Wrap the chosen handler's behaviour; unknown methods stay unknown (UNIMPLEMENTED)."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        kept = self._wrapped.get(method)
        if kept is not None and kept[0] is handler:
            return kept[1]
        wrapped = self._wrap(method, handler)
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        codecs = {
            "request_deserializer": _tolerant(handler.request_deserializer),
            "response_serializer": handler.response_serializer,
        }
        if handler.request_streaming and not handler.response_streaming:
            raise TypeError(f"{method}: sapsam serves no request streams")
        if handler.response_streaming:
            # grpc's reflection streams requests too (async); sapsam itself does not.
            inner_stream = (
                handler.stream_stream if handler.request_streaming else handler.unary_stream
            )
            streamed = self._guarded(method, inner_stream)
            if handler.request_streaming:
                return grpc.stream_stream_rpc_method_handler(streamed, **codecs)
            return grpc.unary_stream_rpc_method_handler(streamed, **codecs)
        inner = handler.unary_unary

        async def single(request: Any, context: aio.ServicerContext) -> Any:
            return await self.around(
                method, request, context, lambda: _awaited(inner, request, context)
            )

        return grpc.unary_unary_rpc_method_handler(single, **codecs)

    def _guarded(self, method: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        """The stream ``inner`` run by one coroutine that opens it through this interceptor and
        those inside it (outermost first), writes its responses (``context.write``) and, once it
        ends, tells them so (innermost first, each seeing the exception as the ones inside left
        it): a response passes one layer, not one per interceptor; an open stream keeps no
        object per interceptor but what its ``stream_opening`` returned; and grpc awaits the
        coroutine instead of iterating a generator (one ``asend`` fewer per response and
        waiting stream).

        A response grpc could not write (the call is over: the client left) ends the stream for
        the interceptors as a generator that grpc stopped iterating would (``GeneratorExit``),
        and grpc is given its error, as when it wrote the response itself."""
        inner_layers, source = getattr(inner, _GUARDED, ((), inner))
        layers: tuple[CallInterceptor, ...] = (self, *inner_layers)  # outermost first

        async def streamed(request: Any, context: aio.ServicerContext) -> None:
            opened: list[Any] = []  # what each interceptor opened, outermost first
            raised: BaseException | None = None
            unwritten: BaseException | None = None
            try:
                for layer in layers:
                    opened.append(await layer.stream_opening(method, request, context))
                async for response in _streamed(source, request, context):
                    try:
                        await context.write(response)
                    except BaseException as error:
                        unwritten = error
                        break
            except BaseException as error:  # the interceptors decide what it ends with
                raised = error
            if unwritten is not None:
                raised = GeneratorExit()
            for index in range(len(opened) - 1, -1, -1):
                try:
                    await layers[index].stream_ended(
                        method, request, context, opened[index], raised
                    )
                except BaseException as replaced:
                    raised = replaced
            if unwritten is not None:
                raised = unwritten
            if raised is not None:
                try:
                    raise raised
                finally:
                    raised = unwritten = None  # no cycle through this frame's traceback

        setattr(streamed, _GUARDED, (layers, source))
        return streamed


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

    async def stream_ended(
        self,
        method: str,
        request: Any,
        context: aio.ServicerContext,
        opened: Any,
        error: BaseException | None,
    ) -> None:
        """Send the status the stream ended with."""
        if isinstance(error, Exception):
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

    def _refuse_undecodable(self, method: str, request: Any) -> None:
        if request is UNDECODABLE:
            raise StatusError(
                errors.status_for_exception(
                    errors.ApiError(
                        "INVALID_ARGUMENT",
                        f"the request is not a valid {method.rsplit('/', 1)[-1]} request message",
                        field="",
                    ),
                    method,
                )
            )

    async def around(
        self, method: str, request: Any, context: aio.ServicerContext, proceed: Proceed
    ) -> Any:
        """Run the call; an exception becomes its mapped status."""
        self._refuse_undecodable(method, request)
        try:
            return await proceed()
        except aio.AbortError:
            raise
        except Exception as error:
            raise self._mapped(method, error, context) from None

    async def stream_opening(self, method: str, request: Any, context: aio.ServicerContext) -> Any:
        """Refuse a request that could not be decoded."""
        self._refuse_undecodable(method, request)

    async def stream_ended(
        self,
        method: str,
        request: Any,
        context: aio.ServicerContext,
        opened: Any,
        error: BaseException | None,
    ) -> None:
        """An exception ends the stream with its mapped status."""
        if isinstance(error, Exception) and not isinstance(error, aio.AbortError):
            raise self._mapped(method, error, context) from None
